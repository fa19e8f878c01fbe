#!/usr/bin/env bash
# The newcomer path timed on a fresh clone: npm ci, the server until /healthz answers, the first
# scores (README.md, "The first run, timed"). Heavy: a full install. Usage:
#   bash bench/first-run.sh [REPO (default: this checkout)] [PORT (default 18788)]
set -u
t() { date +%s.%N; }
REPO=${1:-$(git -C "$(dirname "$0")" rev-parse --show-toplevel)}; PORT=${2:-18788}
rm -rf /tmp/fresh /tmp/fresh-data && git clone -q "$REPO" /tmp/fresh && cd /tmp/fresh || exit 1
echo "commit $(git rev-parse --short HEAD); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
a=$(t); npm ci > /tmp/fresh-ci.log 2>&1; rc=$?; b=$(t)
echo "npm ci: rc=$rc $(echo "$b - $a" | bc) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
a=$(t); ASSAY_PORT=$PORT ASSAY_DATA_DIR=/tmp/fresh-data node dist/src/cli/main.js serve > /tmp/fresh-serve.log 2>&1 & pid=$!
for _ in $(seq 3000); do curl -sf localhost:$PORT/healthz > /dev/null && break; sleep 0.1; done; b=$(t)
echo "serve: /healthz answers after $(echo "$b - $a" | bc) s"
a=$(t); r=$(curl -s localhost:$PORT/reward -H 'content-type: application/json' -d '{"id": "q1", "verifier": "exact", "response": " Paris ", "reference": "paris"}'); b=$(t)
echo "first exact score: $(echo "$b - $a" | bc) s: $r"
a=$(t); r=$(curl -s localhost:$PORT/reward -H 'content-type: application/json' -d '{"verifier": "math", "response": "so $x = \\boxed{\\dfrac{3}{4}}$", "reference": "0.75"}'); b=$(t)
echo "first math score: $(echo "$b - $a" | bc) s: $r"
kill $pid; wait $pid 2>/dev/null
printf '%s\n' '{"verifier": "exact", "response": " Paris ", "reference": "paris"}' '{"verifier": "math", "response": "\\boxed{42}", "reference": "42"}' > /tmp/fresh-in.jsonl
a=$(t); ASSAY_DATA_DIR=/tmp/fresh-data node dist/src/cli/main.js score /tmp/fresh-in.jsonl -o /tmp/fresh-out.jsonl --no-progress > /tmp/fresh-score.log 2>&1; rc=$?; b=$(t)
echo "assay score (2 lines, in-process): rc=$rc $(echo "$b - $a" | bc) s; $(cut -c1-120 /tmp/fresh-out.jsonl | tr '\n' ' ')"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); nproc $(nproc)"
