"""Simulation (docs/methods.md §9): the simulated hardware (``config``, ``simulator``),
``synthetic`` recordings, and ``evaluation`` against the ground truth."""
