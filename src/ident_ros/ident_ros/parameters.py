"""Node parameters declared once: from the pydantic model that holds their types, defaults and
descriptions (``ident_core.schema.Schema``), validated by it.

A node's parameters are a model, usually extending the core's configuration of what the node
does (e.g. ``IdentificationConfig`` plus the topics of the identification node), so a default is
written in one place and ``config/*.yaml`` holds only values that differ from it. An optional
field whose default is None is declared without a value; left unset, it stays None.
"""
from __future__ import annotations

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node

from ident_core.schema import Schema, parse


def declare_parameters(node: Node, model: type[Schema]) -> Schema:
    """Declare a node's parameters from a model and read them.

    Parameters
    ----------
    node : rclpy.node.Node
        The node.
    model : type
        A ``Schema`` subclass; each field becomes a parameter of the same name, with the
        field's default and description.

    Returns
    -------
    Schema
        The validated parameter values.

    Raises
    ------
    InputError
        If a value has the wrong type or range; the message names the node and the parameter.
    """
    values = {}
    for name, field in model.model_fields.items():
        descriptor = ParameterDescriptor(description=field.description or '',
                                         dynamic_typing=True)
        value = node.declare_parameter(name, _ros_value(field.default), descriptor).value
        if value is not None:
            values[name] = _python_value(value)
    return parse(model, values, f'{node.get_name()} parameters')


def _ros_value(value):
    """A field default as a ROS parameter value (lists for tuples and arrays)."""
    if isinstance(value, (tuple, list)):
        return list(value)
    return value


def _python_value(value):
    """A ROS parameter value as plain Python (``array.array`` → list)."""
    if isinstance(value, (str, bytes, bool, int, float)):
        return value
    return list(value)
