"""The report page: sections of text, tables and figures as one HTML file with no external
resource (images are ``data:`` URIs, the style is inline)."""
from __future__ import annotations

import html
from dataclasses import dataclass, field

STYLE = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 2px 8px; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; }
img { max-width: 100%; display: block; margin: 0.8em 0; }
.note { color: #555; font-size: 0.9em; } .warning { color: #a40000; }
.trusted { background: #e3f4e3; } .uncertain { background: #fdf0d8; }
.poor { background: #fadcdc; }
nav a { margin-right: 1em; }
"""


@dataclass
class Table:
    """A table of the report.

    Parameters
    ----------
    header : list of str
        Column titles.
    rows : list of list
        Cells (str, or numbers formatted with ``'{:.4g}'``).
    row_classes : list of str, optional
        A CSS class per row (``trusted``, ``uncertain``, ``poor``), or empty.
    caption : str
        Shown above the table.
    cell_classes : list of list of str, optional
        A CSS class per cell (rows of ``rows``' shape), or empty.
    """

    header: list[str]
    rows: list[list]
    row_classes: list[str] = field(default_factory=list)
    caption: str = ''
    cell_classes: list[list[str]] = field(default_factory=list)


@dataclass
class Figure:
    """A figure of the report.

    Parameters
    ----------
    uri : str
        PNG ``data:`` URI (``figures.png_data_uri``).
    caption : str
        What it shows (also the image's alt text).
    """

    uri: str
    caption: str


@dataclass
class Section:
    """A section of the report: a title, warnings, paragraphs, tables and figures.

    Parameters
    ----------
    key : str
        Anchor name (``torques``, ``parameters``...).
    title : str
        Heading.
    paragraphs : list of str
        Text (plain, escaped when written).
    tables : list of Table
    figures : list of Figure
    warnings : list of str
        Shown in red below the title (missing data, inconsistent parameters).
    figures_first : bool
        Show the figures before the tables.
    """

    key: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    figures_first: bool = False


def render_page(title: str, sections: list[Section]) -> str:
    """The HTML text of a report.

    Parameters
    ----------
    title : str
        Page title and heading.
    sections : list of Section
        In page order.

    Returns
    -------
    str
        A complete HTML5 document.
    """
    nav = ''.join(f'<a href="#{s.key}">{_e(s.title)}</a>' for s in sections)
    body = ''.join(_section(s) for s in sections)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<title>{_e(title)}</title><style>{STYLE}</style></head>\n<body>'
            f'<h1>{_e(title)}</h1><nav>{nav}</nav>\n{body}</body></html>\n')


def _section(s: Section) -> str:
    parts = [f'<section id="{_e(s.key)}"><h2>{_e(s.title)}</h2>']
    parts += [f'<p class="warning">{_e(w)}</p>' for w in s.warnings]
    parts += [f'<p>{_e(p)}</p>' for p in s.paragraphs]
    tables = [_table(t) for t in s.tables]
    figures = [f'<figure><img src="{f.uri}" alt="{_e(f.caption)}"><figcaption class="note">'
               f'{_e(f.caption)}</figcaption></figure>' for f in s.figures]
    parts += figures + tables if s.figures_first else tables + figures
    return ''.join(parts) + '</section>\n'


def _table(t: Table) -> str:
    head = ''.join(f'<th>{_e(h)}</th>' for h in t.header)
    rows = []
    for i, row in enumerate(t.rows):
        css = t.row_classes[i] if i < len(t.row_classes) and t.row_classes[i] else ''
        classes = t.cell_classes[i] if i < len(t.cell_classes) else []
        cells = ''.join(_cell(c, classes[k] if k < len(classes) else '')
                        for k, c in enumerate(row))
        rows.append(f'<tr class="{css}">{cells}</tr>' if css else f'<tr>{cells}</tr>')
    caption = f'<caption class="note">{_e(t.caption)}</caption>' if t.caption else ''
    return f'<table>{caption}<tr>{head}</tr>{"".join(rows)}</table>'


def _cell(value, css: str = '') -> str:
    if isinstance(value, str):
        return f'<td class="text {css}">{_e(value)}</td>' if css else \
            f'<td class="text">{_e(value)}</td>'
    attribute = f' class="{css}"' if css else ''
    if value is None:
        return f'<td{attribute}>—</td>'
    if isinstance(value, bool):
        return f'<td{attribute}>{"yes" if value else "no"}</td>'
    return f'<td{attribute}>{value:.4g}</td>'


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)
