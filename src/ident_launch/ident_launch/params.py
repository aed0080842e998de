"""Parameter values: the typing rules of the launch front ends and ``-p NAME:=VALUE`` encoding.

A ``name:``/``value:`` parameter of a YAML launch file gets the type ``ros2 launch`` gives it
(launch_ros parses it into ``ParameterValue(value, value_type)``; launch's
``perform_typed_substitution`` evaluates it):

* a YAML number or bool is passed through with its type;
* a YAML string without substitutions is a string, as written (``"42"``, ``"'42'"``,
  ``"a: b"`` and ``""`` are strings; only backslash escapes are applied);
* a YAML string with substitutions is evaluated and then read as YAML: ``$(var rate)`` with
  rate=100 gives an integer, ``"true"`` a bool; an empty result is the empty string; to keep a
  result that looks like a number or bool a string, quote it inside the value
  (``value: "'$(var label)'"``) or give ``type: str``;
* ``type: str`` keeps the (evaluated) text a string (a URDF is not read as YAML);
* a list's items are each typed like a single value, and must all be of one type.

Where ``ros2 launch`` would hand a node a value no parameter can have (an empty list: rclpy
refuses it as not set), the runner refuses it at once.

:func:`encode` writes a value so that the YAML parsing of ``--ros-args -p`` gives back exactly that
value and type (strings quoted when needed, floats always with a decimal point, lists as flow
lists).
"""

import datetime
import json
import math
import re

import yaml

from .errors import SubstitutionError
from .substitutions import Sub, evaluate

_SCALAR_TYPES = (bool, int, float, str)
_PLAIN = re.compile(r'[A-Za-z_/~][A-Za-z0-9_/.~-]*')
# words some YAML reader (PyYAML 1.1, libyaml + rcl's own typing, strtod) might not read as text
_AMBIGUOUS = re.compile(
    r'(?i)(y|n|yes|no|on|off|true|false|null|nil|none|[+-]?(inf|infinity|nan)(\(.*\))?)')
_AS_STRING = "quote it inside the value (\"'...'\") or give type: str"


def evaluate_value(raw, ctx, value_type=None):
    """Evaluate a parameter value of a launch file and give it its type, as ``ros2 launch`` does.

    Parameters
    ----------
    raw : tuple, bool, int, float or list
        The value as loaded: a string's parsed parts (tuple of ``str`` and
        :class:`~ident_launch.substitutions.Sub`), a YAML scalar, or a list of these.
    ctx : ident_launch.substitutions.Context
        What the substitutions evaluate against.
    value_type : str, optional
        ``'str'`` for ``type: str``: the evaluated text, not read as YAML. Default None.

    Returns
    -------
    bool, int, float, str or list
        The typed value (module docstring); a list is non-empty and of one item type.

    Raises
    ------
    SubstitutionError
        If a substitution cannot be evaluated, or a substituted value or a list has no ROS
        parameter type (see :func:`substituted_value` and :func:`check_list`).
    """
    if isinstance(raw, tuple):
        text = evaluate(raw, ctx)
        if value_type == 'str' or not any(isinstance(p, Sub) for p in raw):
            return text
        return substituted_value(text, 'value')
    if isinstance(raw, list):
        items = [raw_item if not isinstance(raw_item, tuple)
                 else evaluate(raw_item, ctx) if not any(isinstance(p, Sub) for p in raw_item)
                 else substituted_value(evaluate(raw_item, ctx), 'list item')
                 for raw_item in raw]
        return check_list(items, 'value')
    return raw


def substituted_value(text, what):
    """Read the evaluated text of a value with substitutions as YAML, as launch does.

    Parameters
    ----------
    text : str
        The value after substitution.
    what : str
        How error messages name the value (``'value'``, ``'list item'``).

    Returns
    -------
    bool, int, float, str or list
        The typed value: ``''`` for an empty text; a list is non-empty and its items are of one
        type (see :func:`check_list`).

    Raises
    ------
    SubstitutionError
        If ``text`` is not valid YAML, is null, reads as a date or as another type that no ROS
        parameter has (e.g. a mapping), or is a list that :func:`check_list` refuses. The
        messages say how to pass the value as a string.
    """
    if not text:
        return text
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0]
        raise SubstitutionError(
            f"{what} {text!r} is not a valid YAML value ({problem}); to pass it as a string, "
            f'{_AS_STRING}') from None
    if value is None:
        raise SubstitutionError(f'{what} {text!r} is null; a ROS parameter needs a value '
                                f'(to pass the text, {_AS_STRING})')
    if isinstance(value, (datetime.date, datetime.datetime)):
        raise SubstitutionError(f'{what} {text!r} reads as a date; to pass a string, {_AS_STRING}')
    if isinstance(value, list):
        return check_list(value, what, text)
    if not isinstance(value, _SCALAR_TYPES):
        raise SubstitutionError(
            f'{what} {text!r} reads as a {type(value).__name__}; allowed are bool, int, float, '
            'string and lists of one of these')
    return value


def check_list(values, what, text=None):
    """Check that a list can be a ROS array parameter.

    Parameters
    ----------
    values : list
        The typed items.
    what : str
        How error messages name the value (``'value'``).
    text : str, optional
        Text of the value as written, shown in error messages instead of ``values``.

    Returns
    -------
    list
        The items, as a new list.

    Raises
    ------
    SubstitutionError
        If the list is empty, or its items are not all of one type among bool, int, float and
        str (``True`` and ``1`` count as different types).
    """
    shown = text if text is not None else values
    if not values:
        raise SubstitutionError(f'{what} {shown!r}: an empty list has no ROS parameter type')
    kinds = {type(v) for v in values}
    if len(kinds) != 1 or not kinds <= set(_SCALAR_TYPES):
        raise SubstitutionError(
            f'{what} {shown!r}: list items must all be of one type (bool, int, float or string), '
            'got ' + ', '.join(sorted(k.__name__ for k in kinds)))
    return list(values)


def encode(value):
    """Write ``value`` as ``-p`` value text that ROS's YAML parsing reads back unchanged.

    The text reads back as the same value with the same type: strings are quoted when needed,
    floats always have a decimal point, lists become flow lists.

    Parameters
    ----------
    value : bool, int, float, str, or list or tuple of these
        The parameter value.

    Returns
    -------
    str
        The text to put after ``NAME:=``.

    Raises
    ------
    TypeError
        If ``value`` (or an item of it) is of another type.
    """
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(encode(v) for v in value) + ']'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _encode_float(value)
    if isinstance(value, str):
        return _encode_str(value)
    raise TypeError(f'cannot encode parameter value of type {type(value).__name__}')


def _encode_float(x):
    if math.isnan(x):
        return '.nan'
    if math.isinf(x):
        return '.inf' if x > 0 else '-.inf'
    text = repr(x)
    mantissa, e, exponent = text.partition('e')
    if '.' not in mantissa:
        mantissa += '.0'
    if e and exponent[0] not in '+-':
        exponent = '+' + exponent
    return mantissa + e + exponent


def _encode_str(s):
    if _PLAIN.fullmatch(s) and not _AMBIGUOUS.fullmatch(s) and yaml.safe_load(s) == s:
        return s
    if s.isprintable():
        return "'" + s.replace("'", "''") + "'"
    # new lines, tabs, control characters: a JSON string is a valid YAML double-quoted scalar
    return json.dumps(s, ensure_ascii=False)
