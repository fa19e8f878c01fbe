"""
Writes the bwrap backend's seccomp filter (classic BPF, as `bwrap --seccomp FD` reads it) to the
file named by argv[1], built with libseccomp (Debian's python3-seccomp) for the host's own
architecture. libseccomp knows each architecture's syscall numbers and guards the filter with an
architecture check: a syscall made through another ABI (i386's int 0x80 or x32 on x86_64) does
not match the native architecture and kills the process.

Denied with EPERM: what a sampled program never needs and what widens the kernel's attack
surface or escapes the sandbox's namespaces: tracing other processes, eBPF, the kernel keyring,
userfaultfd (a classic race-widening primitive), perf events, mounting and pivoting, new
namespaces (unshare, setns, and clone with any CLONE_NEW* flag), kexec, kernel modules, and a
few more of the same kind. clone3 answers ENOSYS: its flags live in memory a filter cannot read,
and on ENOSYS glibc falls back to clone, whose flags the filter does check.
"""
import errno
import sys

import seccomp

DENY = [
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "bpf", "perf_event_open", "userfaultfd",
    "keyctl", "add_key", "request_key",
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr",
    "unshare", "setns",
    "kexec_load", "kexec_file_load", "reboot",
    "init_module", "finit_module", "delete_module",
    "swapon", "swapoff", "acct", "quotactl", "syslog", "lookup_dcookie",
    "open_by_handle_at", "name_to_handle_at",
    "iopl", "ioperm",
]

CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}


def build(path):
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENY:
        try:
            f.add_rule(seccomp.ERRNO(errno.EPERM), name)
        except (RuntimeError, ValueError):
            pass  # not a syscall on this architecture (iopl, ioperm exist on x86 only)
    for flag in CLONE_NEW.values():
        f.add_rule(seccomp.ERRNO(errno.EPERM), "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    with open(path, "wb") as out:
        f.export_bpf(out)


if __name__ == "__main__":
    build(sys.argv[1])
