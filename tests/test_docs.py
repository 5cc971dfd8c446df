"""The manual and the docstrings cite only what the repository ships; the guide's examples run.

A docstring or a page may cite the papers (by section, equation, algorithm) and pages of the
manual (``docs/algorithms/coflow.md`` B6); it may not point at files the repository does not
hold (team notes, the papers' text files, design documents, absolute paths) or at the tracker
("issue 22"): a user of the package has neither.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: Pages a user reads: the README, the manual's pages, the notebooks and their index.
PAGES = sorted([ROOT / "README.md", ROOT / "notebooks" / "README.md", *(ROOT / "notebooks").glob("*.ipynb"),
                *(p for p in DOCS.rglob("*.md") if "_build" not in p.parts and "notebooks" not in p.parts)])
#: Python sources whose docstrings and comments a user reads.
SOURCES = sorted([*(ROOT / "clusteropt").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py"), DOCS / "conf.py"])

#: What cites outside the repository, and why each pattern is one.
OUTSIDE = {
    r"\bnotes/[\w-]+\.md": "a team notes file",
    r"\bnotes [A-C]\d": "a section of a team notes file",
    r"\bshared/": "the team's shared folder",
    r"(?<![\w/.-])papers/\d{3}(?![\w-])": "the papers' text files",
    r"\.\./papers/(?!\d{3}-[a-z]+\.md)": "the papers' text files",
    r"\bDESIGN(?:\.md)?\b": "a design document",
    r"design card": "a design document",
    r"/work/": "an absolute path of a work machine",
    r"\b[Ii]ssues? #?\d+": "the tracker",
}
DOC_LINK = re.compile(r"\bdocs/[\w./-]+\.md")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _outside(text: str) -> list[str]:
    return [f"{m.group(0)!r} ({why})" for pattern, why in OUTSIDE.items() for m in re.finditer(pattern, text)]


def test_the_patterns_catch_what_they_should():
    for text in ("see notes/coflow.md B6", "(notes A5)", "the slides in ``papers/001``", "issue 22 item 1",
                 "/work/shared/notes/x.md", "DESIGN.md", "the design card",
                 "the slides in ../papers/"):
        assert _outside(text), text
    for text in ("``docs/algorithms/coflow.md`` B6", "Sec. 4.2, Lemma 4.9", "[001](../papers/001-coflow.md)",
                 "docs/papers/000-gadget.md", "benchmarks/results/x.md",
                 "HiGHS only notes it in its log", "an issue of the solver"):
        assert not _outside(text), text


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_no_page_cites_a_path_outside_the_repository(page):
    found = _outside(page.read_text())
    assert not found, f"{_rel(page)} cites {found}"


def test_no_docstring_or_comment_cites_a_path_outside_the_repository():
    found = [f"{_rel(p)}: {hit}" for p in SOURCES for hit in _outside(p.read_text())]
    assert not found, "\n".join(found)


def test_every_cited_manual_page_exists():
    cited = {(m.group(0).rstrip("."), _rel(p)) for p in [*SOURCES, *PAGES]
             for m in DOC_LINK.finditer(p.read_text())}
    assert any(page.startswith("docs/algorithms/") for page, _ in cited), "no docstring cites the algorithm pages"
    missing = sorted(f"{where}: {page}" for page, where in cited if not (ROOT / page).is_file())
    assert not missing, f"cited pages that do not exist: {missing}"


def test_the_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 250
    assert "make demo" in text and "make test" in text
    for paper in ("000-gadget", "001-coflow", "002-realtime", "003-broker", "004-ring"):
        assert f"docs/papers/{paper}.md" in text and (DOCS / "papers" / f"{paper}.md").is_file()


def test_every_page_is_in_a_table_of_contents():
    """Sphinx warns about a page outside every toctree; this says which one before a build."""
    listed = set()
    for index in DOCS.rglob("index.md"):
        for block in re.findall(r"```\{toctree\}\n(.*?)```", index.read_text(), flags=re.S):
            for entry in block.splitlines():
                if entry.strip() and not entry.startswith(":"):
                    listed.add((index.parent / entry.strip()).relative_to(DOCS).as_posix())
    pages = {p.relative_to(DOCS).with_suffix("").as_posix() for p in DOCS.rglob("*.md") if "_build" not in p.parts}
    pages.discard("index")
    assert pages - listed == set(), f"pages in no toctree: {sorted(pages - listed)}"


GUIDE = sorted((DOCS / "guide").glob("*.md"))


@pytest.mark.parametrize("page", [p for p in GUIDE if "```python" in p.read_text()], ids=_rel)
def test_the_guides_python_blocks_run(page, tmp_path, monkeypatch):
    """Every ``python`` block of a guide page runs as written, the page's blocks in order and in
    one namespace (blocks shown as output or as fragments are fenced without the language)."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for code in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S):
        exec(compile(code, str(page), "exec"), namespace)
