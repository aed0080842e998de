"""Run a launch file with the real ``launch`` library, as ``ros2 launch`` does (test helper).

    python real_launch_driver.py REPORT.json FILE [name:=value ...]

Used by tests/test_real_launch.py in an environment where ``launch``, ``launch_yaml`` and
``launch_ros`` (../shared/ros2_src) are importable; not part of the product. Like
``ros2launch.api.launch_a_launch_file``, it gives ``launch.LaunchService`` one
``IncludeLaunchDescription(AnyLaunchDescriptionSource(FILE), launch_arguments=...)``; beside it,
only observers: two event handlers record the command line of every process started and the
exit code of every process that ended, and an ``OpaqueFunction`` after the include (visited once
the included file's actions were) the launch configurations (arguments) it set. REPORT.json gets
``{"returncode": ..., "configurations": {...}, "started": [{"name", "cmd"}], "exited":
[{"name", "returncode"}]}`` when the launch service has finished.
"""

import json
import sys

from launch.actions import IncludeLaunchDescription, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessExit, OnProcessStart
from launch.launch_description_sources import AnyLaunchDescriptionSource

from launch import LaunchDescription, LaunchService


def parse_launch_arguments(items):
    """``name:=value`` items as (name, value) pairs, as ros2launch parses them."""
    pairs = {}
    for item in items:
        count = item.count(':=')
        if count == 0 or item.startswith(':=') or (count == 1 and item.endswith(':=')):
            raise SystemExit(f"malformed launch argument '{item}', expected '<name>:=<value>'")
        name, value = item.split(':=', maxsplit=1)
        pairs[name] = value
    return list(pairs.items())


def main(argv):
    report_path, launch_file, *arguments = argv
    started, exited, configurations = [], [], {}
    service = LaunchService(argv=arguments)
    service.include_launch_description(LaunchDescription([
        RegisterEventHandler(OnProcessStart(on_start=lambda event, _: started.append(
            {'name': event.action.name, 'cmd': list(event.cmd)}))),
        RegisterEventHandler(OnProcessExit(on_exit=lambda event, _: exited.append(
            {'name': event.action.name, 'returncode': event.returncode}))),
        IncludeLaunchDescription(AnyLaunchDescriptionSource(launch_file),
                                 launch_arguments=parse_launch_arguments(arguments)),
        OpaqueFunction(function=lambda context: configurations.update(
            context.launch_configurations)),
    ]))
    returncode = service.run()
    with open(report_path, 'w', encoding='utf-8') as f:
        json.dump({'returncode': returncode, 'configurations': configurations,
                   'started': started, 'exited': exited}, f)
    return returncode


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
