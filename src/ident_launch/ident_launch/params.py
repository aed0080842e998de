"""Parameter values: launch_ros typing rules and ``-p NAME:=VALUE`` encoding.

Typing follows launch_ros (``evaluate_parameters``), so a launch file gives the node the same
parameter types under ``ros2 launch`` and under this runner:

* a YAML number/bool is passed through with its type;
* a YAML string is substituted and then read as YAML: ``"100"`` and ``$(var rate)`` with
  rate=100 give an integer, ``"true"`` a bool; to keep a string that looks like a number or bool,
  quote it inside the value (``value: "'007'"``);
* a list must be non-empty and its items (each read like a single value) of one type.

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

_SCALAR_TYPES = (bool, int, float, str)
_PLAIN = re.compile(r'[A-Za-z_/~][A-Za-z0-9_/.~-]*')
# words some YAML reader (PyYAML 1.1, libyaml + rcl's own typing, strtod) might not read as text
_AMBIGUOUS = re.compile(
    r'(?i)(y|n|yes|no|on|off|true|false|null|nil|none|[+-]?(inf|infinity|nan)(\(.*\))?)')


def yaml_typed(text, what):
    """Read an (already substituted) string value as YAML, like launch_ros does.

    Parameters
    ----------
    text : str
        The value after substitution.
    what : str
        How error messages name the value (``'value'``, ``'list item'``).

    Returns
    -------
    bool, int, float, str or list
        The typed value; a list is non-empty and its items are of one type (see
        :func:`check_list`).

    Raises
    ------
    SubstitutionError
        If ``text`` is not valid YAML, is empty or null, reads as a date or as another type
        that no ROS parameter has (e.g. a mapping), or is a list that :func:`check_list`
        refuses. The messages say how to quote the value to pass it as a string.
    """
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        problem = str(exc).splitlines()[0]
        raise SubstitutionError(
            f"{what} {text!r} is not a valid YAML value ({problem}); "
            "to pass it as a string, quote it inside the value: \"'...'\"") from None
    if value is None:
        raise SubstitutionError(
            f"{what} {text!r} is empty/null; a ROS parameter needs a value "
            "(for an empty string write \"''\")")
    if isinstance(value, (datetime.date, datetime.datetime)):
        raise SubstitutionError(
            f"{what} {text!r} reads as a date; quote it inside the value (\"'{text}'\") "
            "to pass a string")
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
