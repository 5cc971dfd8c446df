"""A reader's check of the record: the manual's measured numbers are those of the recorded files.

The measured numbers live in the manual's pages (``docs/**/*.md``: the paper pages, the guide,
the development page) and in the README.  Each page marks every passage that quotes recorded
results with the files it quotes, and for a Markdown or CSV table the columns::

    <!-- numbers: benchmarks/results/experiments/ring-ratio/ratio.md#ratio_static results/x.md -->
    ... 0.76 ... 16.0 s ...
    <!-- /numbers -->

Every decimal number in the passage (outside backticks, which hold parameters, commands and
formulas) must be a value of those columns (of the whole file where no column is given) as
printed at the page's precision: some ``v`` with ``round(v, d)`` equal to it, ``d`` being the
decimals the page shows.  The values are read from the files here, not copied into the test,
so a re-recorded table that moves the numbers fails this test until the page says the new ones.

What it does not do: tie a number to its row (a page's number that another row of the same
column happens to round to passes), or check integers (mostly parameters: n, seeds, servers).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The README and every Markdown page of the manual (the generated folders hold no Markdown).
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PAGES = [p for p in PAGES if "_build" not in p.parts]
BLOCK = re.compile(r"<!-- numbers: (?P<files>[^>]*?) -->(?P<body>.*?)<!-- /numbers -->", re.S)
DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\w.])")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def passages() -> list[tuple[str, list[str], str]]:
    """(page, files, body) of every marked passage of every page."""
    return [(p.relative_to(ROOT).as_posix(), m["files"].split(), m["body"])
            for p in PAGES for m in BLOCK.finditer(p.read_text())]


def quoted(body: str) -> list[str]:
    """The decimal numbers of a passage, outside backtick spans and link targets."""
    body = re.sub(r"`[^`]*`", " ", body)
    body = re.sub(r"\]\([^)]*\)", "]", body)
    return DECIMAL.findall(body)


def columns(text: str, path: Path, wanted: list[str]) -> list[str]:
    """The cells of columns ``wanted`` of a CSV table, or of the first Markdown table (``|`` rows
    between non-table lines) whose header has them all."""
    if path.suffix == ".csv":
        import csv
        import io

        tables = [list(csv.reader(io.StringIO(text)))]
    else:
        tables, rows = [], []
        for line in [*text.splitlines(), ""]:
            if line.startswith("|"):
                if not set(line) <= set("|-: "):
                    rows.append([c.strip() for c in line.strip().strip("|").split("|")])
            elif rows:
                tables.append(rows)
                rows = []
    for header, *body in tables:
        if all(w in header for w in wanted):
            return [row[header.index(w)] for row in body for w in wanted if header.index(w) < len(row)]
    headers = [table[0] for table in tables]
    raise AssertionError(f"{path}: no table with the columns {wanted} (tables' columns: {headers})")


def recorded(files: list[str]) -> list[float]:
    values = []
    for spec in files:
        name, _, cols = spec.partition("#")
        path = ROOT / name
        assert path.is_file(), f"a page quotes {name}, which is not in the repository"
        text = path.read_text()
        cells = columns(text, path, cols.split(",")) if cols else [text]
        values += [float(v) for cell in cells for v in NUMBER.findall(cell)]
    return values


def test_the_pages_mark_their_recorded_numbers():
    found = passages()
    pages = {page for page, _, _ in found}
    for paper in ("000-gadget", "001-coflow", "002-realtime", "003-broker", "004-ring"):
        assert f"docs/papers/{paper}.md" in pages, f"docs/papers/{paper}.md lost its <!-- numbers: ... --> markers"
    for page, files, body in found:
        assert files and quoted(body), f"{page}: a marked passage without files or numbers: {body[:80]!r}"


def test_no_page_has_an_unclosed_passage():
    for page in PAGES:
        text = page.read_text()
        assert text.count("<!-- numbers:") == text.count("<!-- /numbers -->"), f"{page}: unbalanced markers"


@pytest.mark.parametrize(("page", "files", "body"), passages(),
                         ids=[f"{page}:{files[0]}" for page, files, _ in passages()])
def test_every_quoted_number_is_in_its_recorded_file(page, files, body):
    values = recorded(files)
    missing = []
    for text in quoted(body):
        digits = len(text.split(".")[1])
        target = float(text)
        if not any(abs(round(v, digits) - target) < 0.5 * 10**-digits * 1e-6 + 1e-12 for v in values):
            missing.append(text)
    assert not missing, f"numbers of {page} not in {files} at the page's precision: {missing}"


TABLE = re.compile(r"<!-- table: (?P<file>\S+) rows=(?P<rows>\S+) cols=(?P<cols>\S+) value=(?P<value>\S+) "
                   r"by=(?P<by>\S+) -->\n(?P<table>(?:[ \t]*\|.*\n)+)")


def tables() -> list[re.Match]:
    return [m for p in PAGES for m in TABLE.finditer(p.read_text())]


def test_the_pages_mark_their_recorded_tables():
    assert tables(), "the pages' recorded tables lost their <!-- table: ... --> markers"


@pytest.mark.parametrize("match", tables(), ids=lambda m: m["file"])
def test_every_cell_of_a_quoted_table_is_its_recorded_row(match):
    """A page's table ``rows x cols`` whose cells list ``value`` for ascending ``by`` (``a / b / c``)
    is compared cell by cell with the recorded table: the strong check, tied to rows."""
    path = ROOT / match["file"]
    text = path.read_text()
    recorded_rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()
                     if line.startswith("|") and not set(line) <= set("|-: ")]
    header, body = recorded_rows[0], recorded_rows[1:]
    at = {name: header.index(name) for name in (match["rows"], match["cols"], match["value"], match["by"])}
    lines = [[c.strip() for c in line.strip().strip("|").split("|")] for line in match["table"].splitlines()]
    readme_header, readme_body = lines[0], [row for row in lines[2:] if row]
    for row in readme_body:
        for col, cell in zip(readme_header[1:], row[1:], strict=True):
            got = [x.strip() for x in cell.split("/")]
            found = sorted((float(r[at[match["by"]]]), float(r[at[match["value"]]])) for r in body
                           if r[at[match["rows"]]] == row[0] and r[at[match["cols"]]] == col)
            assert len(found) == len(got), f"{row[0]} / {col}: the page has {got}, {path.name} has {found}"
            for text_value, (_, value) in zip(got, found, strict=True):
                digits = len(text_value.split(".")[1]) if "." in text_value else 0
                assert f"{value:.{digits}f}" == text_value, (
                    f"{row[0]} / {col}: the page says {text_value}, recorded {value}")
