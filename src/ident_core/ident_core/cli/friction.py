"""``robot-ident friction``: identify friction models per joint from (joint-wise) recordings by
least squares, the GA and the SA-GA, compare them on validation recordings, write FRICTION.yaml
(stribeck_friction_sa_ga_2020; docs/methods.md §8).

    robot-ident friction (--model RESULT.yaml | --urdf URDF) --data D [D ...] [--joints J ...]
                         [--friction-model improved-stribeck|...|all] [--optimizer lsq|ga|sa-ga|all]
                         [--validate D ...] [--fix delta=2] --out FRICTION.yaml
"""
from __future__ import annotations

import argparse

from ..errors import InputError
from ..friction.fit import OPTIMIZERS
from ..friction.identify import FrictionConfig
from ..friction.models import FRICTION_MODELS, ORDER, PAPER_MODELS, UNITS, parameter_names
from ..workflows.friction import friction_from_recordings
from .progress import progress_bar
from .recordings import add_recording_arguments, recording_options
from .report import REPORT_HELP, print_report


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the options of ``friction``.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The sub-parser of ``friction``.
    """
    p.add_argument('--model', metavar='RESULT.yaml', help='identified model whose rigid-body '
                   '(and rotor-inertia) torque is subtracted')
    p.add_argument('--urdf', help="robot URDF (without --model: the URDF's rigid-body model; "
                   'with it: replaces the recorded URDF path)')
    p.add_argument('--data', nargs='+', required=True, metavar='DATASET',
                   help='recordings, joint-wise cosine experiments (excite --jointwise)')
    p.add_argument('--joints', nargs='+', metavar='JOINT', help='joints to identify (default: '
                   'every joint that moves)')
    p.add_argument('--friction-model', default='improved-stribeck',
                   choices=FRICTION_MODELS + ('all',), help='friction model (all: '
                   f'{", ".join(PAPER_MODELS)})')
    p.add_argument('--optimizer', default='lsq', choices=OPTIMIZERS + ('all',))
    p.add_argument('--validate', nargs='+', default=[], metavar='DATASET',
                   help='recordings to compare the models on (residual sum of squares)')
    p.add_argument('--cutoff-hz', type=float, metavar='HZ', help='low-pass cut-off (default 30 '
                   'Hz, at most a fifth of the sample rate)')
    p.add_argument('--fix', nargs='+', default=None, metavar='NAME=VALUE',
                   help='parameters held at a value (default delta=2; "none": fit all)')
    p.add_argument('--seed', type=int, default=0, help='seed of the GA and SA-GA')
    add_recording_arguments(p, window=False)
    p.add_argument('--out', required=True, metavar='FRICTION.yaml')
    p.add_argument('--report', metavar='DIR', help=REPORT_HELP)
    p.add_argument('--ignore-urdf-change', action='store_true',
                    help='use a URDF that differs from the one RESULT.yaml was identified with')
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Identify, print the tables, write FRICTION.yaml; 0."""
    fit = FrictionConfig().fit.model_copy(update={'seed': args.seed})
    if args.fix is not None:
        fit = fit.model_copy(update={'fixed': _fixed(args.fix)})
    config = FrictionConfig(cutoff_hz=args.cutoff_hz, fit=fit)
    with progress_bar(args, 'friction', unit='fit') as bar:
        outcome = friction_from_recordings(
            args.data, config, robot=args.urdf, model=args.model,
            ignore_urdf_change=args.ignore_urdf_change, joints=args.joints,
            friction_model=args.friction_model, optimizer=args.optimizer,
            validation=args.validate, recordings=recording_options(args), out=args.out,
            report=args.report, progress=bar)
    print_tables(outcome.identification)
    print(f'\nfriction written to {outcome.friction_path}')
    print_report(outcome.report)
    return 0


def _fixed(items: list[str]) -> dict[str, float]:
    if items == ['none']:
        return {}
    out = {}
    for item in items:
        name, _, value = item.partition('=')
        if name not in ORDER or not value:
            raise InputError(f'--fix {item}: expected NAME=VALUE with NAME one of '
                             f'{", ".join(ORDER)}')
        try:
            out[name] = float(value)
        except ValueError:
            raise InputError(f'--fix {item}: {value!r} is not a number') from None
    return out


def print_tables(result) -> None:
    """Print, per joint and model, one row per optimiser (the paper's Table 1), the selected
    parameters of every joint (Table 3) and the validation RSS per model (Table 4).

    Parameters
    ----------
    result : FrictionIdentification
    """
    for joint, by_model in result.fits.items():
        s = result.samples[joint]
        print(f'\n{joint}: {s.count} samples, peak speed {s.peak_speed:.3g}, '
              f'{", ".join(s.sources)}')
        for model, fits in by_model.items():
            names = parameter_names(model)
            print(f'  {model:<22}' + ''.join(f'{n:>11}' for n in names)
                  + f'{"RSS":>12}{"time s":>9}')
            for optimizer, fit in fits.items():
                print(f'  {optimizer:<22}' + ''.join(f'{fit.parameters[n]:>11.4g}'
                                                     for n in names)
                      + f'{fit.rss:>12.5g}{fit.seconds:>9.2f}')
                std = ''.join(f'{"± " + format(fit.std[n], ".2g") if n in fit.std else "fixed":>11}'
                              for n in names)
                print(f'  {"":<22}{std}')
                for warning in fit.warnings:
                    print(f'  {"":<22}warning: {warning}')
    for key, why in result.failures.items():
        print(f'\nfailed: {key}: {why}')
    print('\nselected (' + ', '.join(f'{n} {UNITS[n]}'.strip() for n in ORDER) + ')')
    print(f'{"joint":<16}{"model":<24}' + ''.join(f'{n:>11}' for n in ORDER))
    for joint, fit in result.selected.items():
        print(f'{joint:<16}{fit.model + " (" + fit.optimizer + ")":<24}'
              + ''.join(f'{fit.parameters[n]:>11.4g}' if n in fit.parameters else f'{"-":>11}'
                        for n in ORDER))
    if result.validation_rss:
        models = list(next(iter(result.validation_rss.values())))
        print(f'\nvalidation: residual sum of squares of the joint torque '
              f'({", ".join(result.validation_data)})')
        print(f'{"joint":<16}' + ''.join(f'{m:>24}' for m in models)
              + (f'{"improved vs C+V":>18}' if {'coulomb-viscous', 'improved-stribeck'}
                 <= set(models) else ''))
        for joint, rss in result.validation_rss.items():
            line = f'{joint:<16}' + ''.join(f'{rss[m]:>24.5g}' for m in models)
            if {'coulomb-viscous', 'improved-stribeck'} <= set(rss):
                gain = 100 * (1 - rss['improved-stribeck'] / rss['coulomb-viscous'])
                line += f'{gain:>17.1f}%'
            print(line)
