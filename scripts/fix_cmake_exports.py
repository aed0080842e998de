"""Rewrite build-host paths in the ROS wheels' CMake exports (idempotent).

The ros-* message wheels were built in a manylinux container and their
share/*/cmake/*.cmake files point at that container's Python
(``/opt/python/cp3XY-cp3XY/...``): its include directory and its site-packages (NumPy's include
directory). CMake refuses non-existent include dirs. This rewrites them to the running
interpreter's, whatever its Python version: run it with the venv's Python.
"""
import glob
import os
import re
import sys
import sysconfig

#: The build container's Python prefix, e.g. ``/opt/python/cp311-cp311``.
BUILD_PYTHON = r'/opt/python/cp3\d+-cp3\d+t?'
REPLACEMENTS = [
    (re.compile(BUILD_PYTHON + r'/lib/python3\.\d+t?/site-packages'),
     sysconfig.get_paths()['purelib']),
    (re.compile(BUILD_PYTHON + r'/include/python3\.\d+t?'), sysconfig.get_paths()['include']),
]


def main():
    prefix = os.environ.get('VIRTUAL_ENV', sys.prefix)
    changed = 0
    for path in glob.glob(os.path.join(prefix, 'share', '*', 'cmake', '*.cmake')):
        with open(path, encoding='utf-8') as f:
            text = f.read()
        new = text
        for pattern, repl in REPLACEMENTS:
            new = pattern.sub(repl.replace('\\', r'\\'), new)
        if new != text:
            with open(path, 'w', encoding='utf-8') as f:
                f.write(new)
            changed += 1
    if changed:
        print(f'fix_cmake_exports: {changed} file(s) changed under {prefix}/share')


if __name__ == '__main__':
    main()
