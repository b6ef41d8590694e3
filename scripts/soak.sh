#!/usr/bin/env bash
# make soak: sets up a Python venv with `websockets` (once, in .build-soak/venv)
# and runs scripts/soak.py with the given arguments (see its --help).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build-soak/venv
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import websockets' 2>/dev/null; then
  mkdir -p .build-soak
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'websockets>=13'
fi
exec "$venv/bin/python" scripts/soak.py "$@"
