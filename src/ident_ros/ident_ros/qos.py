"""QoS profiles of the suite's topics, chosen per kind of data."""
from __future__ import annotations

from rclpy.duration import Duration
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    LivelinessPolicy,
    QoSProfile,
    ReliabilityPolicy,
)


def _reliable(depth: int, latched: bool) -> QoSProfile:
    durability = DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE, durability=durability)


#: ``joint_states`` at 1 kHz: reliable so that a recorder gets every sample, deep enough (5 s)
#: for a subscriber starved by a busy machine (at 1 s, a recorder lost bursts of samples).
JOINT_STATES_QOS = _reliable(depth=5000, latched=False)
#: Descriptions and results that late joiners must still get (latched).
LATCHED_QOS = _reliable(depth=1, latched=True)
#: ``robot_description`` (std_msgs/String), as robot_state_publisher publishes it: reliable,
#: transient local, depth 1.
ROBOT_DESCRIPTION_QOS = _reliable(depth=1, latched=True)
#: A latched history: every report of a session, not only the last (recorder reports).
LATCHED_HISTORY_QOS = _reliable(depth=100, latched=True)
#: The recorder's reports, with a liveliness lease: a node that needs the recorder (the
#: excitation while it records) learns within the lease that it is gone, even when killed.
RECORDER_STATUS_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL, liveliness=LivelinessPolicy.AUTOMATIC,
    liveliness_lease_duration=Duration(seconds=1.0))
#: Trajectory commands: reliable, a few in flight.
COMMAND_QOS = _reliable(depth=10, latched=False)
#: Estimates at the joint_states rate (filtered torques) for controllers and monitors:
#: reliable, and a subscriber that falls behind gets the newest rather than a backlog.
ESTIMATE_QOS = _reliable(depth=10, latched=False)
#: Events that must all arrive (collisions), none replayed to late joiners.
EVENT_QOS = _reliable(depth=100, latched=False)
#: RViz markers (payload, per-link inertia, collisions): each MarkerArray describes the whole
#: display (it starts with a DELETEALL or replaces fixed ids), so depth 1, latched: an RViz
#: started later gets the last one (its MarkerArray displays subscribe Transient Local,
#: config/rviz/identification.rviz).
MARKER_QOS = _reliable(depth=1, latched=True)
#: ``/diagnostics`` (diagnostic_msgs/DiagnosticArray, about 1 Hz per node): reliable, depth 10,
#: volatile, as ``rclpy``'s default profile that ``diagnostic_aggregator``, ``rqt_robot_monitor``
#: and ``ros2 topic echo`` subscribe with; a best-effort publisher would not match their reliable
#: subscriptions, and a latched one would replay a stale status to a late joiner.
DIAGNOSTICS_QOS = _reliable(depth=10, latched=False)
