"""File formats as pydantic models, and their validation errors as one-line ``InputError``.

Each YAML format of the suite (dataset description, excitation config, excitation trajectory,
RESULT.yaml) is a :class:`Schema` whose field names are the file's keys; defaults live in the
model, and the ROS nodes declare their parameters from the same models. Validation is strict (no
text for numbers, no number for a flag, no NaN or infinity) except that an integer is accepted
for a float; a section left empty in a file (``limits:``) means its defaults.
"""
from __future__ import annotations

import inspect
import re
import textwrap
import types
import typing
from pathlib import Path
from typing import Annotated, ClassVar, Literal

import numpy as np
import pydantic

from .errors import InputError
from .files import dump_yaml, read_yaml, write_atomic


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
    keys refused, instances immutable.

    A field is described in one place: either its ``Field(description=...)`` (the full text,
    which the ROS nodes also give as the parameter's description) or an entry of the class
    docstring's Parameters section. Every subclass's docstring gets a Parameters entry
    ``name : type, default value`` with the description of each described field it does not
    document itself (``help()``, numpydoc).
    """

    model_config = pydantic.ConfigDict(extra='forbid', strict=True, frozen=True,
                                       allow_inf_nan=False)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs):
        super().__pydantic_init_subclass__(**kwargs)
        cls.__doc__ = _with_field_docs(inspect.cleandoc(cls.__doc__ or ''), cls.model_fields)

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


def with_default(model: type[pydantic.BaseModel], name: str, default):
    """A field of a model with another default, for a subclass that changes only the default.

    Parameters
    ----------
    model : type
        The model that declares the field.
    name : str
        The field.
    default : object
        The subclass's default.

    Returns
    -------
    pydantic.fields.FieldInfo
        ``Field(default, description=...)`` with the field's description (constraints come with
        the annotation the subclass repeats).
    """
    return pydantic.Field(default, description=model.model_fields[name].description)


def _is_section(model, name: str) -> bool:
    """A field holding a model, a mapping or a list, with a default."""
    field = model.model_fields.get(name)
    if field is None or field.is_required():
        return False
    annotation = _unwrap(field.annotation)
    return typing.get_origin(annotation) in (list, dict) or (
        isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel))


def _with_field_docs(doc: str, fields: dict) -> str:
    """``doc`` with a Parameters entry for every described field it does not document."""
    lines = doc.splitlines()
    headers = [i for i in range(len(lines) - 1)
               if lines[i].strip() and re.fullmatch(r'-{3,}', lines[i + 1])]
    start = next((i for i in headers if lines[i] == 'Parameters'), None)
    end = next((i for i in headers if start is not None and i > start), len(lines))
    documented = set()
    if start is not None:
        for line in lines[start + 2:end]:
            if line and not line[0].isspace():
                documented.update(n.strip() for n in line.split(' : ')[0].split(','))
    entries = [_field_entry(name, field) for name, field in fields.items()
               if field.description and name not in documented]
    if not entries:
        return doc
    if start is None:                       # a new section before the first one, or at the end
        end = headers[0] if headers else len(lines)
        entries = ['Parameters', '----------', *entries]
    while end > 0 and not lines[end - 1].strip():
        end -= 1
    tail = [''] + lines[end:] if end < len(lines) else []
    while len(tail) > 1 and not tail[1].strip():
        del tail[1]
    return '\n'.join([*lines[:end], *([''] if start is None and end else []), *entries, *tail])


def _field_entry(name: str, field) -> str:
    """``name : type, default value`` and the field's description, indented."""
    if field.is_required():
        default = ''
    elif field.default_factory is None and (
            isinstance(field.default, (bool, int, float, str, type(None)))
            or isinstance(field.default, (list, tuple)) and len(repr(field.default)) <= 30):
        default = f', default {field.default!r}'
    else:
        default = ', optional'
    text = '\n'.join(textwrap.fill(' '.join(paragraph.split()), 92, initial_indent='    ',
                                   subsequent_indent='    ', break_long_words=False,
                                   break_on_hyphens=False)
                     for paragraph in field.description.split('\n\n'))
    return f'{name} : {_type_name(field.annotation)}{default}\n{text}'


def _type_name(annotation) -> str:
    """numpydoc's words for an annotation: ``float or None``, ``list of str``, ``{'a', 'b'}``."""
    annotation = _unwrap(annotation)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if _is_union(annotation):
        members = [_type_name(a) for a in args if a is not type(None)]
        return ' or '.join(members + ['None'] * (type(None) in args))
    if origin is Literal:
        values = ', '.join(map(repr, args))
        return values if len(args) == 1 else f'{{{values}}}'
    if origin in (list, tuple, set) and args:
        return f'{origin.__name__} of {_type_name(args[0])}'
    if origin is dict and args:
        return f'dict of {_type_name(args[0])} to {_type_name(args[1])}'
    return getattr(annotation, '__name__', None) or getattr(annotation, '__forward_arg__', None) \
        or str(annotation)


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


class Document(Schema):
    """Base of a YAML file type of the suite: its schema, its format tag, reading and writing.

    A file type is one declaration: a subclass whose fields are the file's keys, whose
    ``format`` field is ``Literal['robot-ident/<kind>/<version>']`` (the tag; required, or with
    the tag as its default where files without it are accepted) and whose ``kind`` names the
    file in messages::

        class PayloadFile(Document):
            kind = 'payload file'
            format: Literal['robot-ident/payload/1']
            ...

        content = PayloadFile.read('PAYLOAD.yaml')
        content.write('copy.yaml')
    """

    #: What the file is, for messages (``'payload file'``, ``'result'``).
    kind: ClassVar[str] = 'file'

    @classmethod
    def tag(cls) -> str:
        """The format tag the file declares.

        Returns
        -------
        str
            The value of the ``format`` field, e.g. ``robot-ident/payload/1``.
        """
        return typing.get_args(_unwrap(cls.model_fields['format'].annotation))[0]

    @classmethod
    def read(cls, path: str | Path):
        """Read and validate a file.

        Parameters
        ----------
        path : str or Path
            The file.

        Returns
        -------
        Document
            The validated content, an instance of the class it is called on.

        Raises
        ------
        InputError
            If the file is missing, not YAML, of another format (when the tag is required), or
            a field is missing or wrong (naming the file and the field).
        """
        doc = read_yaml(path, _file_noun(cls.kind))
        if cls.model_fields['format'].is_required() and (
                not isinstance(doc, dict) or doc.get('format') != cls.tag()):
            raise InputError(f'{path}: not a robot-ident {cls.kind} (format: {cls.tag()} '
                             'expected)')
        return parse(cls, doc, path)

    def plain(self) -> dict:
        """The content as written: plain Python types, keys in the file's order.

        Returns
        -------
        dict
            ``model_dump()``; a file type may leave out keys (``None`` values it omits).
        """
        return self.model_dump()

    def write(self, path: str | Path) -> Path:
        """Write ``plain()`` as YAML through ``files.write_atomic``.

        Parameters
        ----------
        path : str or Path
            Destination.

        Returns
        -------
        Path
            ``path``.

        Raises
        ------
        OSError
            As ``write_atomic``: ``path`` is then left as it was.
        """
        return write_atomic(path, dump_yaml(self.plain()))


def _file_noun(kind: str) -> str:
    """``'result'`` → ``'result file'``; ``'payload file'`` stays."""
    return kind if kind.endswith('file') else f'{kind} file'
