"""The simulated payload demo (``make demo-payload``), as a client of the running graph:

the same excitation without the payload (recorded) → the simulator mounts its configured payload
(``/ident_sim/set_payload``) → the excitation with it (recorded) → the robot's model identified
from the unloaded run (``~/identify``, for the model-based method) → the payload identified by
every method (``~/identify_payload``) → each method's mass, centre of mass and inertia against
the simulator's true payload (``ground_truth.yaml``). Results go to ``output_dir``
(PAYLOAD.yaml, RESULT.yaml, ``payload_table.txt``, ``summary.yaml``); the bags to the
recorder's folder. Exit code 0 only if every step succeeded.
"""
from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np
from pydantic import Field, NonNegativeInt
from std_srvs.srv import SetBool

from ident_core.errors import InputError
from ident_core.files import dump_yaml, read_yaml, write_atomic
from ident_core.model.inertial import inertia_matrix
from ident_core.payload.results import PayloadFile
from ident_core.schema import with_default
from ident_msgs.msg import Payload
from ident_msgs.srv import IdentifyPayload, IdentifyRecording
from ident_ros import lifecycle, qos
from ident_sim.demo import DemoClient, DemoClientParameters, DemoFailed


class PayloadDemoParameters(DemoClientParameters):
    """Parameters of the payload demo client (and those of ``DemoClientParameters``, with its
    own output folders)."""

    trajectory: str = Field('', description='Trajectory file run without and with the '
                            'payload.')
    periods: NonNegativeInt = Field(0, description='Periods of each run (0: as in the file).')
    payload_frame: str = Field('flange', description="Frame to identify the payload in (the "
                               "simulator's ``payload_frame``).")
    method: str = Field('all', description='Payload method, or ``all``.')
    identify_model: bool = Field(True, description='Identify the robot from the unloaded run '
                                 'first, for the model-based method.')
    output_dir: str = with_default(DemoClientParameters, 'output_dir', 'output/demo_payload')
    ground_truth_dir: str = with_default(DemoClientParameters, 'ground_truth_dir',
                                         'output/demo_payload/ground_truth')
    set_payload_service: str = Field('ident_sim/set_payload',
                                     description="SetBool service of the graph that mounts the "
                                                 "simulator's payload.")
    identify_payload_service: str = Field('identification_node/identify_payload',
                                          description='IdentifyPayload service of the graph.')
    payload_topic: str = Field('identification_node/payload',
                               description='Payload topic of the graph.')


class PayloadDemoNode(DemoClient):
    """Drives the graph through the payload experiment (module docstring)."""

    def __init__(self, **kwargs):
        super().__init__('payload_demo', PayloadDemoParameters, **kwargs)
        self.set_payload = self.create_client(SetBool, self.p.set_payload_service)
        self.identify = self.create_client(IdentifyRecording, self.p.identify_service)
        self.identify_payload = self.create_client(IdentifyPayload,
                                                   self.p.identify_payload_service)
        self.payload = None
        self.create_subscription(Payload, self.p.payload_topic, self._on_payload,
                                 qos.LATCHED_QOS)

    def _on_payload(self, msg: Payload) -> None:
        self.payload = msg

    async def _demo(self) -> None:
        if not self.excite.wait_for_server(timeout_sec=self.p.server_timeout):
            raise DemoFailed(f'action {self.p.excitation_action} not available')
        await self._call(self.set_payload, SetBool.Request(data=False), 'remove the payload')
        bags = {'unloaded': await self._excite('unloaded', self.p.trajectory, self.p.periods)}
        reply = await self._call(self.set_payload, SetBool.Request(data=True),
                                 'mount the payload')
        self.get_logger().info(reply.message)
        bags['loaded'] = await self._excite('loaded', self.p.trajectory, self.p.periods)
        model = ''
        if self.p.identify_model:
            model = (await self._call(self.identify, IdentifyRecording.Request(
                bag_path=bags['unloaded'], result_path=str(self.out / 'RESULT.yaml')),
                'identify the robot')).result_path
        reply = await self._call(self.identify_payload, IdentifyPayload.Request(
            unloaded_bag_paths=[bags['unloaded']], loaded_bag_paths=[bags['loaded']],
            model_path=model, method=self.p.method, frame=self.p.payload_frame,
            result_path=str(self.out / 'PAYLOAD.yaml')), 'identify the payload')
        self.get_logger().info(f'payload identified: {reply.message}')
        self._report(reply, bags, model)

    def _report(self, reply, bags: dict, model: str) -> None:
        truth = _true_payload(Path(self.p.ground_truth_dir) / 'ground_truth.yaml')
        if truth['frame'] != self.p.payload_frame:
            raise DemoFailed(f"the simulator's payload is in {truth['frame']}, the demo "
                             f'identified it in {self.p.payload_frame}')
        if self.payload is None:
            raise DemoFailed(f'no Payload message received on {self.p.payload_topic}')
        failures = PayloadFile.read(reply.result_path).failures
        rows = {msg.method: _compare(msg, truth) for msg in reply.methods}
        seconds = time.monotonic() - self.started
        lines = payload_table(truth, rows, failures, reply.payload.method)
        lines += ['', f'bags: {bags["unloaded"]} (unloaded), {bags["loaded"]} (loaded)',
                  f'payload file {reply.result_path}',
                  f'demo time {seconds:.1f} s (graph running)']
        write_atomic(self.out / 'payload_table.txt', '\n'.join(lines) + '\n')
        summary = {'payload_file': reply.result_path, 'model': model or None, 'bags': bags,
                   'frame': self.p.payload_frame, 'selected': reply.payload.method,
                   'truth': truth, 'methods': rows, 'failures': dict(failures),
                   'payload_message_method': self.payload.method, 'demo_seconds': seconds}
        write_atomic(self.out / 'summary.yaml', dump_yaml(summary))
        print('\n'.join(lines), flush=True)


def _true_payload(path: Path) -> dict:
    """The configured payload of the simulator's ``ground_truth.yaml``: frame, mass [kg], com
    (3,) [m], inertia (3, 3) about the COM [kg·m²]."""
    try:
        payload = read_yaml(path, 'ground truth')['payload']
    except (InputError, KeyError, TypeError) as exc:
        raise DemoFailed(f'{path}: no payload section ({exc})') from None
    if payload is None:
        raise DemoFailed(f'{path}: the simulator has no payload (start it with payload_mass:=KG)')
    return {'frame': payload['frame'], 'mass': float(payload['mass']),
            'com': [float(c) for c in payload['com']],
            'inertia': inertia_matrix(payload['inertia']).tolist()}


def _inertia(msg) -> np.ndarray:
    """(3, 3) from a ``geometry_msgs/Inertia``."""
    return np.array([[msg.ixx, msg.ixy, msg.ixz], [msg.ixy, msg.iyy, msg.iyz],
                     [msg.ixz, msg.iyz, msg.izz]])


def _compare(msg: Payload, truth: dict) -> dict:
    """One method's estimate, standard deviations and errors against the truth (SI units; the
    inertia error is ‖I − I_true‖_F / ‖I_true‖_F in %, None without an inertia)."""
    com = np.array([msg.inertia.com.x, msg.inertia.com.y, msg.inertia.com.z])
    com_std = np.array([msg.std.com.x, msg.std.com.y, msg.std.com.z])
    inertia, inertia_std = _inertia(msg.inertia), _inertia(msg.std)
    true_inertia = np.array(truth['inertia'])
    estimated = not math.isnan(msg.inertia.ixx)
    return {
        'mass': msg.inertia.m, 'mass_std': msg.std.m, 'mass_error': msg.inertia.m - truth['mass'],
        'com': com.tolist(), 'com_std': com_std.tolist(),
        'com_error': (com - truth['com']).tolist(),
        'inertia': inertia.tolist() if estimated else None,
        'inertia_std': inertia_std.tolist() if estimated else None,
        'principal_inertias': np.linalg.eigvalsh(inertia).tolist() if estimated else None,
        'inertia_error_percent': float(100 * np.linalg.norm(inertia - true_inertia)
                                       / np.linalg.norm(true_inertia)) if estimated else None,
        'physically_consistent': msg.physically_consistent, 'unexcited': list(msg.unexcited)}


def payload_table(truth: dict, rows: dict, failures: dict, selected: str) -> list[str]:
    """The lines of the comparison table.

    Parameters
    ----------
    truth : dict
        The true payload (``_true_payload``).
    rows : dict of str to dict
        Per method, ``_compare``.
    failures : dict of str to str
        Methods without an estimate and why.
    selected : str
        The method the node selected.

    Returns
    -------
    list of str
        Mass [kg], centre of mass [mm], principal inertias [kg·m²], their standard deviations
        (inertia: of the diagonal) and the errors against the truth.
    """
    def mm(values, fmt='7.2f'):
        return ' '.join(f'{1e3 * v:{fmt}}' for v in values)

    def moments(values):
        return ' '.join(f'{v:9.3e}' for v in values)

    true_moments = np.linalg.eigvalsh(np.array(truth['inertia']))
    header = (f'{"method":<21}{"mass kg":>9}{"± std":>9}{"error":>9}  {"COM mm (x y z)":<23}'
              f'{"± std mm":<19}{"|error| mm":>10}  {"principal inertias kg·m²":<30}'
              f'{"± std (diag)":<30}{"error %":>8}')
    lines = [f'Payload in {truth["frame"]} (selected: {selected})', header, '-' * len(header),
             f'{"truth":<21}{truth["mass"]:>9.4f}{"":>9}{"":>9}  {mm(truth["com"]):<23}'
             f'{"":<19}{"":>10}  {moments(true_moments):<30}']
    for name, r in rows.items():
        if r['inertia'] is None:
            inertia = f'{"not estimated":<30}{"":<30}{"":>8}'
        else:
            diag = np.diag(np.array(r['inertia_std']))
            inertia = (f'{moments(r["principal_inertias"]):<30}{moments(diag):<30}'
                       f'{r["inertia_error_percent"]:>8.1f}')
        lines.append(f'{name:<21}{r["mass"]:>9.4f}{r["mass_std"]:>9.4f}{r["mass_error"]:>+9.4f}  '
                     f'{mm(r["com"]):<23}{mm(r["com_std"], "5.2f"):<19}'
                     f'{1e3 * np.linalg.norm(r["com_error"]):>10.2f}  {inertia}')
        if not r['physically_consistent']:
            lines.append(f'{"":<21}not physically consistent')
        if r['unexcited']:
            lines.append(f'{"":<21}not excited: {", ".join(r["unexcited"])}')
    lines += [f'{name:<21}no estimate: {why}' for name, why in failures.items()]
    return lines


def main(args=None):
    """Console script ``payload_demo``."""
    sys.exit(lifecycle.run(PayloadDemoNode, args=args))

