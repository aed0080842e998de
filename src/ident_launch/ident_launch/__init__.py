"""Runner for the subset of the ROS 2 YAML launch format used by the identification suite.

Modules: ``substitutions`` and ``params`` (pure parsing, evaluation, encoding), ``description``
(launch file -> validated entries -> node command lines), ``process`` (starting and stopping the
nodes), ``cli`` (the ``ident_launch`` command), ``errors`` (the exception types).
"""
