"""File formats as pydantic models, and their validation errors as one-line ``InputError``.

Each YAML format of the suite (dataset description, excitation config, excitation trajectory,
RESULT.yaml) is a :class:`Schema` whose field names are the file's keys; defaults live in the
model, and the ROS nodes declare their parameters from the same models. Validation is strict
(no text for numbers, no number for a flag) except that an integer is accepted for a float.
"""
from __future__ import annotations

import typing
from pathlib import Path

import numpy as np
import pydantic

from .errors import InputError


class _SchemaMeta(type(pydantic.BaseModel)):
    """Direct construction (``Config(field=value)``) raises ``InputError`` like file parsing;
    nested validation inside pydantic is unaffected."""

    def __call__(cls, *args, **kwargs):
        try:
            return super().__call__(*args, **kwargs)
        except pydantic.ValidationError as exc:
            raise InputError(f'{cls.__name__}: {describe(exc, cls)}') from None


class Schema(pydantic.BaseModel, metaclass=_SchemaMeta):
    """Base of every file format and configuration model: strict types, unknown keys refused,
    instances immutable."""

    model_config = pydantic.ConfigDict(extra='forbid', strict=True, frozen=True)

    def updated(self, /, **changes):
        """A validated copy with some fields replaced.

        Parameters
        ----------
        **changes
            New field values; ``None`` values are ignored (keep the current value).

        Returns
        -------
        Schema
            A new instance of the same class.

        Raises
        ------
        InputError
            If a new value is invalid (the message names the field).
        """
        data = self.model_dump()
        data.update({k: v for k, v in changes.items() if v is not None})
        new = parse(type(self), data, type(self).__name__)
        if self.__pydantic_private__:
            new.__pydantic_private__ = dict(self.__pydantic_private__)
        return new


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
        The model that was validated (to list the known fields of an unknown one).

    Returns
    -------
    str
        ``field <path>: <problem>`` (and ``(+k more problems)`` if there are more).
    """
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = _without_union_tags(first['loc'])
    path = field_path(loc)
    kind = first['type']
    if kind == 'extra_forbidden':
        known = _known_fields(model, loc[:-1])
        text = f'unknown field {path}' + (f' (known: {", ".join(known)})' if known else '')
    elif kind == 'missing':
        text = f'missing field {path}'
    else:
        message = first['msg'].removeprefix('Value error, ')
        text = f'field {path}: {message}' if path else message
        if kind not in ('value_error', 'assertion_error'):
            text += f', got {_short(repr(first["input"]))}'
    more = len({_without_union_tags(e['loc']) for e in errors}) - 1
    return text + (f' (+{more} more problem{"s" * (more > 1)})' if more else '')


def field_path(loc: tuple) -> str:
    """``('collision', 'environment', 0, 'radius')`` → ``collision.environment[0].radius``.

    Parameters
    ----------
    loc : tuple of str or int
        A pydantic error location.

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


def _short(text: str, width: int = 80) -> str:
    return text if len(text) <= width else text[:width - 1] + '…'


def _without_union_tags(loc: tuple) -> tuple:
    """``loc`` without the entries pydantic adds for the members of a union (``'float'``,
    ``'list[float]'``, ``'function-after[...]'``): field names are identifiers, tags are not or
    name a builtin type."""
    return tuple(p for p in loc if isinstance(p, int) or (
        str(p).isidentifier() and str(p) not in _TYPE_TAGS))


_TYPE_TAGS = {'float', 'int', 'str', 'bool', 'list', 'tuple', 'dict', 'none'}


def _known_fields(model, loc) -> list[str]:
    """Field names of the (nested) model at ``loc``, or [] when it cannot be followed."""
    for part in loc:
        if isinstance(part, int) or not hasattr(model, 'model_fields'):
            return []
        field = model.model_fields.get(part)
        if field is None:
            return []
        model = _model_in(field.annotation)
        if model is None:
            return []
    return list(getattr(model, 'model_fields', {}))


def _model_in(annotation):
    """The pydantic model of an annotation such as ``Spec`` or ``Spec | None``, else None."""
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, pydantic.BaseModel):
            return candidate
    return None


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
