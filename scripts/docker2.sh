#!/usr/bin/env bash
# A second Docker engine on this machine, for testing ASSAY_DOCKER_HOSTS (the pool spread over
# several engines): its own data root, exec root, pid file, socket and containerd namespace,
# no networking (as scripts/setup-sandbox.sh starts the first), and the python sandbox image
# loaded from the first engine. Idempotent.
#
#   bash scripts/docker2.sh start   # prints the socket: unix:///run/assay-docker2.sock
#   bash scripts/docker2.sh stop
set -euo pipefail
cd "$(dirname "$0")/.."
SOCK=/run/assay-docker2.sock
HOST=unix://$SOCK
# It also listens on TCP with mutual TLS (tcp://127.0.0.1:23760; a client's ca.pem, cert.pem and
# key.pem, as DOCKER_CERT_PATH reads them, in $TLS/client), made here with openssl: a throwaway
# CA for this test engine only.
TLS=/var/lib/assay-docker2/tls
TCP=tcp://127.0.0.1:23760
PIDFILE=/run/assay-docker2.pid
LOG_DIR=${ASSAY_LOG_DIR:-/var/log/assay}

up() { docker -H "$HOST" info >/dev/null 2>&1; }

make_tls() {
  [ -f "$TLS/client/key.pem" ] && return 0
  mkdir -p "$TLS/client"
  (
    cd "$TLS"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=assay-docker2-ca -keyout ca-key.pem -out ca.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server-key.pem -out server.csr 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' > server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 3650 -extfile server.ext -out server-cert.pem 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj /CN=assay-client -keyout client/key.pem -out client.csr 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\n' > client.ext
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 3650 -extfile client.ext -out client/cert.pem 2>/dev/null
    cp ca.pem client/ca.pem
  )
}

case "${1:-start}" in
  start)
    if ! up; then
      mkdir -p "$LOG_DIR" /var/lib/assay-docker2 /run/assay-docker2
      # The first engine's storage driver: setup-sandbox.sh falls back to vfs where overlay2
      # cannot run, and this engine would fail the same way.
      driver=$(docker info --format '{{.Driver}}' 2>/dev/null || echo overlay2)
      make_tls
      # Pid files left by an engine that did not stop (a killed machine) can name a pid that
      # another process holds now: dockerd then takes that process for its containerd and waits
      # on a socket that never comes ("timeout waiting for containerd to start").
      for f in "$PIDFILE" /run/assay-docker2/containerd/containerd.pid; do
        p=$(cat "$f" 2>/dev/null || true)
        if [ -n "$p" ] && ! tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | grep -q assay-docker2; then rm -f "$f"; fi
      done
      nohup dockerd --storage-driver "$driver" -H "$TCP" --tlsverify --tlscacert "$TLS/ca.pem" \
        --tlscert "$TLS/server-cert.pem" --tlskey "$TLS/server-key.pem" --data-root /var/lib/assay-docker2 --exec-root /run/assay-docker2 --pidfile "$PIDFILE" \
        -H "$HOST" --bridge=none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
        --containerd-namespace assay2 --containerd-plugins-namespace assay2-plugins \
        >"$LOG_DIR/dockerd2.log" 2>&1 &
      for _ in $(seq 1 120); do up && break; sleep 0.5; done
      up || { tail -20 "$LOG_DIR/dockerd2.log" >&2; exit 1; }
    fi
    # The python sandbox image (its tag is its recipe's hash), copied over from the first engine.
    tag=$(npx --no-install tsx -e 'import("./sandbox/images.js").then(m => console.log(m.imageTag(m.recipeFor("python"))))')
    if ! docker -H "$HOST" image inspect "$tag" >/dev/null 2>&1; then
      docker save "$tag" | docker -H "$HOST" load >/dev/null
    fi
    echo "$HOST"
    ;;
  stop)
    # Until the process is gone, not only its socket: it removes its pid file last, and a start
    # meanwhile would find that file and refuse.
    pid=$(cat "$PIDFILE" 2>/dev/null || true)
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
    for _ in $(seq 1 60); do
      if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then sleep 0.5; elif up; then sleep 0.5; else break; fi
    done
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
