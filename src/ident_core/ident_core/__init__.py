"""Pure-Python core of the robot dynamic parameter identification suite (no rclpy).

One subpackage per area of the method (docs/methods.md):

``model``        robot model (URDF through Pinocchio), transmission, regressor, base parameters
``data``         readers (CSV, NPZ, rosbag2), dataset descriptions, signal processing
``estimation``   OLS/WLS estimators, the identification pipeline, metrics, RESULT.yaml
``excitation``   finite Fourier series, excitation criteria, constraints, collision, optimisers
``motion``       joint limits, polynomial segments, excitation plans, controller semantics
``friction``     joint friction models
``payload``      payload identification: frame and regressor, the methods, drive gains,
                 PAYLOAD.yaml
``optim``        the GA / SA-GA engine
``sim``          simulated hardware, synthetic recordings, evaluation against ground truth
``torque_estimation``  joint and external torque estimation (Kalman filter, observers)
``monitoring``   the nodes' run-time health (``/diagnostics``): statistics, statuses, limits
``report``       the HTML report of an identification, payload, friction or torque estimate
``workflows``    one function per job (identify, validate, payload, friction, torques, report)
                 from paths to the files written, shared by the CLI, the nodes and the fleet
``cli``          the ``robot-ident`` command, one module per verb

Shared:
``errors`` (the exceptions), ``schema`` (file formats as pydantic models), ``files`` (YAML in,
atomic writes out), ``threads`` (the BLAS thread limit), ``progress`` (how long computations
report their progress). Subpackages import nothing on their
own: import the module you use, e.g. ``from ident_core.estimation.identification import
identify``.
"""

__version__ = '0.1.0'
