# Source me (bash): activates .venv and the colcon install/ overlay.
#   source scripts/env.sh
_ri_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ ! -f "$_ri_root/.venv/bin/activate" ] || [ ! -f "$_ri_root/install/setup.bash" ]; then
    echo "env.sh: workspace not set up; run 'make setup' (or bash scripts/setup.sh) in $_ri_root first" >&2
    unset _ri_root
    return 1 2>/dev/null || exit 1
fi
source "$_ri_root/.venv/bin/activate"
# The ROS wheels install their ament index in the venv prefix (doc workaround 1).
case ":${AMENT_PREFIX_PATH:-}:" in
    *":$VIRTUAL_ENV:"*) ;;
    *) export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}" ;;
esac
source "$_ri_root/install/setup.bash"
# Node executables / console scripts live in install/<pkg>/lib/<pkg>/ (no 'ros2 run').
for _ri_dir in "$_ri_root"/install/*/lib/*/; do
    _ri_dir=${_ri_dir%/}
    for _ri_f in "$_ri_dir"/*; do
        if [ -f "$_ri_f" ] && [ -x "$_ri_f" ]; then
            case ":$PATH:" in *":$_ri_dir:"*) ;; *) PATH="$_ri_dir:$PATH" ;; esac
            break
        fi
    done
done
export PATH
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
unset _ri_root _ri_dir _ri_f
