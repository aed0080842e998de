"""Every public module, class, method and function of ident_core and ident_launch has a numpydoc
docstring that documents its parameters and what it returns (numpydoc's own validator); every
configuration and file model (``ident_core.schema.Schema``, the nodes' parameters included)
documents each field once, and a field's ``Field(description=...)`` is its docstring entry."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest
from numpydoc.docscrape import ClassDoc, NumpyDocString
from numpydoc.validate import validate

PACKAGES = ('ident_core', 'ident_launch')
#: The nodes' parameter models (outside PACKAGES: they import rclpy).
NODE_MODULES = ('excitation_node.excitation_node', 'ident_node.identification_node',
                'ident_node.recorder_node', 'ident_sim.sim_node', 'ident_sim.demo',
                'ident_sim.friction_demo', 'ident_sim.payload_demo',
                'torque_estimator.torque_estimator_node')
# GL08 no docstring, PR01 parameter not documented, PR02 unknown parameter documented,
# PR10 missing space before the colon, RT01 no Returns section, SS01-SS03 summary problems
CHECKED = {'GL08', 'PR01', 'PR02', 'PR10', 'RT01', 'SS01', 'SS02', 'SS03'}


def _modules(package: str):
    root = importlib.import_module(package)
    yield root
    for info in pkgutil.walk_packages(root.__path__, f'{package}.'):
        if info.name.rsplit('.', 1)[-1] != '__main__':
            yield importlib.import_module(info.name)


def _public_objects():
    """Import paths of the public objects defined in the packages (not imported there)."""
    for package in PACKAGES:
        for module in _modules(package):
            yield module.__name__
            for name, obj in vars(module).items():
                if name.startswith('_') or getattr(obj, '__module__', None) != module.__name__:
                    continue
                if inspect.isfunction(obj):
                    yield f'{module.__name__}.{name}'
                elif inspect.isclass(obj):
                    yield f'{module.__name__}.{name}'
                    yield from _methods(module.__name__, name, obj)


def _methods(module: str, name: str, cls: type):
    for attr, member in vars(cls).items():
        if attr.startswith('_') or attr.startswith('model_'):
            continue
        if inspect.isfunction(member) or isinstance(member, (classmethod, staticmethod,
                                                             property)):
            yield f'{module}.{name}.{attr}'


OBJECTS = sorted(set(_public_objects()))


def test_the_packages_have_public_objects():
    assert len(OBJECTS) > 150


@pytest.mark.parametrize('path', OBJECTS)
def test_numpydoc_docstring(path):
    obj = _resolve(path)
    if inspect.ismodule(obj) and hasattr(obj, '__path__'):
        # numpydoc cannot locate a package's source; its docstring is the package overview
        summary = (obj.__doc__ or '').strip().splitlines()
        assert summary, f'{path}: no docstring'
        return
    problems = [f'{code}: {message}' for code, message in validate(path)['errors']
                if code in CHECKED and not _inherited(obj, code, message)]
    assert not problems, '\n'.join(problems)


def _resolve(path: str):
    module, _, name = path.rpartition('.')
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError:
        owner = _resolve(module)
        return inspect.getattr_static(owner, name) if inspect.isclass(owner) \
            else getattr(owner, name)


def _inherited(obj, code: str, message: str) -> bool:
    """PR01 for fields documented on a base class (configuration models extend others), and
    PR02 for a field named ``self`` (numpydoc takes it for the instance; ``collision.self``
    is a file key)."""
    if not inspect.isclass(obj):
        return False
    names = set(message[message.index('{') + 1:message.index('}')].replace("'", '').split(', '))
    if code == 'PR02':
        return names == {'self'}
    if code != 'PR01':
        return False
    documented = {p.name for base in obj.__mro__[1:] if base.__doc__
                  for p in ClassDoc(base)['Parameters']}
    return names <= documented


def _schema_classes() -> list[type]:
    """Every ``Schema`` subclass of the packages and of the nodes."""
    from ident_core.schema import Schema
    for package in PACKAGES:
        list(_modules(package))
    for module in NODE_MODULES:
        importlib.import_module(module)
    found, todo = set(), [Schema]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                todo.append(sub)
    ours = tuple(f'{name.split(".")[0]}.' for name in PACKAGES + NODE_MODULES)
    return sorted((c for c in found if f'{c.__module__}.'.startswith(ours)),
                  key=lambda c: f'{c.__module__}.{c.__qualname__}')


SCHEMAS = _schema_classes()


def test_there_are_schema_classes():
    names = {c.__name__ for c in SCHEMAS}
    assert {'IdentificationConfig', 'IdentificationNodeParameters', 'ExcitationNodeParameters',
            'RecorderParameters', 'SimNodeParameters', 'TorqueEstimatorNodeParameters',
            'ResultFile', 'PayloadFile', 'FrictionFile', 'TrajectoryFile'} <= names


@pytest.mark.parametrize('cls', SCHEMAS, ids=lambda c: f'{c.__module__}.{c.__qualname__}')
def test_schema_docstring_lists_every_field_once_with_its_description(cls):
    """A described field's docstring entry is its description (generated by ``Schema``); a
    field without a description is documented by hand in the class that declares it; no
    field is documented twice (e.g. in the docstring and in ``Field(description=...)``)."""
    doc = NumpyDocString(cls.__doc__ or '')
    entries = {}
    for section in ('Parameters', 'Attributes'):
        for entry in doc[section]:
            for name in entry.name.split(','):
                entries.setdefault(name.strip(), []).append(' '.join(' '.join(entry.desc).split()))
    own = vars(cls).get('__annotations__', {})
    for name, field in cls.model_fields.items():
        listed = entries.get(name, [])
        assert len(listed) <= 1, f'{name} documented {len(listed)} times'
        if field.description:
            assert listed == [' '.join(field.description.split())], \
                f'{name}: the docstring entry is not the field description'
        elif name in own:
            assert listed, f'{name}: neither a description nor a docstring entry'
