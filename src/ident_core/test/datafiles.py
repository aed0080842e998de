"""Writers of test data files (CSV + YAML descriptions, NPZ, rosbag2/MCAP) and the check of a
one-line CLI error, shared by test_bad_input.py and test_datasets.py.

Data come from ``ident_core.synthetic`` (see the fixtures in conftest.py) and are written into
``tmp_path``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[3]
URDF = REPO / 'urdf' / 'six_axis_3kg.urdf'
JOINTS = [f'joint{i}' for i in range(1, 7)]
DURATION = 20.0        # s
RATE = 100.0           # Hz
TORQUE_NOISE = 0.05    # N·m
EXCITATION_TYPE = 'ident_msgs/msg/ExcitationTrajectory'
EXCITATION_MSG = REPO / 'src' / 'ident_msgs' / 'msg' / 'ExcitationTrajectory.msg'


def write_csv(path: Path, t, q, tau, header: bool = True, joints=JOINTS) -> Path:
    """Write the columns ``t, q_<joint>..., tau_<joint>...`` (optionally with a header row)."""
    values = np.column_stack([t, q, tau])
    names = ['t'] + [f'q_{j}' for j in joints] + [f'tau_{j}' for j in joints]
    np.savetxt(path, values, delimiter=',', header=','.join(names) if header else '',
               comments='', fmt='%.17g')
    return path


def description(csv_name: str, joints=JOINTS, header: bool = True) -> dict:
    """A dataset description of a CSV written by ``write_csv`` (columns by name or index)."""
    n = len(joints)
    if header:
        return {'joints': list(joints), 'file': csv_name, 'time': {'column': 't'},
                'position': {'columns': [f'q_{j}' for j in joints]},
                'effort': {'columns': [f'tau_{j}' for j in joints]}}
    return {'joints': list(joints), 'file': csv_name, 'time': {'column': 0},
            'position': {'columns': list(range(1, n + 1))},
            'effort': {'columns': list(range(n + 1, 2 * n + 1))}}


def write_yaml(path: Path, spec: dict) -> Path:
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


@dataclass
class CsvCase:
    """A valid CSV + YAML description pair and the arrays written into it.

    ``variant`` writes a modified copy under new file names (``<name>.csv``, ``<name>.yaml``), so
    that an error message can be checked for the name of the broken file.
    """

    dir: Path
    yaml: Path
    csv: Path
    spec: dict
    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    joints: list = field(default_factory=lambda: list(JOINTS))

    def variant(self, name: str, *, update: dict | None = None, remove=(), t=None, q=None,
                tau=None) -> Path:
        """A changed copy: the description updated with ``update`` and without the fields in
        ``remove``; the data with ``t``/``q``/``tau`` replaced. Returns the new YAML path; its
        data file is ``<name>.csv`` unless ``update`` sets ``file``."""
        csv_path = write_csv(self.dir / f'{name}.csv', self.t if t is None else t,
                             self.q if q is None else q, self.tau if tau is None else tau,
                             joints=self.joints)
        spec = {**self.spec, 'file': csv_path.name}
        spec.update(update or {})
        for key in remove:
            del spec[key]
        return write_yaml(self.dir / f'{name}.yaml', spec)


def make_csv_case(directory: Path, dataset) -> CsvCase:
    """Write ``good.csv`` (header row) and its description ``good.yaml``."""
    csv_path = write_csv(directory / 'good.csv', dataset.t, dataset.position, dataset.effort)
    spec = description(csv_path.name)
    yaml_path = write_yaml(directory / 'good.yaml', spec)
    return CsvCase(directory, yaml_path, csv_path, spec, dataset.t.copy(),
                   dataset.position.copy(), dataset.effort.copy())


def write_npz(path: Path, dataset, drop=()) -> Path:
    """An ``.npz`` with the KUKA keys times/positions/torques/velocities, minus ``drop``."""
    arrays = {'times': dataset.t, 'positions': dataset.position, 'torques': dataset.effort,
              'velocities': dataset.velocity}
    np.savez(path, **{k: v for k, v in arrays.items() if k not in drop and v is not None})
    return path


#: Joints of the other publisher of ``write_joint_state_bag(gripper_rate=...)``.
GRIPPER_JOINTS = ('finger_left', 'finger_right')


def write_joint_state_bag(path: Path, dataset, topic: str = '/joint_states',
                          shuffle_every: int = 0, seed: int = 0,
                          excitation: tuple[float, float, int] | None = None,
                          extra_joints: tuple[str, ...] = (),
                          gripper_rate: float = 0.0,
                          gripper_joints: tuple[str, ...] = GRIPPER_JOINTS) -> Path:
    """A rosbag2 folder (MCAP storage) with one ``sensor_msgs/msg/JointState`` per sample.

    ``shuffle_every``: every k-th message (k > 0) lists the joints in a random order.
    Header stamps are the sample times; receive times lag them by 1–3 ms.
    ``excitation``: (start [s, dataset time], period [s], periods) of an
    ``ident_msgs/msg/ExcitationTrajectory`` message on ``/excitation_node/trajectory`` stamped
    at the start, as the recorder stores the excitation node's description.
    ``extra_joints``: joints every sample's message carries too (before the dataset's, a mobile
    base's wheels; positions 0.5, efforts 7). ``gripper_rate`` > 0: another publisher's messages
    on the topic, ``gripper_joints`` only, every ``1/gripper_rate`` s from 0.0123 s on (between
    the samples, in stamp and receive order), as a gripper's joint_state_broadcaster.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    typestore = get_typestore(Stores.ROS2_KILTED)
    typestore.register(get_types_from_msg(EXCITATION_MSG.read_text(), EXCITATION_TYPE))
    JointState = typestore.types['sensor_msgs/msg/JointState']
    Header = typestore.types['std_msgs/msg/Header']
    Time = typestore.types['builtin_interfaces/msg/Time']
    msgtype = 'sensor_msgs/msg/JointState'
    rng = np.random.default_rng(seed)
    names = np.array(dataset.joint_names)
    t0 = 1_700_000_000 * 10**9
    extra = len(extra_joints)
    gripper = iter(np.arange(0.0123, dataset.t[-1], 1 / gripper_rate) if gripper_rate else ())
    next_gripper = next(gripper, None)

    def header(stamp):
        return Header(stamp=Time(sec=stamp // 10**9, nanosec=stamp % 10**9), frame_id='')
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection(topic, msgtype, typestore=typestore)
        for k, t in enumerate(dataset.t):
            while next_gripper is not None and next_gripper < t:
                stamp = t0 + int(round(next_gripper * 1e9))
                msg = JointState(header=header(stamp), name=list(gripper_joints),
                                 position=np.full(len(gripper_joints), 0.01),
                                 velocity=np.zeros(len(gripper_joints)),
                                 effort=np.full(len(gripper_joints), 3.0))
                writer.write(conn, stamp + 1_000_000, typestore.serialize_cdr(msg, msgtype))
                next_gripper = next(gripper, None)
            order = np.arange(len(names))
            if shuffle_every and k % shuffle_every == 0:
                order = rng.permutation(len(names))
            stamp = t0 + int(round(t * 1e9))
            velocity = (np.zeros(0) if dataset.velocity is None
                        else np.r_[np.zeros(extra), dataset.velocity[k, order]])
            msg = JointState(
                header=header(stamp),
                name=[*extra_joints, *(str(s) for s in names[order])],
                position=np.r_[np.full(extra, 0.5), dataset.position[k, order]],
                velocity=velocity,
                effort=np.r_[np.full(extra, 7.0), dataset.effort[k, order]])
            writer.write(conn, stamp + 1_000_000 + int(rng.integers(0, 2_000_000)),
                         typestore.serialize_cdr(msg, msgtype))
        if excitation is not None:
            start, period, periods = excitation
            stamp = t0 + int(round(start * 1e9))
            n = len(names)
            msg = typestore.types[EXCITATION_TYPE](
                header=Header(stamp=Time(sec=stamp // 10**9, nanosec=stamp % 10**9),
                              frame_id=''),
                name='test', joint_names=[str(s) for s in names], wf=2 * np.pi / period,
                harmonics=1, q0=np.zeros(n), a=np.zeros(n), b=np.zeros(n), period=period,
                periods=periods, stage=1, stages=1)
            conn = writer.add_connection('/excitation_node/trajectory', EXCITATION_TYPE,
                                         typestore=typestore)
            writer.write(conn, stamp, typestore.serialize_cdr(msg, EXCITATION_TYPE))
    return path


def assert_one_line_error(rc: int, capsys, *fragments) -> str:
    """The CLI refused the input: exit code 2, exactly one stderr line starting with
    ``robot-ident: error:`` that holds every fragment, and no traceback. Returns the line."""
    captured = capsys.readouterr()
    err = captured.err
    assert rc == 2, f'exit code {rc}, stderr: {err!r}'
    assert 'Traceback' not in err and 'Traceback' not in captured.out
    lines = err.splitlines()
    assert len(lines) == 1, f'expected one stderr line, got {len(lines)}: {err!r}'
    line = lines[0]
    assert line.startswith('robot-ident: error:'), line
    for fragment in fragments:
        assert str(fragment) in line, f'{fragment!r} not in {line!r}'
    return line
