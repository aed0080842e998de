"""Joint states of a robot's stack: more joints than the arm (a gripper's fingers, a mobile
base's wheels) in any order, and another publisher's messages between the arm's (a gripper's
joint_state_broadcaster at 50 Hz). The rule (``data.joint_selection``): a sample is a message
naming every joint of the robot; the others are skipped and counted; a joint no message names is
one error naming it. Ground truth: the same synthetic recording written without the others."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from datafiles import GRIPPER_JOINTS, write_joint_state_bag

from ident_core.cli import main
from ident_core.data.bag.cdr import joint_state_names, joint_state_stamp
from ident_core.data.bag.writer import BagRecorder, recording_typestore
from ident_core.data.joint_selection import JointSelection
from ident_core.data.readers import read_joint_states
from ident_core.errors import InputError
from ident_core.workflows.inputs import RecordingOptions, read_recording

EXCITATION_MSG = (Path(__file__).resolve().parents[2] / 'ident_msgs' / 'msg'
                  / 'ExcitationTrajectory.msg')
WHEELS = ('wheel_left', 'wheel_right')
GRIPPER_RATE = 50.0         # Hz, against the arm's 100 Hz synthetic samples


def test_selection_picks_the_joints_by_name_and_counts_the_others():
    selection = JointSelection(['a', 'b', 'c'])
    np.testing.assert_array_equal(selection.columns(['w', 'c', 'a', 'b']), [2, 3, 1])
    np.testing.assert_array_equal(selection.columns(['c', 'b', 'a']), [2, 1, 0])
    assert selection.columns(['f1', 'f2']) is None
    assert selection.columns(['a', 'f1']) is None
    assert selection.skipped == 2 and selection.missing() == []
    lonely = JointSelection(['a', 'z'])
    assert lonely.columns(['a', 'b']) is None and lonely.columns(['f']) is None
    assert lonely.missing() == ['z']
    assert lonely.problem('/joint_states') == \
        '/joint_states: no message carries joint(s) z (2 message(s) without them)'
    apart = JointSelection(['a', 'b'])
    apart.columns(['a']), apart.columns(['b'])
    assert 'no message carries all of the joints a, b together' in apart.problem('bag')


@pytest.fixture(scope='module')
def bags(make_synthetic, tmp_path_factory):
    """The synthetic recording as a bag of the arm alone, and as a stack publishes it: wheels in
    every message (joints shuffled every 3rd), a gripper's messages between at 50 Hz."""
    folder = tmp_path_factory.mktemp('stack_bags')
    d = make_synthetic()
    plain = write_joint_state_bag(folder / 'arm', d, seed=5)
    stack = write_joint_state_bag(folder / 'stack', d, shuffle_every=3, seed=5,
                                  extra_joints=WHEELS, gripper_rate=GRIPPER_RATE)
    grippers = len(np.arange(0.0123, d.t[-1], 1 / GRIPPER_RATE))
    return d, plain, stack, grippers


def test_bag_rows_are_the_messages_carrying_every_joint(bags, six_axis):
    d, plain, stack, grippers = bags
    joints = six_axis.joint_names
    arm = read_joint_states(plain, '/joint_states', joints=joints)
    log = read_joint_states(stack, 'joint_states', joints=joints)
    assert log.topic == '/joint_states' and log.names == joints
    assert log.skipped == grippers > 40
    assert arm.skipped == 0 and len(log.stamp) == len(d.t)
    np.testing.assert_array_equal(log.stamp, arm.stamp)
    for field in ('position', 'velocity', 'effort'):
        np.testing.assert_array_equal(getattr(log, field), getattr(arm, field))
    recording = read_recording(stack, RecordingOptions(), joints).dataset
    assert recording.notes == (f'stack: {grippers} /joint_states message(s) without every joint '
                               "skipped (another publisher's, e.g. a gripper's)",)
    np.testing.assert_array_equal(recording.effort,
                                  read_recording(plain, RecordingOptions(), joints).dataset.effort)


def test_a_joint_no_message_carries_is_one_error_naming_it(bags, six_axis):
    _d, _plain, stack, _grippers = bags
    with pytest.raises(InputError, match=r'stack: no message carries joint\(s\) joint7 \('):
        read_joint_states(stack, '/joint_states', joints=[*six_axis.joint_names, 'joint7'])


def test_identify_on_a_stack_bag_equals_the_arm_bag(bags, tmp_path, capsys):
    """The CLI identifies the stack's bag exactly as the arm's alone; its preprocessing
    summary counts the gripper's messages."""
    from datafiles import URDF

    _d, plain, stack, grippers = bags
    results = {}
    for name, bag in (('arm', plain), ('stack', stack)):
        out = tmp_path / f'{name}.yaml'
        assert main(['identify', '--urdf', str(URDF), '--data', str(bag), '--out',
                     str(out)]) == 0, capsys.readouterr().err
        results[name] = yaml.safe_load(out.read_text())
    assert [p['value'] for p in results['stack']['base_parameters']] == \
        [p['value'] for p in results['arm']['base_parameters']]
    assert f'{grippers} /joint_states message(s) without every joint skipped' in \
        ' '.join(results['stack']['identification']['preprocessing'])


def test_recorder_counts_only_the_robots_messages_as_samples(tmp_path):
    """A 1 kHz arm stream with wheels, a gripper's messages at 50 Hz between: the bag holds
    every message, the counts (drops, period, late, gaps) are the arm's alone."""
    typestore = recording_typestore(EXCITATION_MSG)
    T = typestore.types
    arm = [f'joint_{i}' for i in range(1, 7)]

    def message(stamp_ns, names):
        msg = T['sensor_msgs/msg/JointState'](
            header=T['std_msgs/msg/Header'](
                stamp=T['builtin_interfaces/msg/Time'](sec=stamp_ns // 10**9,
                                                       nanosec=stamp_ns % 10**9),
                frame_id='odd'),                  # 3 characters: the names start unaligned
            name=list(names), position=np.zeros(len(names)), velocity=np.zeros(0),
            effort=np.zeros(len(names)))
        return bytes(typestore.serialize_cdr(msg, 'sensor_msgs/msg/JointState'))

    t0 = 1_700_000_000 * 10**9
    raw = message(t0, [*WHEELS, *arm[::-1]])
    assert joint_state_names(raw) == (*WHEELS, *arm[::-1]) and joint_state_stamp(raw) == t0
    rec = BagRecorder(tmp_path / 'bag', 'stack', typestore=typestore, joints=arm,
                      nominal_period=0.0).open(t0)
    samples = []
    for k in range(2000):
        stamp = t0 + k * 1_000_000
        if k % 20 == 7:                            # the gripper's, between two of the arm's
            assert not rec.write_joint_state(message(stamp - 500_000, GRIPPER_JOINTS),
                                             stamp - 400_000)
        samples.append(rec.write_joint_state(message(stamp, [*WHEELS, *arm]), stamp + 100_000))
    summary = rec.close(t0 + 2000 * 1_000_000)
    assert all(samples) and summary.joint_state_messages == 2000
    assert summary.other_joint_states == 100 and summary.missing_joints == []
    assert (summary.dropped, summary.out_of_order, summary.late, summary.gap_count) == (0, 0, 0, 0)
    assert summary.nominal_period == pytest.approx(0.001)
    assert summary.lost_warning(0.01) == ''
    log = read_joint_states(tmp_path / 'bag', '/joint_states', joints=arm)
    assert len(log.stamp) == 2000 and log.skipped == 100
    recorded = yaml.safe_load((tmp_path / 'bag' / 'recording.yaml').read_text())
    assert recorded['other_joint_states'] == 100


def test_recorder_names_a_joint_no_message_carries(tmp_path):
    typestore = recording_typestore(EXCITATION_MSG)
    rec = BagRecorder(tmp_path / 'bag', 'gripper_only', typestore=typestore,
                      joints=['joint_1', 'finger_left']).open(0)
    T = typestore.types
    msg = T['sensor_msgs/msg/JointState'](
        header=T['std_msgs/msg/Header'](stamp=T['builtin_interfaces/msg/Time'](sec=1, nanosec=0),
                                        frame_id=''),
        name=['joint_1'], position=np.zeros(1), velocity=np.zeros(0), effort=np.zeros(1))
    raw = bytes(typestore.serialize_cdr(msg, 'sensor_msgs/msg/JointState'))
    assert not rec.write_joint_state(raw, 10**9)
    summary = rec.close(2 * 10**9)
    assert summary.missing_joints == ['finger_left'] and summary.joint_state_messages == 0
    assert summary.lost_warning(0.01).endswith(
        'no /joint_states message carries joint(s) finger_left (1 message(s) without them)')
    broken = BagRecorder(tmp_path / 'b2', 'x', typestore=typestore, joints=['a']).open(0)
    with pytest.raises(InputError, match='too short'):
        broken.write_joint_state(raw[:10], 10**9)
    with pytest.raises(InputError, match='ends inside its joint names'):
        broken.write_joint_state(raw[:20], 10**9)
    closed = broken.close(10**9)                              # neither was written
    assert (closed.joint_state_messages, closed.other_joint_states) == (0, 0)
