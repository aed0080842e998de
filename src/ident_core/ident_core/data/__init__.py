"""Recordings: raw ``readers`` (CSV, NPZ, rosbag2), the dataset ``description`` file format,
``datasets`` in joint space, and ``signal_processing`` (docs/methods.md §3); the rosbag2
recordings of the recorder node, their ``recording.yaml`` and their repair (``bag``)."""
