# Source me (bash): activates .venv-<distro> and the colcon overlay install-<distro>/ of the ROS 2
# distribution ROS_DISTRO (jazzy, the default, or kilted; set up by scripts/setup.sh).
#   source scripts/env.sh                      # Jazzy
#   ROS_DISTRO=kilted source scripts/env.sh    # Kilted
_ri_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_ri_distro=${ROS_DISTRO:-jazzy}
if [ ! -f "$_ri_root/.venv-$_ri_distro/bin/activate" ] \
        || [ ! -f "$_ri_root/install-$_ri_distro/setup.bash" ]; then
    echo "env.sh: ROS 2 $_ri_distro is not set up in $_ri_root; run 'ROS_DISTRO=$_ri_distro make setup' (or bash scripts/setup.sh) there first" >&2
    unset _ri_root _ri_distro
    return 1 2>/dev/null || exit 1
fi
export ROS_DISTRO=$_ri_distro
source "$_ri_root/.venv-$_ri_distro/bin/activate"
# The ROS wheels install their ament index in the venv prefix (doc workaround 1).
case ":${AMENT_PREFIX_PATH:-}:" in
    *":$VIRTUAL_ENV:"*) ;;
    *) export AMENT_PREFIX_PATH="$VIRTUAL_ENV${AMENT_PREFIX_PATH:+:$AMENT_PREFIX_PATH}" ;;
esac
source "$_ri_root/install-$_ri_distro/setup.bash"
# Node executables / console scripts live in install-<distro>/<pkg>/lib/<pkg>/ (no 'ros2 run').
for _ri_dir in "$_ri_root/install-$_ri_distro"/*/lib/*/; do
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
unset _ri_root _ri_distro _ri_dir _ri_f
