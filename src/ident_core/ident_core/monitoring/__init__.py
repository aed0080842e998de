"""Run-time health of the suite's nodes, as the ROS ``/diagnostics`` convention reports it.

``status``      the level (OK, WARN, ERROR, STALE), a status with its reason and its values
``statistics``  running statistics, windows of samples with percentiles, Kalman innovations,
                the simulator's real-time lag
``checks``      one status per task: recording (drops, late samples), excitation tracking,
                identification quality, torque estimation (latency, innovation), real time

The nodes only collect the samples and publish the statuses (``ident_ros.diagnostics``).
"""
