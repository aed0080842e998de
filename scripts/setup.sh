#!/usr/bin/env bash
# Idempotent workspace set-up: .venv (pinned requirements) + colcon build of src/.
# Each step is skipped when its inputs are unchanged; stamps are written only on success.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
log() { echo "[setup] $*"; }

# 1. Python 3.11
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || { echo "[setup] ERROR: '$PY' not found; install Python 3.11 or set PYTHON=/path/to/python3.11" >&2; exit 1; }
PY_VER=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ "$PY_VER" = 3.11 ] || { echo "[setup] ERROR: $PY is Python $PY_VER, 3.11 is required (set PYTHON=...)" >&2; exit 1; }
log "python: $(command -v "$PY") ($PY_VER)"

# 2. virtual environment
if [ -x .venv/bin/python ]; then
    log "venv: .venv exists"
else
    "$PY" -m venv .venv
    log "venv: created .venv"
fi
set +u; source .venv/bin/activate; set -u

# 3. requirements (re-installed only when requirements.txt changes)
REQ_HASH=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ "$(cat .venv/.requirements.sha256 2>/dev/null)" = "$REQ_HASH" ]; then
    log "requirements: up to date"
else
    log "requirements: installing (pip, ~30 s)..."
    if ! python -m pip install -q -r requirements.txt > .venv/pip-install.log 2>&1; then
        grep -v "^WARNING: Location" .venv/pip-install.log | tail -n 40 >&2
        echo "[setup] ERROR: pip install failed (full output: .venv/pip-install.log)" >&2
        exit 1
    fi
    python scripts/fix_cmake_exports.py | sed 's/^/[setup] /'
    echo "$REQ_HASH" > .venv/.requirements.sha256
fi

# 4. colcon build (only when src/ (launch/, config/ and urdf/ live in src/ident_bringup),
#    requirements or the location changed). A fresh build: setuptools never deletes the files of
#    a module that was moved or removed, so an incremental one could keep stale modules.
export AMENT_PREFIX_PATH=$VIRTUAL_ENV
SRC_HASH=$( { echo "$ROOT $REQ_HASH"
              find src -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path '*.egg-info/*' -print0 \
                  | LC_ALL=C sort -z | xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1)
STAMP=install/.setup-build.sha256
if [ "$(cat "$STAMP" 2>/dev/null)" = "$SRC_HASH" ]; then
    log "build: up to date"
else
    rm -rf build install
    log "build: colcon build (~15 s)..."
    mkdir -p log
    if ! colcon build --base-paths src --cmake-args -DBUILD_TESTING=OFF \
            --event-handlers console_direct+ > log/setup-colcon.out 2>&1; then
        tail -n 60 log/setup-colcon.out >&2
        echo "[setup] ERROR: colcon build failed (full output: log/setup-colcon.out)" >&2
        exit 1
    fi
    echo "$SRC_HASH" > "$STAMP"
    log "build: done ($(grep -c '^Finished <<<' log/setup-colcon.out) package(s))"
fi
log "ok - now: source scripts/env.sh"
