"""Rewrite build-host paths in the ROS wheels' CMake exports (idempotent).

The ros-* message wheels were built in a manylinux container and their
share/*/cmake/*.cmake files point at that container's Python and NumPy include
directories; CMake refuses non-existent include dirs.  Run with the venv Python.
"""
import glob
import os
import sys
import sysconfig

import numpy

REPLACEMENTS = {
    '/opt/python/cp311-cp311/include/python3.11': sysconfig.get_paths()['include'],
    '/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include':
        numpy.get_include(),
}


def main():
    prefix = os.environ.get('VIRTUAL_ENV', sys.prefix)
    changed = 0
    for path in glob.glob(os.path.join(prefix, 'share', '*', 'cmake', '*.cmake')):
        with open(path, encoding='utf-8') as f:
            text = f.read()
        new = text
        for old, repl in REPLACEMENTS.items():
            new = new.replace(old, repl)
        if new != text:
            with open(path, 'w', encoding='utf-8') as f:
                f.write(new)
            changed += 1
    print(f'fix_cmake_exports: {changed} file(s) changed under {prefix}/share')


if __name__ == '__main__':
    main()
