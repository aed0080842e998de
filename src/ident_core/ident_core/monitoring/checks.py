"""One status per task of the suite's nodes, from the numbers they keep and their limits.

Keys are snake_case with the SI unit at the end (``_s``, ``_rad``, ``_m``, ``_Nm``, ``_N``;
none for counts and ratios); per-joint values are keyed ``<joint>.<quantity>_<unit>``, the unit
of a prismatic joint in m and N, of a revolute one in rad and N·m.
"""
from __future__ import annotations

import numpy as np

from .statistics import InnovationStatistics, RealtimeMonitor, RunningStatistics, SampleWindow
from .status import Level, Status, make_status


def _units(prismatic, revolute_unit: str, prismatic_unit: str) -> list[str]:
    return [prismatic_unit if p else revolute_unit for p in prismatic]


def recording_status(*, recording: bool, experiment: str, joint_state_messages: int,
                     expected_samples: int, dropped: int, late: int, out_of_order: int,
                     lost_seconds: float, recording_time: float, silence: float | None,
                     late_threshold: float, lost_warning_fraction: float,
                     stream_timeout: float) -> Status:
    """The recorder's status: drops and late messages of the joint-state stream of a bag.

    Parameters
    ----------
    recording : bool
        A bag is open; else the counts are those of the last bag.
    experiment : str
        The bag's experiment; ``''`` when no bag was recorded yet.
    joint_state_messages : int
        JointState messages received into the bag.
    expected_samples : int
        What the nominal period fits into the recording's time (0 while unknown).
    dropped : int
        Drops: samples estimated missing from the gaps between consecutive header stamps (a
        gap of at least 1.5 nominal periods counts ``round(gap/period) − 1``).
    late : int
        Late samples: received more than ``late_threshold`` after their header stamp.
    out_of_order : int
        Samples whose header stamp is not newer than the newest received before them (also
        late: they arrived after a newer one).
    lost_seconds : float
        Time without samples in gaps longer than the recorder's gap tolerance [s].
    recording_time : float
        The recording's time so far [s].
    silence : float or None
        Time since the latest JointState while recording [s]; None when idle or before the
        first sample's time is known.
    late_threshold : float
        [s], see ``late``.
    lost_warning_fraction : float
        WARN when the drops, the lost time, or the late and out-of-order samples exceed this
        fraction (of the expected samples, of the recording time, of the messages).
    stream_timeout : float
        ERROR while recording when no JointState came for longer than this [s].

    Returns
    -------
    Status
        Task ``recording``; keys ``recording``, ``experiment``, ``joint_state_messages``,
        ``expected_samples``, ``dropped_samples``, ``dropped_fraction``, ``late_samples``,
        ``out_of_order_samples``, ``late_threshold_s``, ``lost_time_s``, ``recording_time_s``,
        ``stream_silence_s``.
    """
    values = {'recording': recording, 'experiment': experiment,
              'joint_state_messages': joint_state_messages, 'expected_samples': expected_samples,
              'dropped_samples': dropped}
    received = joint_state_messages + dropped
    dropped_fraction = dropped / received if received else 0.0
    late_fraction = (late + out_of_order) / joint_state_messages if joint_state_messages else 0.0
    lost_fraction = lost_seconds / recording_time if recording_time > 0 else 0.0
    values.update(dropped_fraction=dropped_fraction, late_samples=late,
                  out_of_order_samples=out_of_order, late_threshold_s=late_threshold,
                  lost_time_s=lost_seconds, recording_time_s=recording_time,
                  stream_silence_s=silence)
    if not experiment:
        return make_status('recording', [], values, 'idle, nothing recorded yet')
    checks = []
    if recording and silence is not None and silence > stream_timeout:
        checks.append((Level.ERROR, f'no joint_states for {silence:.1f} s (limit '
                                    f'{stream_timeout:g} s)'))
    if dropped_fraction > lost_warning_fraction:
        checks.append((Level.WARN, f'{dropped} samples dropped ({100 * dropped_fraction:.2f} %'
                                   f' > {100 * lost_warning_fraction:g} %)'))
    if lost_fraction > lost_warning_fraction:
        checks.append((Level.WARN, f'{lost_seconds:.3f} s of {recording_time:.3f} s without '
                                   f'samples ({100 * lost_fraction:.2f} % > '
                                   f'{100 * lost_warning_fraction:g} %)'))
    if late_fraction > lost_warning_fraction:
        checks.append((Level.WARN, f'{late} late (> {late_threshold:g} s) and {out_of_order} '
                                   f'out-of-order samples ({100 * late_fraction:.2f} % > '
                                   f'{100 * lost_warning_fraction:g} %)'))
    prefix = '' if recording else f'last recording {experiment}: '
    status = make_status('recording', checks, values,
                         f'{joint_state_messages} samples, none dropped or late beyond '
                         f'{100 * lost_warning_fraction:g} %')
    if recording:
        return status
    return Status(status.task, status.level, prefix + status.message, status.values)


def tracking_status(*, joint_names: list[str], prismatic, errors: RunningStatistics | None,
                    limit: np.ndarray, warning_fraction: float, running: bool,
                    failure: str) -> Status:
    """The excitation node's status: how far the measured positions are from the command.

    Parameters
    ----------
    joint_names : list of str
        (n,) joints of the motion.
    prismatic : (n,) array_like of bool
        Prismatic joints (errors in m, else rad).
    errors : RunningStatistics or None
        ``|measured − commanded|`` per joint [rad or m], since the motion began (of the last
        motion when none runs); None before the first motion.
    limit : (n,) ndarray
        Tracking error that stops the motion (the watchdog's) [rad or m].
    warning_fraction : float
        WARN when a joint's largest error exceeds this fraction of its limit.
    running : bool
        A motion runs.
    failure : str
        Why the watchdog stopped the last motion (ERROR), or ``''``.

    Returns
    -------
    Status
        Task ``excitation tracking``; keys ``running``, ``samples``,
        ``tracking_error_max_ratio`` (largest error over its limit), ``worst_joint``, and per
        joint ``<joint>.tracking_error_max_<unit>``, ``<joint>.tracking_error_rms_<unit>``,
        ``<joint>.tracking_error_limit_<unit>``.
    """
    limit = np.asarray(limit, dtype=float)
    units = _units(prismatic, 'rad', 'm')
    count = errors.count if errors is not None else 0
    worst_max = errors.max_abs if count else np.zeros(len(joint_names))
    rms = errors.rms if count else np.full(len(joint_names), np.nan)
    ratios = worst_max / limit
    worst = int(np.argmax(ratios))
    values = {'running': running, 'samples': count,
              'tracking_error_max_ratio': float(ratios[worst]),
              'worst_joint': joint_names[worst] if count else ''}
    for j, name in enumerate(joint_names):
        values[f'{name}.tracking_error_max_{units[j]}'] = float(worst_max[j])
        values[f'{name}.tracking_error_rms_{units[j]}'] = float(rms[j])
        values[f'{name}.tracking_error_limit_{units[j]}'] = float(limit[j])
    checks = []
    if failure:
        checks.append((Level.ERROR, f'motion stopped: {failure}'))
    if ratios[worst] > warning_fraction:
        checks.append((Level.WARN, f'{joint_names[worst]} tracking error '
                                   f'{worst_max[worst]:.3g} {units[worst]} is above '
                                   f'{warning_fraction:g} of its limit {limit[worst]:g} '
                                   f'{units[worst]}'))
    ok = ('no motion yet' if not count else
          f'{"following" if running else "last motion followed"} the command (largest error '
          f'{ratios[worst]:.2g} of the limit, on {joint_names[worst]})')
    return make_status('excitation tracking', checks, values, ok)


def identification_status(*, joint_names: list[str], prismatic, stats: dict | None,
                          validation_relative_error_percent: float | None, identifications: int,
                          failure: str, condition_number_warning: float,
                          relative_error_warning_percent: float) -> Status:
    """The identification node's status: conditioning and residuals of the latest
    identification.

    Parameters
    ----------
    joint_names : list of str
        (n,) joints.
    prismatic : (n,) array_like of bool
        Prismatic joints (residuals in N, else N·m).
    stats : dict or None
        ``IdentificationStats`` of the latest identification (``condition_number``,
        ``residual_rms`` (n,) [N·m or N], ``relative_error_percent``, ``samples``); None
        before the first.
    validation_relative_error_percent : float or None
        Relative error of its first validation [%], None without one.
    identifications : int
        Identifications that succeeded since the start.
    failure : str
        Why the latest identification failed (ERROR), ``''`` if it succeeded.
    condition_number_warning : float
        WARN above this condition number of the base regressor (a trajectory that excites
        the parameters poorly).
    relative_error_warning_percent : float
        WARN above this relative error of the fit or of the validation [%].

    Returns
    -------
    Status
        Task ``identification``; keys ``identifications``, ``condition_number``,
        ``relative_error_percent``, ``validation_relative_error_percent``, ``samples`` and per
        joint ``<joint>.residual_rms_<Nm or N>``.
    """
    stats = stats or {}
    units = _units(prismatic, 'Nm', 'N')
    cond = float(stats.get('condition_number', float('nan')))
    error = float(stats.get('relative_error_percent', float('nan')))
    residuals = list(stats.get('residual_rms') or [float('nan')] * len(joint_names))
    values = {'identifications': identifications, 'condition_number': cond,
              'relative_error_percent': error,
              'validation_relative_error_percent': validation_relative_error_percent,
              'samples': int(stats.get('samples', 0))}
    for name, unit, rms in zip(joint_names, units, residuals):
        values[f'{name}.residual_rms_{unit}'] = float(rms)
    checks = []
    if failure:
        checks.append((Level.ERROR, f'the latest identification failed: {failure}'))
    if cond > condition_number_warning:
        checks.append((Level.WARN, f'condition number {cond:.4g} > '
                                   f'{condition_number_warning:g}: the trajectory excites the '
                                   'parameters poorly'))
    for what, value in (('fit', error), ('validation', validation_relative_error_percent)):
        if value is not None and value > relative_error_warning_percent:
            checks.append((Level.WARN, f'{what} relative error {value:.3g} % > '
                                       f'{relative_error_warning_percent:g} %'))
    ok = ('no identification yet' if not stats else
          f'condition number {cond:.4g}, relative error {error:.3g} %')
    return make_status('identification', checks, values, ok)


def estimator_status(*, joint_names: list[str], prismatic, method: str, identified: bool,
                     samples: int, refused: int, period: float, latency: SampleWindow,
                     compute_time: SampleWindow, innovations: InnovationStatistics | None,
                     latency_warning: float, nis_warning: float, skipped: int = 0,
                     missing: str = '') -> Status:
    """The torque estimator's status: latency and the Kalman filter's innovation.

    Parameters
    ----------
    joint_names : list of str
        (n,) joints.
    prismatic : (n,) array_like of bool
        Prismatic joints (innovations in N, else N·m).
    method : str
        The estimation method.
    identified : bool
        The model is an identified one (else the URDF's).
    samples, refused : int
        JointState samples estimated and refused in the reporting period.
    period : float
        The reporting period [s].
    latency : SampleWindow
        Latest latencies: publication of an estimate minus its sample's header stamp [s].
    compute_time : SampleWindow
        Latest times to compute an estimate [s].
    innovations : InnovationStatistics or None
        The Kalman filter's innovations over the reporting period; None for other methods.
    latency_warning : float
        WARN when the 95th percentile of the latency exceeds this [s].
    nis_warning : float
        WARN when a joint's mean normalised innovation squared exceeds this (1 for a filter
        whose model and noise are right).
    skipped : int, optional
        JointState messages without every joint in the reporting period (another
        publisher's, e.g. a gripper's: no fault).
    missing : str, optional
        Why none was a sample (``JointSelection.problem``: the joints no message names): an
        ERROR.

    Returns
    -------
    Status
        Task ``torque estimation``; keys ``method``, ``model``, ``samples``, ``refused``,
        ``skipped``,
        ``latency_p50_s``, ``latency_p95_s``, ``latency_max_s``, ``compute_time_p95_s``,
        ``innovation_outlier_fraction`` and per joint ``<joint>.innovation_rms_<Nm or N>``,
        ``<joint>.innovation_nis`` (NaN without a Kalman filter or samples).
    """
    n = len(joint_names)
    units = _units(prismatic, 'Nm', 'N')
    p95 = latency.percentile(95)
    values = {'method': method, 'model': 'identified' if identified else 'urdf',
              'samples': samples, 'refused': refused, 'skipped': skipped,
              'latency_p50_s': latency.percentile(50),
              'latency_p95_s': p95, 'latency_max_s': latency.maximum(),
              'compute_time_p95_s': compute_time.percentile(95)}
    kalman = innovations is not None and innovations.count > 0
    rms = innovations.rms if kalman else np.full(n, np.nan)
    nis = innovations.nis if kalman else np.full(n, np.nan)
    values['innovation_outlier_fraction'] = innovations.outlier_fraction if kalman else None
    for j, name in enumerate(joint_names):
        values[f'{name}.innovation_rms_{units[j]}'] = float(rms[j])
        values[f'{name}.innovation_nis'] = float(nis[j])
    checks = [(Level.ERROR, missing)] if missing else []
    if refused:
        level = Level.ERROR if not samples else Level.WARN
        checks.append((level, f'{refused} of {samples + refused} joint_states refused in '
                              f'{period:g} s (NaN, inconsistent arrays or out of order)'))
    if samples and p95 > latency_warning:        # no stale latency once the stream stops
        checks.append((Level.WARN, f'latency {1e3 * p95:.3g} ms (95th percentile) > '
                                   f'{1e3 * latency_warning:g} ms'))
    if kalman and np.nanmax(nis) > nis_warning:
        worst = int(np.nanargmax(nis))
        checks.append((Level.WARN, f'{joint_names[worst]} innovation {nis[worst]:.3g} times '
                                   f'its predicted variance (> {nis_warning:g}): the model '
                                   'misses the dynamics'))
    ok = (f'no joint_states in {period:g} s' if not samples else
          f'{samples} samples in {period:g} s, latency {1e3 * p95:.3g} ms (95th percentile)')
    return make_status('torque estimation', checks, values, ok)


def realtime_status(*, monitor: RealtimeMonitor, control_period: float, lag_warning: float,
                    lag_error: float) -> Status:
    """The simulator's status: its lag behind the wall clock and its timer overruns.

    Parameters
    ----------
    monitor : RealtimeMonitor
        The simulation's lag since the last reporting period.
    control_period : float
        Simulation step [s].
    lag_warning, lag_error : float
        WARN and ERROR when the largest lag of the period exceeds these [s].

    Returns
    -------
    Status
        Task ``real time``; keys ``lag_s``, ``max_lag_s`` (in the period), ``overruns``
        (timer calls in the period that ran more than one step), ``overruns_total``,
        ``steps``, ``control_period_s``.
    """
    lag = monitor.max_lag
    values = {'lag_s': monitor.lag, 'max_lag_s': lag, 'overruns': monitor.period_overruns,
              'overruns_total': monitor.overruns, 'steps': monitor.steps,
              'control_period_s': control_period}
    checks = []
    if lag > lag_error:
        checks.append((Level.ERROR, f'{lag:.3f} s behind the wall clock (> {lag_error:g} s)'))
    elif lag > lag_warning:
        checks.append((Level.WARN, f'{lag:.3f} s behind the wall clock (> {lag_warning:g} s)'))
    return make_status('real time', checks, values,
                       f'in real time (largest lag {1e3 * lag:.3g} ms)')
