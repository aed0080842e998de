"""The robot model: URDF through Pinocchio (``robot``), motor-side ``transmission``, the
identification ``regressor`` and its ``base_parameters`` (docs/methods.md §1–§2)."""
