"""rosbag2 (MCAP) recordings of identification experiments, and the ``recording.yaml`` that
summarises each: the recording ``format`` (folder names, message types), the ``summary``, the
``writer`` the recorder node drives, the ``lock`` a writer holds, the ``mcap`` parser, the
``damage`` a killed recorder leaves, the ``salvage`` reader of such a bag and its ``repair``."""
