"""One function per job, shared by every entry point: the ``robot-ident`` verbs, the
identification node's services and the fleet runner call these (docs/methods.md §10).

``identify``     identify recordings, validate, write RESULT.yaml (``identify_recordings``),
                 validate a model on a recording (``validate_recording``)
``payload``      identify a payload, write PAYLOAD.yaml and the URDF with the payload
``friction``     identify joint friction, write FRICTION.yaml
``torques``      estimate joint and external torques, write TORQUES.csv
``report``       the HTML report of result files
``inputs``       what a job reads: the robot, the recordings (``RecordingOptions``)
``outputs``      what a job writes: default names beside the recordings

Each function takes plain inputs (paths, a configuration schema, ``RecordingOptions``, an
optional output path and progress receiver) and returns the core result with the files it
wrote. The arguments pickle and nothing depends on the calling process's state, so a job can
run on a worker process.
"""
