"""The identification node's ``~/identify_friction`` in this process (one SingleThreadedExecutor,
a ROS domain of this test alone): from a bag of a joint-wise cosine experiment on joint4 with
known improved-Stribeck friction, it recovers the friction parameters, writes FRICTION.yaml and
publishes them on ``~/friction``; a joint that never moves and an unknown model are refused in
one line."""
from __future__ import annotations

import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / 'src' / 'ident_core' / 'test'))   # the core's test helpers
import datafiles  # synthetic JointState bags

from ident_core.excitation.jointwise import CosineSpec, JointwiseExperiment
from ident_core.friction.models import friction_torque
from ident_core.model.robot import load_robot
from ident_core.motion.limits import JointLimits
from ident_core.motion.plan import ExcitationPlan

URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
MOVING = 'joint4'
HOLD = [0.1, -0.5, 0.8, 0.0, 0.6, 0.0]                  # rad, URDF joint order
# A fast cosine (2.1 rad/s) for fc, fv, offset and a slow one (0.1 rad/s) for the Stribeck part.
COSINES = [CosineSpec(amplitude=1.0, period=3.0, periods=2),
           CosineSpec(amplitude=0.1, period=6.0, periods=2)]
# The true friction of joint4 (improved Stribeck model; delta = 2, the core's fixed default).
TRUTH = {'fc': 1.0, 'fs': 1.6, 'vs': 0.1, 'delta': 2.0, 'fv': 0.5, 'offset': 0.08, 'v_l': 0.02}
RATE = 500.0                 # Hz (the bag writer's receive-time jitter of 1–3 ms needs ≥ 3 ms)
TORQUE_NOISE = 0.01          # N·m, seeded
# With 0.01 N·m of noise on ~10 000 samples the linear parameters come out within 0.1 % and vs,
# v_l within 2 % (the band |u| < v_l is crossed in a few dozen samples); the limits leave room.
LINEAR_TOLERANCE = 0.02      # relative: fc, fs, fv, offset
SHAPE_TOLERANCE = 0.10       # relative: vs, v_l
TIMEOUT = 60.0               # s, guards against a hang only


@pytest.fixture
def bag(tmp_path) -> Path:
    """joint4 on the cosines of a joint-wise experiment (approach, transition and stop included,
    as the excitation node runs it), the other joints held; efforts = the URDF's rigid-body
    torque (RNEA) + the true friction of joint4 + noise."""
    robot = load_robot(URDF)
    names = list(robot.joint_names)
    experiment = JointwiseExperiment(MOVING, names, np.array(HOLD), COSINES, 'friction_joint4')
    limits = JointLimits.from_robot(robot, 20.0).with_margin(0.02)
    plan = ExcitationPlan(experiment.stages(), np.array(HOLD), limits)
    t = np.arange(0.0, plan.duration + 0.5, 1 / RATE)
    q, qd, qdd = plan.sample(t)
    data = robot.model.createData()
    tau = np.array([pin.rnea(robot.model, data, *x) for x in zip(q, qd, qdd)])
    tau[:, names.index(MOVING)] += friction_torque('improved-stribeck',
                                                   qd[:, names.index(MOVING)], TRUTH)[0]
    tau += TORQUE_NOISE * np.random.default_rng(5).standard_normal(tau.shape)
    recording = SimpleNamespace(t=t, joint_names=names, position=q, velocity=qd, effort=tau)
    return datafiles.write_joint_state_bag(tmp_path / 'friction_joint4', recording)


def test_identifies_friction_publishes_it_and_refuses_a_bad_request(ros, bag, tmp_path):
    rclpy, context = ros
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from ident_core.friction.results import FrictionFile
    from ident_msgs.msg import FrictionResult
    from ident_msgs.srv import IdentifyFriction
    from ident_node.identification_node import IdentificationNode
    from ident_ros import testing
    from ident_ros.qos import LATCHED_QOS

    node = IdentificationNode(context=context, parameter_overrides=[
        Parameter('urdf_file', value=str(URDF))])
    client = rclpy.create_node('identify_friction_test_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    for n in (node, client):
        executor.add_node(n)
    published = []
    client.create_subscription(FrictionResult, '/identification_node/friction',
                               published.append, LATCHED_QOS)
    service = client.create_client(IdentifyFriction, '/identification_node/identify_friction')

    def spin_until(condition, what):
        testing.spin_until(executor, condition, what, TIMEOUT)

    def call(**fields):
        future = service.call_async(IdentifyFriction.Request(**fields))
        spin_until(future.done, f'the reply to {fields}')
        return future.result()

    try:
        spin_until(service.service_is_ready, 'the identify_friction service')
        # joint1 stands still in this bag: refused, naming it
        still = call(bag_paths=[str(bag)], joints=['joint1'])
        assert not still.success and '\n' not in still.message
        assert 'joint1' in still.message and 'never moves' in still.message
        unknown = call(bag_paths=[str(bag)], friction_model='lugre')
        assert not unknown.success and '\n' not in unknown.message
        assert 'friction_model' in unknown.message and 'lugre' in unknown.message
        assert not node.busy

        result_path = tmp_path / 'FRICTION.yaml'
        reply = call(bag_paths=[str(bag)], result_path=str(result_path))
        assert reply.success, reply.message
        assert Path(reply.result_path) == result_path.resolve()
        (joint,) = reply.selected                     # every joint that moves: joint4 only
        assert (joint.joint, joint.model, joint.optimizer) == (MOVING, 'improved-stribeck',
                                                                'lsq')
        values = dict(zip(joint.parameter_names, joint.values))
        std = dict(zip(joint.parameter_names, joint.std))
        assert list(joint.parameter_names) == ['fc', 'fs', 'vs', 'delta', 'fv', 'offset', 'v_l']
        for name in ('fc', 'fs', 'fv', 'offset'):
            assert values[name] == pytest.approx(TRUTH[name], rel=LINEAR_TOLERANCE), name
        for name in ('vs', 'v_l'):
            assert values[name] == pytest.approx(TRUTH[name], rel=SHAPE_TOLERANCE), name
        assert values['delta'] == 2.0 and math.isnan(std['delta'])      # held fixed
        assert all(0 < std[n] < math.inf for n in std if n != 'delta')
        assert 0 < joint.rms < 3 * TORQUE_NOISE and joint.samples > 1000

        content = FrictionFile.read(result_path)
        assert list(content.joints) == [MOVING]
        assert content.joints[MOVING].parameters == pytest.approx(values)
        assert content.rigid_body_model.startswith('URDF')

        spin_until(lambda: published, 'the latched FrictionResult')
        assert len(published) == 1                    # the refused requests published nothing
        assert published[0].rigid_body_model == content.rigid_body_model
        assert [j.joint for j in published[0].joints] == [MOVING]
        assert list(published[0].joints[0].values) == list(joint.values)
    finally:
        executor.shutdown()
        for n in (client, node):
            n.destroy_node()
