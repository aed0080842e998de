"""Simulated ros2_control hardware: behaves like a joint_trajectory_controller plus a
joint_state_broadcaster on EtherCAT drives (``ident_core.simulation``).

Subscribes ``trajectory_msgs/JointTrajectory`` (default ``/joint_trajectory_controller/
joint_trajectory``), publishes ``sensor_msgs/JointState`` on ``/joint_states`` at the control
rate with header stamps ``start + k·dt``, and optionally ``/clock``. The ground truth goes to
``ground_truth_dir`` (``ground_truth.yaml`` at start; ``truth_log.npz`` — every published stamp
with the true state and noise-free torque — on ``~/write_ground_truth`` and at shutdown), never
onto a topic. On SIGINT/SIGTERM it keeps running the commanded trajectory until the robot is at
rest (at most ``shutdown_settle_time`` s), as real hardware would, then writes the ground truth.
"""
from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import numpy as np
import yaml
from rclpy.time import Time
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from ident_core.errors import InputError
from ident_core.jtc import TrajectoryBuffer
from ident_core.results import write_atomic
from ident_core.robot_model import load_robot
from ident_core.simulation import (Friction, Payload, RobotSimulator, SimulationConfig,
                                   TruthLog)
from ident_node import runtime

MAX_CATCH_UP = 50          # steps per timer call when the process fell behind
REST_SPEED = 1e-3          # rad/s, "at rest" for the shutdown
REST_TIME = 0.2            # s at rest before the shutdown completes


class SimNode(runtime.GracefulNode):
    """The simulated hardware node (``ident_sim``)."""

    def __init__(self):
        super().__init__('ident_sim')
        p = {name: runtime.parameter(self, name, default) for name, default in PARAMETERS.items()}
        self.robot = load_robot(p['urdf_file'])
        self.config = _config(p, self.robot.n)
        self.sim = RobotSimulator(self.robot, self.config)
        self.dt_ns = int(round(self.config.dt * 1e9))
        self.buffer = TrajectoryBuffer(self.config.initial_position)
        self.log = TruthLog(self.robot.n)
        self.truth_dir = Path(p['ground_truth_dir']).resolve()
        self.settle_time = p['shutdown_settle_time']
        write_atomic(self.truth_dir / 'ground_truth.yaml',
                     yaml.safe_dump(self.sim.ground_truth(), sort_keys=False, width=120))
        self.joint_states = self.create_publisher(JointState, p['joint_states_topic'],
                                                  runtime.JOINT_STATES_QOS)
        self.clock = (self.create_publisher(Clock, '/clock', runtime.COMMAND_QOS)
                      if p['publish_clock'] else None)
        self.create_subscription(JointTrajectory, p['trajectory_topic'], self._on_trajectory,
                                 runtime.COMMAND_QOS)
        self.create_service(Trigger, '~/write_ground_truth', self._on_write_truth)
        # sim time 0 at the wall-clock start; stamps are exact multiples of dt after it
        self.start_ns = 0 if self.clock else self.get_clock().now().nanoseconds
        self.start_wall = time.monotonic()
        self.stamps: list[int] = []
        self.rest_since = None
        self.stop_deadline = None
        self.last_qd = np.zeros(self.robot.n)
        self.create_timer(self.config.dt, self._tick)
        self.get_logger().info(
            f'simulating {self.robot.model.name} ({self.robot.n} joints) at '
            f'{1 / self.config.dt:g} Hz, ground truth in {self.truth_dir}')

    def _now(self) -> float:
        """Simulation time of the next step, s since the start."""
        return self.sim.time

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        try:
            idx = self.robot.joint_order(list(msg.joint_names), 'JointTrajectory')
            if len(idx) != self.robot.n:
                raise InputError('JointTrajectory must name all joints '
                                 f'({", ".join(self.robot.joint_names)})')
            points = msg.points
            if not points:
                raise InputError('JointTrajectory has no points')
            times = np.array([pt.time_from_start.sec + 1e-9 * pt.time_from_start.nanosec
                              for pt in points])
            fields = []
            for name in ('positions', 'velocities', 'accelerations'):
                rows = [getattr(pt, name) for pt in points]
                if all(len(r) == len(idx) for r in rows):
                    fields.append(np.array(rows, dtype=float)[:, idx])
                elif name == 'positions' or any(len(r) for r in rows):
                    raise InputError(f'JointTrajectory: every point needs {len(idx)} {name}')
                else:
                    fields.append(None)
            stamp = Time.from_msg(msg.header.stamp).nanoseconds
            now = self._now()
            start = now if stamp == 0 else (stamp - self.start_ns) * 1e-9
            if not self.buffer.replace(now, start, times, *fields):
                self.get_logger().warning('JointTrajectory ignored: all its points are in the past')
        except InputError as exc:
            self.get_logger().error(f'JointTrajectory rejected: {exc}')

    def _tick(self) -> None:
        due = int((time.monotonic() - self.start_wall) / self.config.dt) + 1
        for _ in range(min(due - self.sim.step_count, MAX_CATCH_UP)):
            self._step()
        if self.shutdown_requested:
            self._check_rest()

    def _step(self) -> None:
        now = self._now()
        sample = self.sim.step(*self.buffer.sample(now))
        self.log.append(sample)
        self.last_qd = sample.qd
        stamp_ns = self.start_ns + sample.step * self.dt_ns
        self.stamps.append(stamp_ns)
        msg = JointState()
        msg.header.stamp = Time(nanoseconds=stamp_ns).to_msg()
        msg.name = list(self.robot.joint_names)
        msg.position = sample.position.tolist()
        msg.velocity = sample.velocity.tolist()
        msg.effort = sample.effort.tolist()
        if self.clock is not None:
            self.clock.publish(Clock(clock=msg.header.stamp))
        self.joint_states.publish(msg)

    def _check_rest(self) -> None:
        now = self._now()
        commanded = self.buffer.sample(now)[1]
        if np.abs(self.last_qd).max() < REST_SPEED and not np.any(commanded):
            self.rest_since = now if self.rest_since is None else self.rest_since
        else:
            self.rest_since = None
        at_rest = self.rest_since is not None and now - self.rest_since >= REST_TIME
        if at_rest or now >= self.stop_deadline:
            if not at_rest:
                self.get_logger().warning(f'robot not at rest {self.settle_time:g} s after the '
                                          'shutdown request')
            self.finished = True

    def request_shutdown(self) -> None:
        self.stop_deadline = self._now() + self.settle_time

    def _on_write_truth(self, _request, response):
        path = self.write_truth_log()
        response.success, response.message = True, str(path)
        return response

    def write_truth_log(self) -> Path:
        """Write ``truth_log.npz`` atomically: stamp_ns (M,) int64 of every published
        JointState, and the true q, qd, qdd and noise-free torque (M, n)."""
        arrays = self.log.arrays()
        arrays['stamp_ns'] = np.array(self.stamps, dtype=np.int64)
        arrays['joint_names'] = np.array(self.robot.joint_names)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return write_atomic(self.truth_dir / 'truth_log.npz', buffer.getvalue())

    def close(self) -> None:
        if hasattr(self, 'log'):
            path = self.write_truth_log()
            self.get_logger().info(f'{self.sim.step_count} samples published, max |qd| at the '
                                   f'end {np.abs(self.last_qd).max():.2e} rad/s, truth log {path}')


PARAMETERS = {
    'urdf_file': '',
    'rate_hz': 1000.0,
    'seed': 0,
    'perturbation': 0.2,
    'rotor_inertia': [0.0],
    'friction_model': 'coulomb-viscous',
    'coulomb': [0.0],
    'viscous': [0.0],
    'offset': [0.0],
    'stribeck_static': [0.0],
    'stribeck_velocity': [0.0],
    'stribeck_exponent': [0.0],
    'reversal_band': 0.001,
    'position_resolution': 2 * np.pi / 2 ** 17 / 100,
    'torque_noise_std': [0.0],
    'effort_resolution': [0.0],
    'kp': [2500.0],
    'kd': [100.0],
    'controller_rotor_inertia': [0.0],
    'controller_coulomb': [0.0],
    'controller_viscous': [0.0],
    'initial_position': [0.0],
    'payload_mass': 0.0,
    'payload_com': [0.0, 0.0, 0.0],
    'payload_inertia': [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    'payload_frame': 'flange',
    'trajectory_topic': '/joint_trajectory_controller/joint_trajectory',
    'joint_states_topic': '/joint_states',
    'ground_truth_dir': 'ground_truth',
    'publish_clock': False,
    'shutdown_settle_time': 3.0,
}


def _config(p: dict, n: int) -> SimulationConfig:
    if not p['urdf_file']:
        raise InputError('parameter urdf_file is empty')
    if p['rate_hz'] <= 0:
        raise InputError('parameter rate_hz must be positive')
    joint = {k: runtime.per_joint(p[k], n, k) for k, default in PARAMETERS.items()
             if isinstance(default, list) and len(default) == 1}
    stribeck = p['friction_model'] == 'stribeck'
    friction = Friction(fc=joint['coulomb'], fv=joint['viscous'], offset=joint['offset'],
                        v_l=np.full(n, p['reversal_band']), model=p['friction_model'],
                        fs=joint['stribeck_static'] if stribeck else None,
                        vs=joint['stribeck_velocity'] if stribeck else None,
                        delta=joint['stribeck_exponent'] if stribeck else None)
    payload = (Payload(p['payload_mass'], np.asarray(p['payload_com'], float),
                       np.asarray(p['payload_inertia'], float), p['payload_frame'])
               if p['payload_mass'] > 0 else None)
    return SimulationConfig(
        rotor_inertia=joint['rotor_inertia'], friction=friction,
        torque_noise_std=joint['torque_noise_std'], effort_resolution=joint['effort_resolution'],
        kp=joint['kp'], kd=joint['kd'], controller_armature=joint['controller_rotor_inertia'],
        controller_fc=joint['controller_coulomb'], controller_fv=joint['controller_viscous'],
        initial_position=joint['initial_position'],
        position_resolution=p['position_resolution'], dt=1.0 / p['rate_hz'], seed=p['seed'],
        perturbation=p['perturbation'], payload=payload)


def main(args=None):
    sys.exit(runtime.run(SimNode, args=args))
