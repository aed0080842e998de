#!/usr/bin/env bash
# Idempotent workspace set-up for one ROS 2 distribution: ROS_DISTRO=jazzy (default) or kilted.
# .venv-<distro> (the lock requirements/<distro>.txt) + colcon build of src/ into
# build-<distro>/ and install-<distro>/, so that both distributions can be set up side by side.
#   bash scripts/setup.sh --lowest: .venv-lowest only (requirements/lowest.txt, no ROS): the core
#   on the lowest library versions it supports (make test-lowest).
#   bash scripts/setup.sh --venv-only: .venv-<distro> without the build (CI installs it while
#   another job runs).
# Each step is skipped when its inputs are unchanged; stamps are written only on success.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
log() { echo "[setup] $*"; }
die() { echo "[setup] ERROR: $*" >&2; exit 1; }

# install_venv VENV LOCK HASH [PIP_ARGS...]: VENV with the requirements of LOCK, unless its stamp
# already holds HASH.
install_venv() {
    local venv=$1 lock=$2 hash=$3
    shift 3
    if [ -x "$venv/bin/python" ]; then
        log "venv: $venv exists"
    else
        "$PY" -m venv "$venv"
        log "venv: created $venv"
    fi
    if [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" = "$hash" ]; then
        log "requirements: up to date"
        return
    fi
    log "requirements: installing $lock (pip, ~1 min)..."
    if ! "$venv/bin/python" -m pip install -q "$@" -r "$lock" > "$venv/pip-install.log" 2>&1; then
        grep -v "^WARNING: Location" "$venv/pip-install.log" | tail -n 40 >&2
        die "pip install failed (full output: $venv/pip-install.log)"
    fi
    echo "$hash" > "$venv/.requirements.sha256"
}

# 1. ROS 2 distribution and Python 3.11
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || die "'$PY' not found; install Python 3.11 or set PYTHON=/path/to/python3.11"
PY_VER=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[ "$PY_VER" = 3.11 ] || die "$PY is Python $PY_VER, 3.11 is required (set PYTHON=...)"
log "python: $(command -v "$PY") ($PY_VER)"

MODE=${1:-}
case $MODE in
    ''|--venv-only) ;;
    --lowest)
        install_venv .venv-lowest requirements/lowest.txt \
            "$(sha256sum requirements/lowest.txt | cut -d' ' -f1)" --no-deps
        log "ok - the core's tests on it: make test-lowest"
        exit 0 ;;
    *) die "unknown argument '$MODE' (--lowest or --venv-only)" ;;
esac
DISTRO=${ROS_DISTRO:-jazzy}
case $DISTRO in
    jazzy|kilted) log "ROS 2 $DISTRO" ;;
    *) die "ROS_DISTRO=$DISTRO: this workspace installs jazzy (the default) or kilted" ;;
esac

# The single-distribution layout of earlier set-ups (build/, install/) would shadow this one.
if [ -f install/.setup-build.sha256 ]; then
    rm -rf build install
    log "removed build/ and install/ of an earlier set-up (now build-<distro>/, install-<distro>/)"
fi

# 2. virtual environment and requirements (re-installed only when the lock files change), then
#    the ROS wheels' CMake exports made to point into it (idempotent)
VENV=.venv-$DISTRO
LOCK=requirements/$DISTRO.txt
REQ_HASH=$(cat requirements/common.txt "$LOCK" | sha256sum | cut -d' ' -f1)
install_venv "$VENV" "$LOCK" "$REQ_HASH"
set +u; source "$VENV/bin/activate"; set -u
python scripts/fix_cmake_exports.py | sed 's/^/[setup] /'
[ "$MODE" != --venv-only ] || { log "ok - $VENV (not built: --venv-only)"; exit 0; }

# 3. colcon build (only when src/ (launch/, config/ and urdf/ live in src/ident_bringup),
#    the requirements or the location changed). A fresh build: setuptools never deletes the files
#    of a module that was moved or removed, so an incremental one could keep stale modules.
export AMENT_PREFIX_PATH=$VIRTUAL_ENV
BUILD=build-$DISTRO INSTALL=install-$DISTRO LOGS=log/$DISTRO
SRC_HASH=$( { echo "$ROOT $DISTRO $REQ_HASH"
              find src -type f ! -path '*/__pycache__/*' ! -name '*.pyc' ! -path '*.egg-info/*' -print0 \
                  | LC_ALL=C sort -z | xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1)
STAMP=$INSTALL/.setup-build.sha256
if [ "$(cat "$STAMP" 2>/dev/null)" = "$SRC_HASH" ]; then
    log "build: $INSTALL up to date"
else
    rm -rf "$BUILD" "$INSTALL"
    log "build: colcon build into $INSTALL (~15 s)..."
    mkdir -p "$LOGS"
    if ! colcon --log-base "$LOGS" build --base-paths src --build-base "$BUILD" \
            --install-base "$INSTALL" --cmake-args -DBUILD_TESTING=OFF \
            --event-handlers console_direct+ > "$LOGS/setup-colcon.out" 2>&1; then
        tail -n 60 "$LOGS/setup-colcon.out" >&2
        die "colcon build failed (full output: $LOGS/setup-colcon.out)"
    fi
    echo "$SRC_HASH" > "$STAMP"
    log "build: done ($(grep -c '^Finished <<<' "$LOGS/setup-colcon.out") package(s))"
fi
if [ "$DISTRO" = jazzy ]; then
    log "ok - now: source scripts/env.sh"
else
    log "ok - now: ROS_DISTRO=$DISTRO source scripts/env.sh"
fi
