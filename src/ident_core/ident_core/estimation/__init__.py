"""Estimation: least-squares ``estimators``, the ``identification`` pipeline, validation
``metrics`` and RESULT.yaml ``results`` (docs/methods.md §4–§5, §10)."""
