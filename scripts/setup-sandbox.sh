#!/usr/bin/env bash
# Sandboxes for the code verifier: a Docker engine with the sandbox images, and bubblewrap.
# Idempotent and non-interactive: installs what is missing, starts dockerd if no engine
# answers (no bridge, no iptables: every sandbox container runs with NetworkMode none), and
# builds the python and cpp images (`--lang all` or `--lang java,go` as arguments: those too),
# skipping images that already exist.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
LOG_DIR=${ASSAY_LOG_DIR:-/var/log/assay}

need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
command -v prlimit >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1 && command -v flock >/dev/null 2>&1 || need+=(util-linux) # prlimit; unshare and flock build the image layers
command -v openssl >/dev/null 2>&1 || need+=(openssl)  # scripts/docker2.sh: the test engine's TLS certificates
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)  # deploy/compose.yaml and tests/compose.test.ts
# libseccomp for Debian's python3: the bwrap backend builds its seccomp filter with it.
/usr/bin/python3 -c 'import seccomp' >/dev/null 2>&1 || need+=(python3-seccomp)
if ((${#need[@]})); then
  echo "setup-sandbox: installing ${need[*]}"
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${need[@]}"
fi

engine_up() { docker info >/dev/null 2>&1; }
start_dockerd() {
  mkdir -p "$LOG_DIR"
  nohup dockerd --bridge=none --iptables=false --ip-forward=false --ip-masq=false "$@" \
    >"$LOG_DIR/dockerd.log" 2>&1 &
  for _ in $(seq 1 120); do engine_up && return 0; sleep 0.5; done
  return 1
}
if ! engine_up; then
  echo "setup-sandbox: starting dockerd (log: $LOG_DIR/dockerd.log)"
  if ! start_dockerd; then
    echo "setup-sandbox: dockerd did not start with the default storage driver; trying vfs" >&2
    stale_pid=$(cat /var/run/docker.pid 2>/dev/null || true)
    if [ -n "$stale_pid" ]; then kill "$stale_pid" 2>/dev/null || true; sleep 2; fi
    start_dockerd --storage-driver=vfs || { tail -20 "$LOG_DIR/dockerd.log" >&2; exit 1; }
  fi
fi

# Containers' CPU share against the host's own processes. With the cgroupfs driver every
# container sits under one `docker` cgroup, which by default weighs as much as ONE host process:
# with 8 busy host processes on 2 cores, all containers together got about 1/9 of the CPU and
# programs near their limit were held off the CPU long enough to be null (tests/busy-machine.test.ts).
# Ten host processes' worth keeps sandboxed programs running on a busy host; their time limits
# count their own CPU time either way (sandbox/README.md#time-limits). Made before the first
# container, so docker uses this cgroup as it finds it.
docker_cpu_weight() {
  if [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then # cgroup v1
    mkdir -p /sys/fs/cgroup/cpu/docker && echo 10240 >/sys/fs/cgroup/cpu/docker/cpu.shares
  elif [ -f /sys/fs/cgroup/cgroup.controllers ] && [ -w /sys/fs/cgroup ]; then # cgroup v2
    mkdir -p /sys/fs/cgroup/docker && echo 1000 >/sys/fs/cgroup/docker/cpu.weight
  else
    return 1
  fi
}
docker_cpu_weight 2>/dev/null && echo "setup-sandbox: the docker cgroup weighs 10 host processes (CPU share under load)" \
  || echo "setup-sandbox: could not set the docker cgroup's CPU weight; under heavy host load containers get little CPU (sandbox/README.md#time-limits)" >&2

# The sandbox images: by default python and cpp (what the README's examples and the default
# verifiers need); `bash scripts/setup.sh --lang all` (CI: .ci/run) or `--lang java,go` for more,
# or later `node dist/src/cli/main.js sandbox build --lang all` (any arguments of this script go to
# `assay sandbox build`). One base is debootstrapped and each language image adds its packages on
# it, with one shared apt cache; an image already built is skipped. Progress: package n of m.
node dist/src/cli/main.js sandbox build "$@"
