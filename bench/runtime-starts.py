"""CPU time of one start of each interpreted runtime (sandbox/README.md's table of fork servers):
each run bare in its image's root filesystem (chroot; the newest one `assay sandbox build` left
under ASSAY_SANDBOX_ROOTFS), ten times, the children's user + system time.

    sudo python3 bench/runtime-starts.py
"""
import glob, os, re, resource, subprocess

ROOT = os.environ.get("ASSAY_SANDBOX_ROOTFS", "/var/lib/assay/rootfs")


def rootfs(image):
    dirs = [d for d in glob.glob(os.path.join(ROOT, image + "-*"))
            if re.fullmatch(re.escape(image) + r"-[0-9a-f]+", os.path.basename(d)) and os.path.exists(os.path.join(d, "usr/bin/python3"))]
    return max(dirs, key=os.path.getmtime) if dirs else None


CMDS = [("python3", "python", ["python3", "-c", "1"]), ("ruby", "scripting", ["ruby", "-e", "1"]), ("perl", "scripting", ["perl", "-e", "1"]),
        ("lua", "scripting", ["lua5.4", "-e", "x=1"]), ("php", "scripting", ["php", "-r", "1;"]), ("node", "typescript", ["node", "-e", "1"]),
        ("R", "r", ["Rscript", "--vanilla", "-e", "1"])]
for name, image, argv in CMDS:
    root = rootfs(image)
    if not root:
        print("%s: the %s image's root filesystem is not built" % (name, image))
        continue
    n = 10
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(n):
        subprocess.run(["chroot", root] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("%s: %.1f ms CPU per start (%s)" % (name, 1000 * (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) / n, os.path.basename(root)))
