"""Upstream ROS 2 sources that PyPI does not have (../shared/ros2_src, see its README), built into
a throw-away folder for the tests that check the project against them (test helper; they are
never copied into the repository, and a user's clone has no ../shared: the tests skip).

``ColconBuild`` copies interface packages (``composition_interfaces``, ``control_msgs``) and
builds them with colcon in the background; ``environment`` makes what was built importable in
child processes (a package's Python extension finds its libraries through ``LD_LIBRARY_PATH``,
which a running process cannot change: the tests run the nodes that need them as processes).
"""
from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROS2_SRC = REPO.parent / 'shared' / 'ros2_src'

#: control_msgs reduced to FollowJointTrajectory and the messages it uses: the whole package (26
#: messages, 7 actions, 3 services, every type support compiled) took 4 min 15 s to build on this
#: busy 2-core machine, this about one minute.
FOLLOW_JOINT_TRAJECTORY_CMAKE = """cmake_minimum_required(VERSION 3.10)
project(control_msgs)
find_package(ament_cmake REQUIRED)
find_package(rosidl_default_generators REQUIRED)
foreach(dependency action_msgs builtin_interfaces geometry_msgs std_msgs trajectory_msgs)
  find_package(${dependency} REQUIRED)
endforeach()
rosidl_generate_interfaces(${PROJECT_NAME}
  action/FollowJointTrajectory.action msg/JointTolerance.msg msg/JointComponentTolerance.msg
  DEPENDENCIES action_msgs builtin_interfaces geometry_msgs std_msgs trajectory_msgs)
ament_export_dependencies(rosidl_default_runtime)
ament_package()
"""


def copy_sources(packages, root: Path) -> None:
    """Writable copies of ``packages`` of ROS2_SRC in ``root/src`` (pip and colcon build in
    the source folder, and ../shared stays read-only).

    Parameters
    ----------
    packages : iterable of str
        Folders of ROS2_SRC.
    root : Path
        The throw-away folder.
    """
    for package in packages:
        shutil.copytree(ROS2_SRC / package, root / 'src' / package,
                        ignore=shutil.ignore_patterns('build', '*.egg-info', '__pycache__'))
        for path in (root / 'src' / package).rglob('*'):
            path.chmod(path.stat().st_mode | 0o200)


def missing_sources(packages) -> list[str]:
    """The folders of ``packages`` that ROS2_SRC lacks.

    Parameters
    ----------
    packages : iterable of str

    Returns
    -------
    list of str
    """
    return [p for p in packages if not (ROS2_SRC / p).is_dir()]


class ColconBuild:
    """A colcon build of packages copied from ROS2_SRC, running in the background.

    Parameters
    ----------
    root : Path
        The throw-away folder (``src/``, ``build/``, ``install/``, ``log/`` and
        ``colcon.log`` go there).
    packages : list of str
        Folders of ROS2_SRC.
    cmake_lists : dict, optional
        Package → the ``CMakeLists.txt`` to build it with instead of its own.
    """

    def __init__(self, root: Path, packages: list[str], cmake_lists: dict | None = None):
        self.root, self.packages = root, packages
        copy_sources(packages, root)
        for package, text in (cmake_lists or {}).items():
            (root / 'src' / package / 'CMakeLists.txt').write_text(text)
        self.log = root / 'colcon.log'
        with open(self.log, 'w') as out:
            self.process = subprocess.Popen(
                ['colcon', '--log-base', str(root / 'log'), 'build',
                 '--base-paths', *(str(root / 'src' / p) for p in packages),
                 '--build-base', str(root / 'build'), '--install-base', str(root / 'install'),
                 '--cmake-args', '-DBUILD_TESTING=OFF'],
                cwd=root, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)

    def wait(self, timeout: float) -> list[Path]:
        """Wait for the build; fail the test with the log's tail when it fails or times out.

        Parameters
        ----------
        timeout : float
            [s], guards against a hang only.

        Returns
        -------
        list of Path
            The install prefix of every package.
        """
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f'colcon build of {", ".join(self.packages)} did not finish within '
                        f'{timeout:g} s ({self.log})')
        finally:
            self.kill()
        if self.process.returncode != 0:
            pytest.fail(f'colcon build of {", ".join(self.packages)} failed:\n'
                        + self.log.read_text()[-3000:])
        return [self.root / 'install' / p for p in self.packages]

    def kill(self) -> None:
        """Stop the build if it still runs (its whole process group)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def environment(env: dict, prefixes, python_paths=()) -> dict:
    """``env`` with built packages (install prefixes) and Python folders in front.

    Parameters
    ----------
    env : dict
        The environment to extend (not changed).
    prefixes : iterable of Path
        Install prefixes of colcon-built packages: their Python package, libraries and ament
        index.
    python_paths : iterable of Path
        Further folders for ``PYTHONPATH`` and ``AMENT_PREFIX_PATH`` (a ``pip --target``).

    Returns
    -------
    dict
    """
    env, prefixes, python_paths = dict(env), list(prefixes), list(python_paths)
    sites = []
    for prefix in prefixes:
        site = glob.glob(str(prefix / 'lib' / 'python3*' / 'site-packages'))
        assert len(site) == 1, f'no Python package in {prefix}'
        sites.append(site[0])
    for name, paths in (('PYTHONPATH', (*python_paths, *sites)),
                        ('AMENT_PREFIX_PATH', (*python_paths, *prefixes)),
                        ('LD_LIBRARY_PATH', [p / 'lib' for p in prefixes])):
        env[name] = os.pathsep.join([*map(str, paths), *filter(None, [env.get(name)])])
    return env
