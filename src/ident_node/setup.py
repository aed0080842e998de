from setuptools import find_packages, setup

package_name = 'ident_node'

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
    ],
    install_requires=['setuptools'],
    extras_require={'test': ['pytest']},
    zip_safe=True,
    maintainer='robot-ident maintainers',
    maintainer_email='maintainers@robot-ident.dev',
    description='Recorder (joint_states to rosbag2) and identification node of the suite.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'recorder_node = ident_node.recorder_node:main',
            'identification_node = ident_node.identification_node:main',
        ],
    },
)
