"""The /diagnostics messages of ident_ros.diagnostics without DDS."""
from diagnostic_msgs.msg import DiagnosticStatus

from ident_core.monitoring.status import Level, Status
from ident_ros import qos
from ident_ros.diagnostics import status_msg


def test_status_message_carries_level_name_hardware_and_values_in_order():
    msg = status_msg(Status('real time', Level.WARN, '0.2 s behind',
                            {'lag_s': '0.2', 'overruns': '3'}),
                     'ident_sim: real time', 'six_axis_3kg')
    assert msg.level == DiagnosticStatus.WARN
    assert (msg.name, msg.message, msg.hardware_id) == ('ident_sim: real time',
                                                        '0.2 s behind', 'six_axis_3kg')
    assert [(v.key, v.value) for v in msg.values] == [('lag_s', '0.2'), ('overruns', '3')]
    for level, expected in ((Level.OK, DiagnosticStatus.OK), (Level.ERROR,
                            DiagnosticStatus.ERROR), (Level.STALE, DiagnosticStatus.STALE)):
        assert status_msg(Status('t', level, ''), 'n: t').level == expected


def test_diagnostics_qos_matches_the_aggregator_default_subscription():
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    default = QoSProfile(depth=10)           # what diagnostic_aggregator subscribes with
    assert qos.DIAGNOSTICS_QOS.reliability == ReliabilityPolicy.RELIABLE == default.reliability
    assert qos.DIAGNOSTICS_QOS.durability == DurabilityPolicy.VOLATILE == default.durability
    assert qos.DIAGNOSTICS_QOS.depth == 10
