#!/usr/bin/env bash
# The Python client and what its tests need: pytest and the GRPO trainer's stack (torch CPU,
# transformers, TRL), from the local package index, never the public one. Idempotent: pip skips
# what is already installed at the pinned versions.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${PYTHON:-python3}"
if ! command -v "$PY" >/dev/null 2>&1; then
  echo "setup-python: $PY not found; the Python client's tests need Python 3.9+" >&2
  exit 1
fi

# Ask the local index first (and only), so pip never waits on an unreachable default one.
# PIP_INDEX_URL / PIP_EXTRA_INDEX_URL set by the caller win.
index_args=()
if [ -z "${PIP_INDEX_URL:-}" ] && [ -d /opt/pypi/simple ]; then
  index_args+=(--index-url file:///opt/pypi/simple)
  [ -d /opt/pypi-more/simple ] && index_args+=(--extra-index-url file:///opt/pypi-more/simple)
  [ -d /opt/wheels ] && index_args+=(--find-links /opt/wheels)
fi

"$PY" -m pip install --disable-pip-version-check --no-input --root-user-action=ignore "${index_args[@]}" \
  "./clients/python[train,test,mcp]"
"$PY" -c "import assay_client, trl, transformers, torch, pytest; print('setup-python: trl', trl.__version__, 'transformers', transformers.__version__, 'torch', torch.__version__)"
