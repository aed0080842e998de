"""The ROS 2 runtime shared by the suite's nodes (no mathematics; that lives in ident_core).

``lifecycle``    signal handling and the spin loop of a node that finishes its work on SIGINT
``parameters``   node parameters declared from the pydantic model that holds their defaults
``qos``          the QoS profiles of the suite's topics
``diagnostics``  a node's task statuses on /diagnostics (diagnostic_msgs/DiagnosticArray)
``worker``       long work in a thread while the executor keeps spinning; timeouts
``conversions``  result and state messages of ident_core objects; RViz markers
``trajectories`` ExcitationTrajectory ↔ Fourier series; JointTrajectory ↔ motion samples
``typestore``    the recorder's rosbags typestore with the installed ident_msgs definitions
``testing``      an rclpy context in a ROS domain of its own, for tests
"""
