"""File formats as pydantic models, and their validation errors as one-line ``InputError``.

Each YAML format of the suite (dataset description, excitation config, excitation trajectory,
RESULT.yaml) is a :class:`Schema` whose field names are the file's keys; defaults live in the
model, and the ROS nodes declare their parameters from the same models. Validation is strict (no
text for numbers, no number for a flag, no NaN or infinity) except that an integer is accepted
for a float; a section left empty in a file (``limits:``) means its defaults.
"""
from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Annotated

import numpy as np
import pydantic

from .errors import InputError
from .files import read_yaml


def _rectangular(rows: list[list[float]]) -> list[list[float]]:
    if len({len(r) for r in rows}) > 1:
        raise ValueError('rows must have the same length')
    return rows


#: A matrix as a list of rows of equal length.
Matrix = Annotated[list[list[float]], pydantic.AfterValidator(_rectangular)]
#: A per-joint value: one number for every joint, or one per joint (``per_joint`` expands it).
PerJoint = Annotated[float | list[float], pydantic.Field(union_mode='left_to_right')]


class _SchemaMeta(type(pydantic.BaseModel)):
    """Direct construction (``Config(field=value)``) raises ``InputError`` like file parsing;
    nested validation inside pydantic is unaffected."""

    def __call__(cls, *args, **kwargs):
        try:
            return super().__call__(*args, **kwargs)
        except pydantic.ValidationError as exc:
            raise InputError(f'{cls.__name__}: {describe(exc, cls)}') from None


class Schema(pydantic.BaseModel, metaclass=_SchemaMeta):
    """Base of every file format and configuration model: strict types, finite numbers, unknown
    keys refused, instances immutable."""

    model_config = pydantic.ConfigDict(extra='forbid', strict=True, frozen=True,
                                       allow_inf_nan=False)

    @pydantic.model_validator(mode='before')
    @classmethod
    def _empty_sections(cls, data):
        """``key:`` with nothing under it (YAML null) for a section, mapping or list field
        means its default."""
        if not isinstance(data, dict):
            return data
        return {k: v for k, v in data.items() if not (v is None and _is_section(cls, k))}

    def updated(self, /, **changes):
        """A validated copy with some fields replaced.

        Parameters
        ----------
        **changes
            New field values; ``None`` values are ignored (keep the current value).

        Returns
        -------
        Schema
            A new instance of the same class (private attributes copied).

        Raises
        ------
        InputError
            If a new value is invalid; the message names the model's ``source`` (when it has
            one) and the field.
        """
        data = self.model_dump()
        data.update({k: v for k, v in changes.items() if v is not None})
        new = parse(type(self), data, getattr(self, 'source', type(self).__name__))
        if self.__pydantic_private__:
            new.__pydantic_private__ = dict(self.__pydantic_private__)
        return new


def _is_section(model, name: str) -> bool:
    """A field holding a model, a mapping or a list, with a default."""
    field = model.model_fields.get(name)
    if field is None or field.is_required():
        return False
    annotation = _unwrap(field.annotation)
    return typing.get_origin(annotation) in (list, dict) or (
        isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel))


def parse(model: type[pydantic.BaseModel], data, source: str | Path):
    """Validate a document against a model.

    Parameters
    ----------
    model : type
        A :class:`Schema` subclass.
    data : object
        The parsed document (mappings, lists, scalars).
    source : str or Path
        Where the document comes from (file name), the first word of the error message.

    Returns
    -------
    pydantic.BaseModel
        The validated instance.

    Raises
    ------
    InputError
        Naming ``source`` and the field path of the first problem, e.g.
        ``config.yaml: field limits.margin: Input should be a valid number, got 'five'``.
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError(f'{source}: the document must be a mapping of fields, '
                         f'got {type(data).__name__}')
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise InputError(f'{source}: {describe(exc, model)}') from None


def describe(exc: pydantic.ValidationError, model: type[pydantic.BaseModel]) -> str:
    """One line for the first error of a validation, with its field path.

    Parameters
    ----------
    exc : pydantic.ValidationError
        The error.
    model : type
        The model that was validated (to follow field paths and list known fields).

    Returns
    -------
    str
        ``field <path>: <problem>`` (and ``(+k more problems)`` if there are more).
    """
    errors = exc.errors(include_url=False)
    first = errors[0]
    kind = first['type']
    loc = _location(model, first)
    path = field_path(loc)
    if kind == 'extra_forbidden':
        known = _known_fields(model, first['loc'][:-1])
        text = f'unknown field {path}' + (f' (known: {", ".join(known)})' if known else '')
    elif kind == 'missing':
        text = f'missing field {path}'
    else:
        message = first['msg'].removeprefix('Value error, ')
        text = f'field {path}: {message}' if path else message
        if kind not in ('value_error', 'assertion_error'):
            text += f', got {_short(repr(first["input"]))}'
    more = len({_location(model, e) for e in errors}) - 1
    return text + (f' (+{more} more problem{"s" * (more > 1)})' if more else '')


def field_path(loc: tuple) -> str:
    """``('collision', 'environment', 0, 'radius')`` → ``collision.environment[0].radius``.

    Parameters
    ----------
    loc : tuple of str or int
        A field location.

    Returns
    -------
    str
        The dotted path, list indices in brackets.
    """
    out = ''
    for part in loc:
        if isinstance(part, int):
            out += f'[{part}]'
        else:
            out += ('.' if out else '') + str(part)
    return out


def field_location(model: type[pydantic.BaseModel], loc: tuple) -> tuple:
    """A pydantic error location without the entries it adds for unions.

    Pydantic names the member of a union it tried (``'float'``, ``'list[float]'``, the tag of
    a discriminated union such as ``'sphere'``); the path a user writes has only field names,
    keys and indices.

    Parameters
    ----------
    model : type
        The validated model.
    loc : tuple of str or int
        The location pydantic reports.

    Returns
    -------
    tuple of str or int
        The location in the file.
    """
    return _walk(model, loc)[0]


def _walk(model, loc) -> tuple[tuple, object]:
    """(file location, annotation reached) of a pydantic location."""
    out, current = [], model
    for part in loc:
        current = _unwrap(current)
        tag = False
        while _is_union(current) and not tag:
            member = _member(typing.get_args(current), part)
            tag = member is not None          # pydantic's name of a union member, not a key
            current = _unwrap(member) if tag else _optional_member(current)
        if tag:
            continue
        if isinstance(current, type) and issubclass(current, pydantic.BaseModel):
            field = current.model_fields.get(part) if isinstance(part, str) else None
            if field is not None:
                out.append(part)
                current = field.annotation
            continue
        out.append(part)
        origin, args = typing.get_origin(current), typing.get_args(current)
        current = args[0] if origin in (list, tuple) and args else \
            args[1] if origin is dict and len(args) == 2 else None
    return tuple(out), current


def _location(model, error: dict) -> tuple:
    """The file location of an error; an unknown key is not a field, so it is kept as is."""
    if error['type'] == 'extra_forbidden':
        return field_location(model, error['loc'][:-1]) + error['loc'][-1:]
    return field_location(model, error['loc'])


def _known_fields(model, loc: tuple) -> list[str]:
    """Field names of the model at pydantic location ``loc``, or [] when there is none."""
    current = _unwrap(_walk(model, loc)[1])
    while _is_union(current):
        current = _optional_member(current)
    if isinstance(current, type) and issubclass(current, pydantic.BaseModel):
        return list(current.model_fields)
    return []


def _is_union(annotation) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _optional_member(union):
    """The first member of a union that is not None (``X`` of ``X | None``)."""
    return _unwrap(next((m for m in typing.get_args(union) if m is not type(None)), None))


def _unwrap(annotation):
    """``Annotated[X, ...]`` → X."""
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _member(args, tag):
    """The member of a union named by pydantic's tag (a discriminator value or a type name)."""
    for arg in map(_unwrap, args):
        if isinstance(arg, type) and issubclass(arg, pydantic.BaseModel):
            discriminator = arg.model_fields.get('type')
            if discriminator is not None and tag in typing.get_args(discriminator.annotation):
                return arg
        if getattr(arg, '__name__', None) == tag or str(arg) == tag:
            return arg
    return None


def _short(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[:width - 1] + '…'


def per_joint(value, n: int, field: str) -> np.ndarray:
    """A per-joint value given as one number (for every joint) or n numbers.

    Parameters
    ----------
    value : float or list of float
        The value.
    n : int
        Number of joints.
    field : str
        Field path, for the error message.

    Returns
    -------
    (n,) ndarray

    Raises
    ------
    InputError
        If a list has another length than n, or a value is not finite.
    """
    arr = np.atleast_1d(np.asarray(value, dtype=float))
    if arr.shape == (1,):
        arr = np.full(n, arr[0])
    if arr.shape != (n,):
        raise InputError(f'field {field} must have shape ({n},) (one value, or one per joint), '
                         f'got {arr.shape}')
    return checked_array(arr, (n,), field)


def checked_array(arr: np.ndarray, shape: tuple, field: str) -> np.ndarray:
    """An array of a given shape with finite values, or an error naming the field.

    Parameters
    ----------
    arr : ndarray
        The values.
    shape : tuple of int
        The shape they must have.
    field : str
        Field path, for the error message.

    Returns
    -------
    ndarray
        ``arr``.

    Raises
    ------
    InputError
        If the shape differs or a value is NaN or infinite.
    """
    if arr.shape != shape:
        raise InputError(f'field {field} must have shape {shape}, got {arr.shape}')
    if not np.all(np.isfinite(arr)):
        raise InputError(f'field {field} contains NaN or inf')
    return arr


def read_document(path: str | Path, model: type[pydantic.BaseModel], fmt: str, what: str):
    """Read and validate a robot-ident YAML document with a ``format`` field.

    Parameters
    ----------
    path : str or Path
        The file.
    model : type of pydantic.BaseModel
        Its schema.
    fmt : str
        The ``format`` it must declare, e.g. ``robot-ident/result/1``.
    what : str
        What it is, for messages ("result", "payload file", ...).

    Returns
    -------
    pydantic.BaseModel
        The validated document.

    Raises
    ------
    InputError
        If the file is missing, not YAML, of another format, or a field is missing or wrong
        (naming the file and the field).
    """
    doc = read_yaml(path, f'{what} file' if not what.endswith('file') else what)
    if not isinstance(doc, dict) or doc.get('format') != fmt:
        raise InputError(f'{path}: not a robot-ident {what} (format: {fmt} expected)')
    return parse(model, doc, path)
