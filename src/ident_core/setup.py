from setuptools import find_packages, setup

package_name = 'ident_core'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
    ],
    # The lowest versions that pass the core's tests (make test-lowest, requirements/lowest.txt)
    install_requires=['setuptools', 'numpy>=1.26', 'scipy>=1.11', 'PyYAML>=6.0', 'pydantic>=2.6',
                      'pin>=3.4', 'rosbags>=0.10.10', 'tqdm>=4.17', 'cvxpy>=1.4', 'clarabel>=0.7',
                      'threadpoolctl>=3.0', 'matplotlib>=3.6', 'dask>=2026.8',
                      'distributed>=2026.8'],
    extras_require={'test': ['pytest']},
    zip_safe=True,
    maintainer='robot-ident maintainers',
    maintainer_email='maintainers@robot-ident.dev',
    description='Pure-Python core of the robot dynamic parameter identification suite.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'robot-ident = ident_core.cli:main',
        ],
    },
)
