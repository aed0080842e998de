"""Executable motions (docs/methods.md §7): joint ``limits``, polynomial ``segments``,
excitation ``plan`` and running motions, their ``streaming`` to a controller and the
``watchdog`` on the robot while they run, and the joint_trajectory_controller semantics
(``controller``)."""
