"""``ident_core.schema``: the docstrings a ``Schema`` subclass gets from its fields' descriptions,
and ``Document``, the base of the suite's YAML file types (read, write, one-line errors)."""
from __future__ import annotations

from typing import Literal

import pytest
from pydantic import Field

from ident_core.errors import InputError
from ident_core.schema import Document, Schema, with_default


class Settings(Schema):
    """Settings of something.

    Parameters
    ----------
    rate : float
        Documented by hand [Hz].

    Notes
    -----
    Narrative.
    """

    rate: float = 1.0
    window: float | None = Field(None, description='Time kept [s]; None: all of it.')
    mode: Literal['fast', 'slow'] = Field('fast', description='How to run.')
    names: list[str] = Field(['a'], description='Names.')


class Bare(Schema):
    """Only a summary."""

    tag: Literal['x'] = Field(description='A required field.')


def test_described_fields_are_appended_to_the_parameters_section():
    assert Settings.__doc__ == '''Settings of something.

Parameters
----------
rate : float
    Documented by hand [Hz].
window : float or None, default None
    Time kept [s]; None: all of it.
mode : {'fast', 'slow'}, default 'fast'
    How to run.
names : list of str, default ['a']
    Names.

Notes
-----
Narrative.'''


def test_a_section_is_created_and_a_subclass_with_a_new_default_keeps_the_text():
    assert Bare.__doc__ == '''Only a summary.

Parameters
----------
tag : 'x'
    A required field.'''

    class Slower(Settings):
        """Slower settings."""

        mode: Literal['fast', 'slow'] = with_default(Settings, 'mode', 'slow')

    assert "mode : {'fast', 'slow'}, default 'slow'\n    How to run." in Slower.__doc__
    assert 'window : float or None, default None' in Slower.__doc__
    assert Slower().mode == 'slow'


class Note(Document):
    """A test file type.

    Parameters
    ----------
    format : str
        ``robot-ident/note/1``.
    text : str
        The note.
    extra : str or None
        Left out of the file when None.
    """

    kind = 'note'
    format: Literal['robot-ident/note/1']
    text: str
    extra: str | None = None


class Loose(Document):
    """A file type whose tag may be left out.

    Parameters
    ----------
    format : str
        ``robot-ident/loose/1``.
    value : float
        A number.
    """

    kind = 'loose file'
    format: Literal['robot-ident/loose/1'] = 'robot-ident/loose/1'
    value: float

    def plain(self) -> dict:
        """Without the tag.

        Returns
        -------
        dict
        """
        return self.model_dump(exclude={'format'})


def test_document_round_trip_is_atomic_and_keeps_the_field_order(tmp_path):
    note = Note(format=Note.tag(), text='hello')
    path = note.write(tmp_path / 'sub' / 'note.yaml')
    assert path == tmp_path / 'sub' / 'note.yaml'
    assert path.read_text() == 'format: robot-ident/note/1\ntext: hello\nextra: null\n'
    assert Note.read(path) == note
    assert [p.name for p in path.parent.iterdir()] == ['note.yaml']      # no temporary left


def test_document_errors_name_the_file_and_the_field(tmp_path):
    path = tmp_path / 'note.yaml'
    with pytest.raises(InputError, match=r'note\.yaml: note file not found$'):
        Note.read(path)
    path.write_text('format: robot-ident/other/1\ntext: x\n')
    with pytest.raises(InputError, match=r'note\.yaml: not a robot-ident note '
                                         r'\(format: robot-ident/note/1 expected\)$'):
        Note.read(path)
    path.write_text('format: robot-ident/note/1\n')
    with pytest.raises(InputError, match=r'note\.yaml: missing field text$'):
        Note.read(path)


def test_a_document_with_a_default_tag_reads_files_without_it(tmp_path):
    path = tmp_path / 'loose.yaml'
    Loose(value=2).write(path)
    assert path.read_text() == 'value: 2.0\n'
    assert Loose.read(path).value == 2.0
    path.write_text('format: robot-ident/loose/2\nvalue: 1\n')
    with pytest.raises(InputError, match=r"loose\.yaml: field format: Input should be "
                                         r"'robot-ident/loose/1'"):
        Loose.read(path)
    with pytest.raises(InputError, match=r'missing\.yaml: loose file not found$'):
        Loose.read(tmp_path / 'missing.yaml')
