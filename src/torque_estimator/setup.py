from setuptools import find_packages, setup

package_name = 'torque_estimator'

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
    description='Model-based Kalman filter of joint torques, external torques and collision '
                'detection at the joint_states rate.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'torque_estimator_node = torque_estimator.torque_estimator_node:main',
        ],
    },
)
