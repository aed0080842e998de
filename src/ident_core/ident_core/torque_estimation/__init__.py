"""Joint torque estimation: the dynamic model, the Kalman filter of
scara_kalman_torque_estimation_2018 and its baselines, external torque and collisions
(docs/methods.md §12)."""
