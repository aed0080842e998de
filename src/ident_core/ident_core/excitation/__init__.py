"""Optimal excitation trajectories (docs/methods.md §6): finite Fourier series (``fourier``),
settings (``config``), criteria of the base regressor (``objective``), ``constraints`` and
``collision``, the optimisation ``problem`` and the optimisers (``optimize``), and an
optimisation for the robot that runs it (``on_robot``)."""
