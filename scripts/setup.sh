#!/usr/bin/env bash
# Everything a fresh machine needs before `npm test`: the README's install step and CI's.
# Idempotent: a second run skips what is already there.
#   bash scripts/setup.sh                # sandbox images for python and cpp
#   bash scripts/setup.sh --lang all     # every language's image (CI; `--lang java,go`: those)
set -euo pipefail
cd "$(dirname "$0")/.."

# Node dependencies (exact versions from package-lock.json); `prepare` compiles to dist/.
# Native addons (isolated-vm, better-sqlite3) compile from source here: no prebuilt binary can
# be downloaded. Once, on a fresh machine, the first compile failed ("binding.gyp not found")
# and a rerun worked; every install since (nine fresh node_modules on this kind of machine, one
# with an empty npm cache) compiled them, so the cause is not known. The install is retried
# once, and the addons must load before setup goes on.
npm ci --no-audit --no-fund || { echo "setup: npm ci failed; retrying once" >&2; npm ci --no-audit --no-fund; }
if ! node -e 'require("isolated-vm"); require("better-sqlite3")' 2>/dev/null; then
  echo "setup: a native addon does not load; rebuilding it" >&2
  npm rebuild isolated-vm better-sqlite3 --foreground-scripts
  node -e 'require("isolated-vm"); require("better-sqlite3")'
fi
bash scripts/setup-browser.sh # Debian's chromium, for the UI's end-to-end tests
bash scripts/setup-python.sh  # the Python client, pytest and the GRPO trainer stack (TRL, torch CPU)

# Sandboxes for the code verifier (Docker engine + images, bubblewrap); arguments: which images.
bash scripts/setup-sandbox.sh "$@"

# PostgreSQL for the sql verifier (a loopback cluster, a test database, a SELECT-only role).
bash scripts/setup-postgres.sh

bash scripts/setup-redis.sh   # Redis on 127.0.0.1 for batch-job scale-out (ASSAY_REDIS_URL) and its tests
