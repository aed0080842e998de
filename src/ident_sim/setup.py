from setuptools import find_packages, setup

package_name = 'ident_sim'

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
    description='Simulated ros2_control hardware (joint_trajectory_controller + '
                'joint_state_broadcaster) and the simulated demos.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'sim_node = ident_sim.sim_node:main',
            'demo = ident_sim.demo:main',
            'payload_demo = ident_sim.payload_demo:main',
            'friction_demo = ident_sim.friction_demo:main',
        ],
    },
)
