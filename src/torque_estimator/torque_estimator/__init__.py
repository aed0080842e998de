"""The torque estimator node (design card: src/torque_estimator/)."""
