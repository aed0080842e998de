"""The torque-estimation job: filter the joint torques of a recording with a dynamic model,
estimate the external torques, detect collisions, write TORQUES.csv
(``torques_from_recording``; scara_kalman_torque_estimation_2018, docs/methods.md §12)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..data.readers import excitation_window
from ..errors import InputError
from ..excitation.fourier import load_trajectory
from ..files import write_atomic
from ..progress import Progress, describe
from ..sim.evaluation import load_ground_truth, true_torques
from ..torque_estimation.config import TorqueEstimatorConfig
from ..torque_estimation.dynamics import load_dynamic_model
from ..torque_estimation.offline import (
    TorqueEstimates,
    estimate_torques,
    fourier_reference,
    torques_csv,
)
from .inputs import Recording, RecordingOptions, read_recording
from .outputs import output_path


@dataclass
class TorquesOutcome:
    """What ``torques_from_recording`` estimated and wrote.

    Parameters
    ----------
    estimates : TorqueEstimates
        Filtered and external torques, collisions (and the true torques, when given).
    torques_path : Path
        TORQUES.csv, as written.
    """

    estimates: TorqueEstimates
    torques_path: Path

    @property
    def files(self) -> list[Path]:
        """The files written: TORQUES.csv."""
        return [self.torques_path]


def torques_from_recording(data: str | Path, config: TorqueEstimatorConfig | None = None, *,
                           model: str | Path | None = None, urdf: str | Path | None = None,
                           payload: str | Path | None = None,
                           ignore_urdf_change: bool = False,
                           reference: str | Path | None = None,
                           reference_start: float | None = None,
                           truth: str | Path | None = None,
                           recordings: RecordingOptions | None = None,
                           out: str | Path | None = None,
                           progress: Progress = None, smooth: bool = False) -> TorquesOutcome:
    """Run a torque estimator over a whole recording and write TORQUES.csv.

    Parameters
    ----------
    data : str or Path
        The recording (read whole: dataset description, ``.npz`` or rosbag2).
    config : TorqueEstimatorConfig, optional
        Method and settings (default: ``TorqueEstimatorConfig()``).
    model : str or Path, optional
        RESULT.yaml (friction, rotor inertia and transmission included).
    urdf : str or Path, optional
        Without ``model``: the URDF's rigid body; with it: the URDF to use instead of the one
        the result names.
    payload : str or Path, optional
        PAYLOAD.yaml of a payload mounted during the recording.
    ignore_urdf_change : bool
        Accept a URDF that differs from the one RESULT.yaml was identified with.
    reference : str or Path, optional
        The excitation trajectory the robot tracked; default: none (the state Kalman filter
        estimates from the encoders and torques).
    reference_start : float, optional
        Start of the reference's first period in the recording's time [s]; default for a
        rosbag2: the stamp of its ``ExcitationTrajectory`` message.
    truth : str or Path, optional
        A simulator's ground-truth folder (the recording a rosbag2 of that run): adds the true
        torques.
    recordings : RecordingOptions, optional
        Topics and damaged bags (default: ``RecordingOptions()``).
    out : str or Path, optional
        TORQUES.csv to write; default ``<recording>.torques.csv`` (``outputs.output_path``).
    progress : callable or object with ``update(n)``, optional
        Told of the samples done (``ident_core.progress``).
    smooth : bool
        Also smooth the torques over the whole recording (``smoothed_<joint>`` columns;
        ``torque_estimation.smoother``).

    Returns
    -------
    TorquesOutcome

    Raises
    ------
    InputError
        For bad files, a reference without its start, ground truth for a recording that is
        not a rosbag2, or bad data (naming the row and joint).
    """
    config = config or TorqueEstimatorConfig()
    dm = load_dynamic_model(model, urdf, payload, ignore_urdf_change)
    options = (recordings or RecordingOptions()).whole()
    describe(progress, f'reading {data}')
    recording = read_recording(data, options, dm.robot.joint_names)
    if truth and recording.stamps is None:
        raise InputError(f'--truth: {data} is not a rosbag2 (the ground truth is matched by '
                         'header stamps)')
    follow = None if reference is None else _reference(
        data, recording, reference, reference_start, dm.robot.joint_names, options)
    true = None if truth is None else load_ground_truth(truth)
    describe(progress, config.method)
    result = estimate_torques(dm, recording.dataset, config, follow, progress=progress,
                              smooth=smooth)
    if true is not None:
        result.true = true_torques(recording.dataset, recording.stamps, true,
                                   dm.robot)[result.rows]
    return TorquesOutcome(result, write_atomic(output_path('torques', data, out),
                                                       torques_csv(result)))


def _reference(data, recording: Recording, reference, start, joints: list[str],
               options: RecordingOptions):
    """The reference function of a trajectory file in ``joints`` order, its start from the
    bag's excitation description unless given."""
    if start is None:
        window = None if recording.stamps is None else excitation_window(
            Path(data), options.excitation_topic, recover=options.recover)
        if window is None:
            raise InputError(f'--reference: give --reference-start (where the trajectory starts'
                             f' in {Path(data)}; it holds no {options.excitation_topic} '
                             'message)')
        start = window[0] - (recording.stamps[0] - recording.dataset.t[0])
    return fourier_reference(load_trajectory(reference), joints, start)
