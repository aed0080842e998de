"""Executable motions (docs/methods.md §7): joint ``limits``, polynomial ``segments``,
excitation ``plan`` and running motions, and the joint_trajectory_controller semantics
(``controller``)."""
