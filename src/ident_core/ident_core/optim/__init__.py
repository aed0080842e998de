"""Derivative-free optimisation: the GA / SA-GA engine (``evolution``)."""
