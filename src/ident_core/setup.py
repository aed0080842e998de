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
    install_requires=['setuptools', 'numpy', 'scipy', 'PyYAML', 'pydantic', 'pin', 'rosbags',
                      'tqdm', 'cvxpy', 'clarabel', 'threadpoolctl', 'matplotlib'],
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
