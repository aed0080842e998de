"""The README and the pages of docs/ link to files and headings that exist, the way GitHub
resolves them: a relative link names a file of the repository (relative to the page), and an
anchor (``page.md#heading`` or ``#heading``) names a heading of that page by GitHub's slug
(lower case, punctuation dropped, spaces as hyphens, ``-1``, ``-2`` for repeats). Links inside
code blocks and code spans are not links. Every page of docs/ is linked from the README, and the
README stays a front door (at most 300 lines)."""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / 'README.md', *sorted((REPO / 'docs').glob('*.md'))]
README_MAX_LINES = 300

FENCE = re.compile(r'^ {0,3}(```|~~~)')
INLINE_LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
REFERENCE_LINK = re.compile(r'^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$')
HEADING = re.compile(r'^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
SCHEME = re.compile(r'^[a-zA-Z][a-zA-Z0-9+.-]*:')


def _outside_code_blocks(page: Path):
    """The lines of a page outside its fenced code blocks."""
    fence = None
    for line in page.read_text(encoding='utf-8').splitlines():
        m = FENCE.match(line)
        if m and fence is None:
            fence = m.group(1)
        elif m and line.strip().startswith(fence):
            fence = None
        elif fence is None:
            yield line


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading's text (github-slugger on the rendered text)."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)     # [text](url) -> text
    text = re.sub(r'`([^`]*)`', r'\1', text)                      # code spans -> their text
    text = re.sub(r'(\*\*|__|\*)(.+?)\1', r'\2', text)            # emphasis -> its text
    text = re.sub(r'<[^>]+>', '', text)                           # inline HTML tags
    return re.sub(r'[^\w\- ]', '', text.lower()).replace(' ', '-')


def _anchors(page: Path):
    """The anchors of a page's headings, in order."""
    seen: dict[str, int] = {}
    for line in _outside_code_blocks(page):
        h = HEADING.match(line)
        if h:
            slug = _slug(h.group(2))
            seen[slug] = seen.get(slug, -1) + 1
            yield slug if seen[slug] == 0 else f'{slug}-{seen[slug]}'


def _links(page: Path):
    """The link targets of a page (code spans blanked first: they hold no links)."""
    for line in _outside_code_blocks(page):
        line = re.sub(r'(`+)(.+?)\1', lambda s: ' ' * len(s.group(0)), line)
        yield from (m.group(1) for m in INLINE_LINK.finditer(line))
        m = REFERENCE_LINK.match(line)
        if m:
            yield m.group(1)


def _relative_links():
    for page in PAGES:
        for target in _links(page):
            if not SCHEME.match(target) and not target.startswith('//'):
                yield pytest.param(page, target, id=f'{page.relative_to(REPO)}:{target}')


@pytest.mark.parametrize('page, target', list(_relative_links()))
def test_relative_link_resolves(page, target):
    path, _, anchor = target.partition('#')
    dest = (page.parent / unquote(path)).resolve() if path else page
    where = f'{page.relative_to(REPO)}: link {target!r}'
    assert dest == REPO or REPO in dest.parents, f'{where} leaves the repository'
    assert dest.exists(), f'{where}: no file {dest.relative_to(REPO)}'
    if anchor:
        assert dest.suffix == '.md', f'{where}: anchor into a file that is not Markdown'
        anchors = set(_anchors(dest))
        assert unquote(anchor) in anchors, \
            f'{where}: no heading #{anchor} in {dest.relative_to(REPO)} (has: {sorted(anchors)})'


def test_the_pages_have_links():
    # the parametrised test above must not pass by finding nothing
    assert len(list(_relative_links())) > 50


def test_every_docs_page_is_linked_from_the_readme():
    readme = REPO / 'README.md'
    linked = {(readme.parent / unquote(t.partition('#')[0])).resolve()
              for t in _links(readme) if not SCHEME.match(t)}
    missing = [p.name for p in PAGES[1:] if p.resolve() not in linked]
    assert not missing, f'docs pages not linked from README.md: {missing}'


def test_readme_is_short():
    lines = len((REPO / 'README.md').read_text(encoding='utf-8').splitlines())
    assert lines <= README_MAX_LINES, \
        f'README.md has {lines} lines (at most {README_MAX_LINES}): move reference to docs/'


@pytest.mark.parametrize('heading, slug', [
    ('## 1. Try it on the simulated arm', '1-try-it-on-the-simulated-arm'),
    ('## Payload demo: `make demo-payload`', 'payload-demo-make-demo-payload'),
    ('## RESULT.yaml', 'resultyaml'),
    ('### 8.2 Nonlinear friction in whole-robot identification',
     '82-nonlinear-friction-in-whole-robot-identification'),
    ('## `ident_launch`', 'ident_launch'),
    ('## Real robots: KUKA LWR4+ and TX40', 'real-robots-kuka-lwr4-and-tx40'),
])
def test_slug_follows_github(heading, slug):
    assert _slug(HEADING.match(heading).group(2)) == slug
