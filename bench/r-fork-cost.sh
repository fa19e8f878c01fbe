#!/bin/sh
# What a warm R (issue 31) would save, and what stops one in the r image (sandbox/README.md's
# table of fork servers): in a one-CPU container of the newest assay-sandbox-r image, with the
# capabilities a container's runner keeps,
#  1. 100 x parallel:::mcfork, the child's mcexit, the parent's mccollect, twice: CPU per fork
#     (proc.time: the R process and its collected children) and wall;
#  2. 20 x `Rscript -e 0` from python3, twice: CPU per start (RUSAGE_CHILDREN) and wall; what
#     `Rscript --vanilla` attaches at start, and its start with and without those packages
#     (R_DEFAULT_PACKAGES=NULL): what a warm R preloading them would skip;
#  3. the run's three pipes handed over without C (parallel's closeFD(0:2), then the runner's
#     pipes opened through /proc/<runner>/fd/<n>: open() takes the lowest free descriptor);
#  4. whether R can drop to the run's uid or set a run's rlimits or session without C;
#  5. whether a run forked from a fork server of its own uid can open the server for writing
#     (/proc/<server>/mem, as uid 65534 with no capabilities).
#     sh bench/r-fork-cost.sh [image]
set -eu
IMAGE=${1:-$(docker images assay-sandbox-r --format '{{.Repository}}:{{.Tag}}' | head -1)}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W"
cat > "$W/fork.R" <<'EOF'
n <- 100
t0 <- proc.time()
for (i in 1:n) {
  p <- parallel:::mcfork()
  if (inherits(p, "masterProcess")) parallel:::mcexit(0L)
  suppressWarnings(parallel::mccollect(p))
}
d <- proc.time() - t0
cat(sprintf("fork, exit and collect: %.2f ms CPU (R %.2f + children %.2f), %.2f ms wall per fork\n",
  1000 * sum(d[c(1, 2, 4, 5)]) / n, 1000 * (d[[1]] + d[[2]]) / n, 1000 * (d[[4]] + d[[5]]) / n, 1000 * d[[3]] / n))
EOF
cat > "$W/start.py" <<'EOF'
import os, resource, subprocess, sys, time
n = int(sys.argv[1]); argv = sys.argv[2:]
r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.time()
for _ in range(n):
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
r1 = resource.getrusage(resource.RUSAGE_CHILDREN); t1 = time.time()
print("%s%s: %.1f ms CPU, %.1f ms wall per start" % ("R_DEFAULT_PACKAGES=%s " % os.environ["R_DEFAULT_PACKAGES"] if "R_DEFAULT_PACKAGES" in os.environ else "", " ".join(argv), 1000 * (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) / n, 1000 * (t1 - t0) / n))
EOF
cat > "$W/fds.R" <<'EOF'
p <- parallel:::mcfork(estranged = TRUE)
if (inherits(p, "masterProcess")) {
  parallel:::closeFD(0:2)
  i <- file(Sys.getenv("IN"), "r"); o <- file(Sys.getenv("OUT"), "w"); e <- file(Sys.getenv("ERR"), "w")
  cat("run's 0, 1, 2:", Sys.readlink(sprintf("/proc/self/fd/%d", 0:2)), "; stdin read:", readLines(file("stdin"), 1), "\n")
  system("echo a child process writes to the run stdout; echo and its stderr >&2")
  message("R message to the run's stderr")
  parallel:::mcexit(0L)
}
Sys.sleep(1.5)
EOF
cat > "$W/fds.py" <<'EOF'
import os, subprocess
r_in, w_in = os.pipe(); r_out, w_out = os.pipe(); r_err, w_err = os.pipe()
me = os.getpid()
env = dict(os.environ, IN="/proc/%d/fd/%d" % (me, r_in), OUT="/proc/%d/fd/%d" % (me, w_out), ERR="/proc/%d/fd/%d" % (me, w_err))
os.write(w_in, b"line from the runner\n")
subprocess.run(["Rscript", "/w/fds.R"], env=env, stdin=subprocess.DEVNULL, check=True)
for w in (w_in, w_out, w_err):
    os.close(w)
print("runner's stdout pipe:", os.read(r_out, 4096).decode().strip().replace("\n", " | "))
print("runner's stderr pipe:", os.read(r_err, 4096).decode().strip().replace("\n", " | "))
EOF
cat > "$W/priv.R" <<'EOF'
cat("base R functions matching setuid|setgid|setgroups|setrlimit|prlimit|setsid:",
  length(apropos("setuid|setgid|setgroups|setrlimit|prlimit|setsid", ignore.case = TRUE)), "\n")
cat("installed packages:", rownames(installed.packages()), "\n")
cat("C compiler:", nzchar(Sys.which("cc")) || nzchar(Sys.which("gcc")), "\n")
cat(".C('setuid', 65534L):", tryCatch({ .C("setuid", 65534L); "called" }, error = conditionMessage), "\n")
EOF
cat > "$W/mem.R" <<'EOF'
server <- Sys.getpid()
p <- parallel:::mcfork(estranged = TRUE)
if (inherits(p, "masterProcess")) {
  r <- tryCatch({ con <- file(sprintf("/proc/%d/mem", server), "r+b"); close(con); "opened for reading and writing" },
    error = conditionMessage, warning = conditionMessage)
  cat(sprintf("uid %s: a run forked from its server (same uid), /proc/<server>/mem: %s\n", system("id -u", intern = TRUE), r))
  parallel:::mcexit(0L)
}
Sys.sleep(1)
EOF
chmod 644 "$W"/*
CAPS="--cap-drop ALL --cap-add SETUID --cap-add SETGID --cap-add CHOWN --cap-add DAC_OVERRIDE --cap-add FOWNER --cap-add KILL"
echo "image $IMAGE; $(date -u '+%F %H:%M UTC'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
docker run --rm --cpus 1 --network none $CAPS -v "$W:/w:ro" "$IMAGE" sh -c \
  'R --version | head -1; Rscript /w/fork.R; Rscript /w/fork.R; python3 /w/start.py 20 Rscript -e 0; python3 /w/start.py 20 Rscript -e 0; Rscript --vanilla -e "cat(\"attached at start:\", search(), \"; loaded:\", loadedNamespaces(), \"\n\")"; python3 /w/start.py 20 Rscript --vanilla -e 0; R_DEFAULT_PACKAGES=NULL python3 /w/start.py 20 Rscript --vanilla -e 0; python3 /w/fds.py; Rscript /w/priv.R'
docker run --rm --cpus 1 --network none --cap-drop ALL --user 65534:65534 -v "$W:/w:ro" "$IMAGE" Rscript /w/mem.R
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
