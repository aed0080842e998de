"""The simulated friction demo (``make demo-friction``), as a client of the running graph:

the rigid body identified first, as a user would (a Fourier excitation, recorded; ``~/identify``
with the friction model and rotor inertias of the identification node's parameters) → one
joint-wise cosine experiment per joint (``ident_core.excitation.jointwise``: the joint on a fast
and a slow cosine around where it stands, the other joints held where they stand; one recorded
``RunExcitation`` goal each) → ``~/identify_friction`` on those bags with that rigid body
subtracted, every model of stribeck_friction_sa_ga_2020 by every optimiser → the improved
Stribeck parameters of each optimiser against the simulator's true friction
(``ground_truth.yaml``), and the drives' saturation (``truth_log.npz``). Results go to
``output_dir`` (RESULT.yaml, FRICTION.yaml, ``jointwise/``, ``friction_table.txt``,
``summary.yaml``); the bags to the recorder's folder. Exit code 0 only if every step succeeded;
missing the accuracy goals is reported, not an error.
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from pydantic import Field, NonNegativeInt, PositiveFloat
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from ident_core.data.joint_selection import JointSelection
from ident_core.excitation.jointwise import friction_constraints, friction_experiment
from ident_core.files import dump_yaml, read_yaml, write_atomic
from ident_core.friction.models import ORDER
from ident_core.friction.results import FrictionFile
from ident_core.schema import per_joint, with_default
from ident_core.sim.evaluation import (
    GOAL_PARAMETERS,
    compare_friction,
    load_ground_truth,
    worst_errors,
)
from ident_msgs.msg import RecordingInfo
from ident_msgs.srv import IdentifyFriction, IdentifyRecording
from ident_ros import lifecycle, qos
from ident_ros.robot_description import RobotDescriptionParameters
from ident_sim.demo import DemoClient, DemoClientParameters, DemoFailed

MODEL = 'improved-stribeck'


class FrictionDemoParameters(DemoClientParameters, RobotDescriptionParameters):
    """Parameters of the friction demo client (and those of ``DemoClientParameters``, with its
    own output folders; the robot model gives the limits of the joint-wise experiments)."""

    trajectory: str = Field('', description='Fourier trajectory file the rigid body is '
                            'identified on.')
    periods: NonNegativeInt = Field(0, description='Periods of ``trajectory`` (0: as in the '
                                    'file).')
    velocity_limits: list[PositiveFloat] = Field(
        [2.0, 1.2, 0.35, 3.0, 3.0, 3.0], description='Velocity limits of the joint-wise '
        'cosines [rad/s], one value or one per joint (URDF order).')
    acceleration_limit: PositiveFloat = Field(5.0, description='Acceleration limit of the '
                                              'joint-wise cosines [rad/s²].')
    slow_speed: PositiveFloat = Field(0.04, description='Peak speed of the slow cosine '
                                      '[rad/s].')
    friction_model: str = Field('all', description='Friction model(s) of the '
                                '``IdentifyFriction`` request (``~/identify_friction``).')
    optimizer: str = Field('all', description='Optimiser(s) of the ``IdentifyFriction`` '
                           'request.')
    linear_goal: PositiveFloat = Field(2.0, description='Accuracy goal of fc, fs, fv and '
                                       'offset [%].')
    shape_goal: PositiveFloat = Field(10.0, description='Accuracy goal of vs and v_l [%].')
    output_dir: str = with_default(DemoClientParameters, 'output_dir', 'output/demo_friction')
    ground_truth_dir: str = with_default(DemoClientParameters, 'ground_truth_dir',
                                         'output/demo_friction/ground_truth')
    identify_friction_service: str = Field('identification_node/identify_friction',
                                           description='IdentifyFriction service of the graph.')
    ground_truth_service: str = Field('ident_sim/write_ground_truth',
                                      description='Trigger service of the graph that writes '
                                                  'the truth log.')
    joint_states_topic: str = Field('joint_states',
                                    description='JointState topic: where the robot stands.')
    recordings_topic: str = Field('recorder/recordings',
                                  description="The recorder's RecordingInfo reports.")


class FrictionDemoNode(DemoClient):
    """Drives the graph through the friction experiment (module docstring)."""

    def __init__(self, **kwargs):
        super().__init__('friction_demo', FrictionDemoParameters, **kwargs)
        self.constraints = friction_constraints(
            self.robot, per_joint(self.p.velocity_limits, self.robot.n, 'velocity_limits'),
            self.p.acceleration_limit)
        self.identify = self.create_client(IdentifyRecording, self.p.identify_service)
        self.identify_friction = self.create_client(IdentifyFriction,
                                                    self.p.identify_friction_service)
        self.truth = self.create_client(Trigger, self.p.ground_truth_service)
        self.recordings: dict[str, RecordingInfo] = {}
        self.create_subscription(RecordingInfo, self.p.recordings_topic, self._on_recording,
                                 qos.LATCHED_HISTORY_QOS)

    def _on_recording(self, msg: RecordingInfo) -> None:
        if not msg.recording:
            self.recordings[msg.path] = msg

    async def _demo(self) -> None:
        if not self.excite.wait_for_server(timeout_sec=self.p.server_timeout):
            raise DemoFailed(f'action {self.p.excitation_action} not available')
        steps = {}
        bags = {'rigid_body': await self._excite('rigid_body', self.p.trajectory, self.p.periods)}
        steps['rigid-body excitation'] = time.monotonic() - self.started
        rigid = await self._call(self.identify, IdentifyRecording.Request(
            bag_path=bags['rigid_body'], result_path=str(self.out / 'RESULT.yaml')),
            'identify the rigid body')
        settings = read_yaml(rigid.result_path, 'identification result')['config']
        if settings['friction'] != MODEL or not settings['rotor_inertia']:
            raise DemoFailed(f'the identification node identified {settings["friction"]} '
                             f'friction, rotor inertia {settings["rotor_inertia"]}: start it with '
                             'config/six_axis_3kg/identification_node_friction.yaml')
        self.get_logger().info(f'rigid body identified: {rigid.result_path}')
        steps['rigid-body identification'] = time.monotonic() - self.started - sum(steps.values())
        experiments = {}
        for joint in self.robot.joint_names:
            standing = await self._where_it_stands()
            name = f'friction_{joint}'
            experiment = friction_experiment(self.constraints, joint, standing,
                                             self.p.slow_speed, name)
            path = experiment.to_file().write(self.out / 'jointwise' / f'{name}.yaml')
            experiments[joint] = str(path)
            bags[name] = await self._excite(name, str(path), 0)
        steps['joint-wise experiments'] = time.monotonic() - self.started - sum(steps.values())
        await self._call(self.truth, Trigger.Request(), 'write the ground truth')
        jointwise = [bags[f'friction_{joint}'] for joint in self.robot.joint_names]
        reply = await self._call(self.identify_friction, IdentifyFriction.Request(
            bag_paths=jointwise, model_path=rigid.result_path,
            friction_model=self.p.friction_model, optimizer=self.p.optimizer,
            result_path=str(self.out / 'FRICTION.yaml')), 'identify friction')
        self.get_logger().info(f'friction identified: {reply.message}')
        steps['friction identification'] = time.monotonic() - self.started - sum(steps.values())
        self._report(reply.result_path, rigid, bags, experiments, steps)

    async def _where_it_stands(self) -> np.ndarray:
        """The joint positions of the next JointState, URDF order [rad]."""
        future, selection = Future(), JointSelection(self.robot.joint_names)

        def on_state(msg: JointState):
            columns = selection.columns(msg.name)
            if columns is not None and not future.done():
                future.set_result(np.asarray(msg.position, dtype=float)[columns])

        def too_late():
            if not future.done():
                future.set_exception(DemoFailed(f'no JointState on {self.p.joint_states_topic} '
                                                f'within {self.p.server_timeout:g} s'))
        subscription = self.create_subscription(JointState, self.p.joint_states_topic, on_state,
                                                qos.JOINT_STATES_QOS)
        timer = self.create_timer(self.p.server_timeout, too_late)
        try:
            return await future
        finally:
            self.destroy_timer(timer)
            self.destroy_subscription(subscription)

    def _report(self, friction_path: str, rigid, bags: dict, experiments: dict,
                steps: dict) -> None:
        truth_dir = Path(self.p.ground_truth_dir)
        truth = true_friction(read_yaml(truth_dir / 'ground_truth.yaml', 'ground truth'))
        content = FrictionFile.read(friction_path)
        fits = {joint: entry.fits.get(MODEL, {}) for joint, entry in content.joints.items()}
        if not all(fits.values()):
            raise DemoFailed(f'{friction_path}: no {MODEL} fit of '
                             + ', '.join(j for j, f in fits.items() if not f))
        rows = compare_friction(fits, truth)
        worst = worst_errors(rows)
        goals = {'linear': self.p.linear_goal, 'shape': self.p.shape_goal}
        seconds = {model: optimizer_seconds({j: e.fits.get(model, {})
                                             for j, e in content.joints.items()})
                   for model in next(iter(content.joints.values())).fits}
        saturation = drive_saturation(load_ground_truth(truth_dir).log,
                                      self.robot.effort_limit, list(self.robot.joint_names))
        recordings = {path: {'joint_states': int(r.joint_state_messages),
                             'dropped': int(r.dropped), 'late': int(r.late)}
                      for path, r in self.recordings.items()}
        demo_seconds = time.monotonic() - self.started
        msg = rigid.parameters
        lines = friction_table(rows, truth, worst, goals)
        lines += ['', 'fit time per optimiser, all joints: ' + '; '.join(
                      f'{model}: ' + ', '.join(f'{o} {s:.1f} s' for o, s in by.items())
                      for model, by in seconds.items()),
                  'selected per joint: ' + ', '.join(
                      f'{j} {e.selected.model} ({e.selected.optimizer})'
                      for j, e in content.joints.items()),
                  'friction samples per joint: ' + ', '.join(
                      f'{j} {e.samples}' for j, e in content.joints.items()),
                  *(f'FIT FAILED: {key}: {why}' for key, why in content.failures.items()),
                  f'rigid body {rigid.result_path}: {msg.relative_error_percent:.2f} % relative '
                  f'error, condition number {msg.condition_number:.0f}',
                  saturation_line(saturation),
                  f'recordings: {len(recordings)} bags closed, '
                  f'{sum(r["dropped"] for r in recordings.values())} JointState samples dropped, '
                  f'{sum(r["late"] for r in recordings.values())} late',
                  f'friction file {friction_path}',
                  'steps: ' + ', '.join(f'{k} {v:.0f} s' for k, v in steps.items()),
                  f'demo time {demo_seconds:.1f} s (graph running)']
        write_atomic(self.out / 'friction_table.txt', '\n'.join(lines) + '\n')
        summary = {'result': rigid.result_path, 'friction_file': friction_path, 'bags': bags,
                   'experiments': experiments, 'model': MODEL, 'truth': truth,
                   'optimizers': rows, 'worst_error_percent': worst,
                   'goals_percent': goals,
                   'goals_met': {k: worst[k]['error'] <= goals[k] for k in goals},
                   'optimizer_seconds': seconds, 'failures': dict(content.failures),
                   'saturation': saturation, 'step_seconds': steps,
                   'recordings': recordings,
                   'rigid_body': {'relative_error_percent': msg.relative_error_percent,
                                  'condition_number': msg.condition_number},
                   'demo_seconds': demo_seconds}
        write_atomic(self.out / 'summary.yaml', dump_yaml(summary))
        print('\n'.join(lines), flush=True)


def true_friction(ground_truth: dict) -> dict[str, dict[str, float]]:
    """The simulator's true friction per joint, from ``ground_truth.yaml``.

    Parameters
    ----------
    ground_truth : dict
        The file's content (``robot.joints`` and the ``friction`` section).

    Returns
    -------
    dict of str to dict of str to float
        Per joint, its parameters (``ORDER`` names the simulator has).

    Raises
    ------
    DemoFailed
        If the file has no friction or not the improved Stribeck model.
    """
    try:
        friction, joints = ground_truth['friction'], ground_truth['robot']['joints']
    except (KeyError, TypeError):
        raise DemoFailed('ground truth without a friction section') from None
    if friction.get('model') != MODEL:
        raise DemoFailed(f'the simulator runs {friction.get("model")} friction, not {MODEL}: '
                         'start it with config/six_axis_3kg/ident_sim_friction.yaml')
    return {joint: {name: float(friction[name][j]) for name in ORDER if name in friction}
            for j, joint in enumerate(joints)}


def optimizer_seconds(fits: dict) -> dict[str, float]:
    """Time of each optimiser over all joints, for one model.

    Parameters
    ----------
    fits : dict of str to dict of str to FitEntry
        ``[joint][optimizer]``.

    Returns
    -------
    dict of str to float
        Per optimiser [s].
    """
    out: dict[str, float] = {}
    for by_optimizer in fits.values():
        for optimizer, fit in by_optimizer.items():
            out[optimizer] = out.get(optimizer, 0.0) + float(fit.seconds)
    return out


def drive_saturation(log: dict, effort_limit, joints: list[str]) -> dict:
    """How often the simulated drives saturated (``truth_log.npz``: the applied torque is
    clipped at the URDF's effort limit).

    Parameters
    ----------
    log : dict of str to ndarray
        The truth log (``torque`` (M, n)).
    effort_limit : (n,) array_like
        Effort limits [N·m]; 0 or infinite: none.
    joints : list of str
        (n,) names.

    Returns
    -------
    dict
        Per joint: ``samples`` at the limit and ``peak_ratio`` (largest |torque| / limit);
        plus ``total_samples``.
    """
    torque = np.abs(np.asarray(log['torque'], dtype=float))
    limit = np.asarray(effort_limit, dtype=float)
    limit = np.where((limit > 0) & np.isfinite(limit), limit, np.inf)
    at_limit = torque >= limit * (1 - 1e-9)
    ratio = torque.max(0) / limit if len(torque) else np.zeros(len(joints))
    out = {joint: {'samples': int(at_limit[:, j].sum()), 'peak_ratio': float(ratio[j])}
           for j, joint in enumerate(joints)}
    out['total_samples'] = int(len(torque))
    return out


def saturation_line(saturation: dict) -> str:
    """One line on ``drive_saturation``.

    Parameters
    ----------
    saturation : dict
        ``drive_saturation``.

    Returns
    -------
    str
    """
    joints = {j: s for j, s in saturation.items() if j != 'total_samples'}
    peaks = ' '.join(f'{s["peak_ratio"]:.2f}' for s in joints.values())
    hit = {j: s['samples'] for j, s in joints.items() if s['samples']}
    if not hit:
        return (f'saturation: none in the {saturation["total_samples"]} samples simulated so '
                f'far (peak |torque| / effort limit per joint: {peaks})')
    return ('SATURATION: ' + ', '.join(f'{j} {n} samples' for j, n in hit.items())
            + f' of {saturation["total_samples"]} at the effort limit (peak ratio {peaks})')


def friction_table(rows: dict, truth: dict, worst: dict, goals: dict) -> list[str]:
    """The lines of the comparison table.

    Parameters
    ----------
    rows : dict
        ``compare_friction``.
    truth : dict
        ``true_friction``.
    worst : dict
        ``worst_errors``.
    goals : dict of str to float
        ``linear`` and ``shape`` goals [%].

    Returns
    -------
    list of str
        Per joint the truth, then per optimiser the parameters (``ORDER``: N·m, rad/s,
        N·m·s/rad), RSS [(N·m)²] and fit time [s], and their errors [%]; then the worst errors
        against the goals.
    """
    header = (f'{"joint":<8}{"":<10}' + ''.join(f'{n:>11}' for n in ORDER)
              + f'{"RSS":>12}{"time s":>9}')
    lines = [f'{MODEL} friction per joint and optimiser vs the simulator\'s truth', header,
             '-' * len(header)]
    for joint, by_optimizer in rows.items():
        lines.append(f'{joint:<8}{"truth":<10}'
                     + ''.join(f'{truth[joint].get(n, math.nan):>11.5g}' for n in ORDER))
        for optimizer, row in by_optimizer.items():
            p, e = row['parameters'], row['error_percent']
            lines.append(f'{"":<8}{optimizer:<10}'
                         + ''.join(f'{p.get(n, math.nan):>11.5g}' for n in ORDER)
                         + f'{row["rss"]:>12.5g}{row["seconds"]:>9.1f}')
            lines.append(f'{"":<8}{"  error %":<10}'
                         + ''.join(f'{e.get(n, math.nan):>+11.2f}' for n in ORDER))
            lines += [f'{"":<18}warning: {w}' for w in row['warnings']]
    for kind, names in GOAL_PARAMETERS.items():
        w, goal = worst[kind], goals[kind]
        verdict = 'met' if w['error'] <= goal else 'MISSED'
        lines.append(f'worst error of {", ".join(names)}: {w["error"]:.2f} % ({w["joint"]} '
                     f'{w["parameter"]} by {w["optimizer"]}); goal {goal:g} %: {verdict}')
    return lines


def main(args=None):
    """Console script ``friction_demo``."""
    sys.exit(lifecycle.run(FrictionDemoNode, args=args))
