"""Fleet identification and drift monitoring: many robots' recordings identified in parallel on
Dask, each robot's parameters followed over time (docs/fleet.md, docs/methods.md §13).

``manifest``  FLEET.yaml (``robot-ident/fleet/1``): the robots, their URDFs and recordings
``hashing``   content hashes of the inputs of a task (resume)
``tasks``     the work units (identify a recording, a robot's baseline model, validate with it)
              and their records (TASK.yaml, VALIDATION.yaml), run on a worker
``plan``      which tasks a fleet needs now, given what is done (resume, baselines)
``engine``    the Dask client: an embedded ``LocalCluster`` or a scheduler's address
``index``     fleet.yaml: per robot and recording its time, status, errors
``drift``     the drift statistics and alerts, drift.yaml
``page``      the HTML fleet page

The tasks get paths and configuration schemas and call the workflows
(``ident_core.workflows``); a worker needs the package and the files (shared storage).
"""
