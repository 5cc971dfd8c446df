"""Structure and numbers of LP / MPS files, checked before a solver reads them (issue 42, part 3).

A fuzzing review found damaged files that keep their closing ``end`` / ``ENDATA`` solved as a
different model (an MPS file without its ROWS header: objective 0.0 instead of 102.6; an entry
naming an unknown row silently dropped; a repeated (column, row) entry summed by SCIP only; an LP
file without its sense line: 0.0), and coefficients or bounds between 1e15 and 1e20 read
differently by HiGHS and SCIP.  Here every damage is applied to files the package writes itself
(Pyomo's writers and HiGHS's, from :mod:`clusteropt.testing`) and must be refused with the file,
the line and what was expected; legal variants of both formats must still be read as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from clusteropt import testing
from clusteropt.solvers import available_solvers, solve_file, write_model
from clusteropt.solvers.files import _highs_file, check_model_file
from clusteropt.solvers.registry import get_spec

SOLVERS = [s for s in ("highs", "scip") if s in available_solvers("file")]
SOURCES: dict[str, Callable] = {
    "pyomo-knapsack": testing.knapsack_milp_pyomo,  # Pyomo's writers: BV / LI / UI bounds, rows on many lines
    "highs-knapsack": testing.knapsack_milp_cvxpy,  # HiGHS's writer: integer markers, FR bound, one-line rows
    "pyomo-transport": testing.transport_lp_pyomo,  # equality rows, no BOUNDS section
}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> dict[tuple[str, str], list[str]]:
    """Lines of every source written as LP and MPS."""
    out = {}
    folder = tmp_path_factory.mktemp("pristine")
    for name, build in SOURCES.items():
        for fmt in ("lp", "mps"):
            path = write_model(build(), folder / f"{name}.{fmt}")
            out[name, fmt] = path.read_text().splitlines()
    return out


# -- damage -------------------------------------------------------------------------------------

def _first(lines: list[str], test: Callable[[str], bool], start: int = 0) -> int:
    return next(k for k in range(start, len(lines)) if test(lines[k]))


def _header(lines: list[str], name: str) -> int:
    return _first(lines, lambda s: s.split()[:1] == [name] and not s[0].isspace())


def _entries(lines: list[str]) -> list[int]:
    """Indices of the COLUMNS entries (not markers) of an MPS file."""
    k, end = _header(lines, "COLUMNS") + 1, _first(lines, lambda s: bool(s) and not s[0].isspace(),
                                                    _header(lines, "COLUMNS") + 1)
    return [i for i in range(k, end) if "'MARKER'" not in lines[i]]


def _objective_row(lines: list[str]) -> str:
    k = _header(lines, "ROWS") + 1
    return next(s.split()[1] for s in lines[k:] if s.split()[0] == "N")


def _constraint_entry(lines: list[str]) -> int:
    obj = _objective_row(lines)
    return next(i for i in _entries(lines) if lines[i].split()[1] != obj)


def mps_unknown_row(lines):
    k = _constraint_entry(lines)
    col, _, value = lines[k].split()
    lines[k] = f" {col} c9 {value}"


def mps_row_twice(lines):
    k = _header(lines, "COLUMNS")
    lines.insert(k, lines[k - 1])


def mps_entry_twice(lines):
    k = _constraint_entry(lines)
    lines.insert(k, lines[k])


def mps_column_split(lines):
    entries = _entries(lines)
    first = lines[entries[0]].split()[0]
    last_of_first = max(i for i in entries if lines[i].split()[0] == first)
    second = lines[last_of_first + 1].split()[0]
    last_of_second = max(i for i in entries if lines[i].split()[0] == second)
    lines.insert(last_of_second + 1, lines.pop(last_of_first))


def mps_rhs_twice(lines):
    k = _header(lines, "RHS") + 1
    lines.insert(k, lines[k])


def mps_huge_entry(lines):
    k = _constraint_entry(lines)
    col, row, _ = lines[k].split()
    lines[k] = f" {col} {row} 1e16"


def mps_bound(text: str):
    def damage(lines):
        if not any(s.startswith("BOUNDS") for s in lines):
            lines.insert(_header(lines, "ENDATA"), "BOUNDS")
        col = lines[_entries(lines)[0]].split()[0]
        lines.insert(_header(lines, "BOUNDS") + 1, " " + text.format(col=col))
    return damage


def mps_name_last(lines):
    name = lines.pop(_header(lines, "NAME"))
    lines.insert(_header(lines, "ENDATA"), name)


def mps_unclosed_marker(lines):
    del lines[_first(lines, lambda s: "'INTEND'" in s)]


def delete(keyword: str):
    def damage(lines):
        del lines[_first(lines, lambda s: s.strip().lower() == keyword.lower())]
    return damage


def lp_sense_deleted(lines):
    del lines[_first(lines, lambda s: s.strip().lower() in ("max", "min"))]


def _st(lines):
    return _first(lines, lambda s: s.strip().lower() in ("st", "s.t.", "subject to"))


def _labels(lines) -> list[int]:
    st, end = _st(lines), _first(lines, lambda s: s.strip().lower() in ("bounds", "end"))
    return [k for k in range(st + 1, end) if re.match(r"\s*[^\s:+\-]+:", lines[k])]


def lp_row_twice(lines):
    first, second = _labels(lines)[:2]
    name = lines[first].split(":")[0].strip()
    lines[second] = re.sub(r"[^\s:]+:", f"{name}:", lines[second], count=1)


def lp_rhs_deleted(lines):
    k = _first(lines, lambda s: re.search(r"(<=|>=|=)", s) is not None, _st(lines))
    cut = re.sub(r"\s*(<=|>=|=).*$", "", lines[k])
    if cut.strip():
        lines[k] = cut
    else:
        del lines[k]


def lp_huge_coefficient(lines):
    k = _first(lines, lambda s: re.search(r"[+-]?\d[\d.]*\s+[A-Za-z]", s) is not None, _st(lines))
    lines[k] = re.sub(r"[+-]?\d[\d.]*(?=\s+[A-Za-z])", "+1e16", lines[k], count=1)


def lp_bound(text: str):
    def damage(lines):
        term = re.compile(r"[+-]?\d[\d.]*\s+([^\s:]+)")
        name = term.search(lines[_first(lines, lambda s: term.search(s) is not None, _st(lines))]).group(1)
        k = next((k for k, s in enumerate(lines) if s.strip().lower() == "bounds"), None)
        if k is None:
            k = _first(lines, lambda s: s.strip().lower() == "end")
            lines.insert(k, "bounds")
        lines.insert(k + 1, " " + text.format(col=name))
    return damage


def lp_number_in_general(lines):
    k = next((k for k, s in enumerate(lines) if s.strip().lower() in ("general", "gen")), None)
    if k is None:
        k = _first(lines, lambda s: s.strip().lower() == "end")
        lines.insert(k, "general")
    lines.insert(k + 1, " 3")


def lp_second_st(lines):
    lines.insert(_first(lines, lambda s: s.strip().lower() == "end"), "subject to")


def lp_term_without_sign(lines):
    k = _first(lines, lambda s: re.search(r"[A-Za-z]\w*\(", s) is not None, 1)  # the first objective term
    lines.insert(k + 1, " x(0)")


def append(text: str):
    def damage(lines):
        lines.append(text)
    return damage


MPS_DAMAGE = {
    "rows-header-deleted": (delete("ROWS"), r"in OBJSENSE; expected one word, MAX or MIN \(a section header "
                            "missing"),
    "columns-header-deleted": (delete("COLUMNS"), r"ROWS line with [35] fields; expected 2"),
    "unknown-row": (mps_unknown_row, r"entry \(.+, c9\) names row 'c9', which ROWS does not declare"),
    "row-twice": (mps_row_twice, r"row '.+' declared twice \(first at line \d+\); expected every row named once"),
    "entry-twice": (mps_entry_twice, r"entry \(.+\) given twice; expected each \(column, row\) once"),
    "column-split": (mps_column_split, r"column '.+' goes on after other columns \(its entries began at line "
                     r"\d+\)"),
    "rhs-twice": (mps_rhs_twice, r"RHS of row '.+' given twice"),
    "unknown-section": (lambda lines: lines.__setitem__(_header(lines, "RHS"), "RHSS"),
                        r"section 'RHSS'; expected one of NAME, OBJSENSE, ROWS"),
    "name-last": (mps_name_last, r"section NAME after (RHS|BOUNDS); expected the order NAME, OBJSENSE"),
    "huge-entry": (mps_huge_entry, r"entry \(.+\) = 1e16; expected a finite number of magnitude < 1e15"),
    "field-missing": (lambda lines: lines.__setitem__(k := _entries(lines)[0], lines[k].rsplit(None, 1)[0]),
                      r"COLUMNS line with 2 fields; expected 3 or 5"),
    "unindented": (lambda lines: lines.__setitem__(k := _entries(lines)[0], lines[k].lstrip()),
                   r"section '.+'; expected one of NAME"),
    "after-endata": (append(" x obj 1"), r"expected nothing after ENDATA \(line \d+\)"),
    "bound-unknown-column": (mps_bound("UP BOUND ghost 3"), r"UP bound names column 'ghost', which COLUMNS "
                             "does not"),
    "bound-twice": (lambda lines: [mps_bound("UP BOUND {col} 3")(lines) for _ in range(2)],
                    r"UP bound of column '.+' given twice; expected each bound once"),
    "bound-1e19": (mps_bound("UP BOUND {col} 1e19"), r"= 1e19; expected a bound of magnitude < 1e15, or >= 1e20"),
    "lower-bound-plus-infinity": (mps_bound("LO BOUND {col} 1e30"), r"= 1e30; expected a finite lower bound, or "
                                  "-inf"),
    # SCIP refuses it, HiGHS does not
    "lower-case-section": (lambda lines: lines.__setitem__(_header(lines, "ROWS"), "rows"),
                           r"section 'rows'; expected one of NAME, .* in upper case"),
}
LP_DAMAGE = {
    "sense-deleted": (lp_sense_deleted, r"expected the objective sense first \(minimize, maximize"),
    "st-deleted": (lambda lines: lines.pop(_st(lines)), r"expected \+ or - between terms$"),
    "row-twice": (lp_row_twice, r"row '.+' declared twice \(first at line \d+\); expected every row named once"),
    "rhs-deleted": (lp_rhs_deleted, r"expected \+ or - between terms, or the row's sense"),
    "huge-coefficient": (lp_huge_coefficient, r"coefficient of '.+' in row '.+' = 1e16; expected a finite number"),
    "bound-1e19": (lp_bound("{col} <= 1e19"), r"bound of '.+' = 1e19; expected a bound of magnitude < 1e15"),
    "lower-bound-plus-infinity": (lp_bound("inf <= {col}"), r"bound of '.+' = inf; expected a finite lower bound"),
    "number-in-general": (lp_number_in_general, r"'3' in the general section; expected variable names only"),
    "second-subject-to": (lp_second_st, r"SUBJECT TO after (BOUNDS|GENERAL|BINARY|SEMI-CONTINUOUS); expected"),
    "term-without-sign": (lp_term_without_sign, r"'x\(0\)'; expected \+ or - between terms"),
    "after-end": (append("x <= 3"), r"expected nothing after END \(line \d+\)"),
}
CASES = [(source, "mps", damage) for source in SOURCES for damage in MPS_DAMAGE] \
    + [("highs-knapsack", "mps", "unclosed-marker")] \
    + [(source, "lp", damage) for source in SOURCES for damage in LP_DAMAGE]
MPS_DAMAGE["unclosed-marker"] = (mps_unclosed_marker, r"the INTORG marker of line \d+ is not closed")


@pytest.mark.parametrize(("source", "fmt", "damage"), CASES)
def test_damaged_files_are_refused_at_their_line(tmp_path, pristine, source, fmt, damage):
    lines = list(pristine[source, fmt])
    edit, message = (MPS_DAMAGE if fmt == "mps" else LP_DAMAGE)[damage]
    edit(lines)
    assert lines != pristine[source, fmt]
    path = tmp_path / f"damaged.{fmt}"
    path.write_text("\n".join(lines) + "\n")
    for solver in SOLVERS:  # before any solver reads it: the same refusal for each
        with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:\d+: .*{message}") as info:
            solve_file(path, solver)
        assert "\n" not in str(info.value)


# -- what stays legal ---------------------------------------------------------------------------

VARIANTS = {
    "inline-objsense.mps": "NAME t\nOBJSENSE MAX\nROWS\n N obj\n L c1\n L c2\nCOLUMNS\n x obj 1\n x c1 1\n"
                           " y obj 2\n y c1 1\n y c2 1\nRHS\n RHS c1 3\n RHS c2 1\nENDATA\n",
    # fixed-MPS habits: no set names, two entries a line, MAXIMIZE
    "no-set-names.mps": "* comment\nNAME\nOBJSENSE\n    MAXIMIZE\nROWS\n N obj\n L c1\n L c2\nCOLUMNS\n"
                        " x obj 1 c1 1\n"
                        " y obj 2 c1 1\n y c2 1\nRHS\n c1 3 c2 1\nBOUNDS\n UP x 10\nENDATA\n",
    # RANGES, an objective constant (RHS of the N row), 1e20 as +inf (Pyomo writes 10E20), MI, markers
    "ranges-markers.mps": "NAME t\nOBJSENSE\n MAX\nROWS\n N obj\n L c1\n G c2\nCOLUMNS\n"
                          " M1 'MARKER' 'INTORG'\n x obj 1\n x c1 1\n M2 'MARKER' 'INTEND'\n y obj 2\n y c1 1\n"
                          " y c2 1\nRHS\n RHS obj -0.5\n RHS c1 3\n RHS c2 0\nRANGES\n RNG c2 1\nBOUNDS\n"
                          " UI BND x 10E20\n MI BND y\nENDATA\n",
    "crlf-upper-case.lp": "\\ written on Windows\r\nMAXIMIZE\r\n obj: x + 2 y + 0.5\r\nSubject To\r\n"
                          " c1: x + y <= 3\r\n c2: y <= 1\r\nBounds\r\n -inf <= x <= +inf\r\n x >= 0\r\nEnd\r\n",
    "keywords-with-content.lp": "Maximize obj: x + 2 y + 0.5\nSubject To c1: x + y <= 3\n c2: y <= 1\n"
                                "Bounds\n 0 <= x <= 1e30\n y >= -infinity\nGenerals\n x y\nEnd\n",
    "pyomo-layout.lp": "\\* Source Pyomo model *\\\n\nmax \nobj:\n+1 x\n+2 y\n+0.5 ONE\n\ns.t.\n\nc1:\n+1 x\n"
                       "+1 y\n"
                       "<= 3\n\nc2:\n+1 y\n<= 1\n\nc3:\n+1 ONE\n= 1\n\nbounds\n   -inf <= x <= +inf\n   x free\n"
                       "general\n  x\nend\n",
    "repeated-term.lp": "max\n obj: x + 2 y + 0.5\nst\n c1: 0.5 x + 0.5 x + y <= 3\n c2: y <= 1\nend\n",
    # HiGHS writes a row without entries so (and reads it back; SCIP too)
    "empty-row.lp": "max\n obj: x + 2 y + 0.5\nst\n r0: <= +3\n c1: x + y <= 3\n c2: y <= 1\nend\n",
}


EXPECTED = {name: 4.0 if name in ("inline-objsense.mps", "no-set-names.mps") else 4.5 for name in VARIANTS}
"""max x + 2 y s.t. x + y <= 3, y <= 1: 4, and 4.5 with the constant 0.5 (the objective row's RHS -0.5 in MPS)."""


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("name", list(VARIANTS))
def test_legal_variants_are_read_as_written(tmp_path, name, solver):
    path = tmp_path / name
    path.write_bytes(VARIANTS[name].encode())
    assert check_model_file(path) == path.suffix[1:]
    assert solve_file(path, solver).objective == pytest.approx(EXPECTED[name])


# -- numbers ------------------------------------------------------------------------------------

LP = "max\n obj: {c} x + 2 y\nst\n c1: {a} x + y <= {b}\n c2: y <= 1\nbounds\n {lo} <= x <= {up}\nend\n"


@pytest.mark.parametrize(("field", "value", "message"), [
    ("a", "1e15", r"coefficient of 'x' in row 'c1' = 1e15; expected a finite number of magnitude < 1e15"),
    ("a", "1e16", r"coefficient of 'x' in row 'c1' = 1e16"),  # HiGHS refuses it; SCIP reads it
    ("a", "1e20", r"coefficient of 'x' in row 'c1' = 1e20"),  # SCIP's read error
    ("c", "1e16", r"objective coefficient of 'x' = 1e16"),  # SCIP answered 0 on a min variant
    ("c", "1e20", r"objective coefficient of 'x' = 1e20"),  # HiGHS's infinite_cost: status unknown
    ("b", "1e16", r"right-hand side of row 'c1' = 1e16"),
    ("up", "1e19", r"bound of 'x' = 1e19; expected a bound of magnitude < 1e15, or >= 1e20"),  # HiGHS: infeasible
    ("up", "-inf", r"bound of 'x' = -inf; expected a finite upper bound, or \+inf"),
    ("lo", "1e20", r"bound of 'x' = 1e20; expected a finite lower bound, or -inf"),
    ("a", "1000000000000000", r"coefficient of 'x' in row 'c1' = 1000000000000000"),  # 1e15 without an exponent
    ("a", "1E+15", r"coefficient of 'x' in row 'c1' = 1E\+15"),
    ("up", "999999999999999.9e1", r"bound of 'x' = 999999999999999.9e1"),
])
def test_numbers_beyond_the_limits_are_refused(tmp_path, field, value, message):
    values = {"c": "1", "a": "1", "b": "3", "lo": "0", "up": "10", field: value}
    path = tmp_path / "m.lp"
    path.write_text(LP.format(**values))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:\d+: ({message})"):
        check_model_file(path)


PYOMO_LAYOUT = "min\nobj:\n+1 x\n+1 y\ns.t.\nc1:\n+1 x\n{term}\n>= 2\nbounds\n{bound}\nend\n"


@pytest.mark.parametrize(("term", "bound", "message"), [
    ("+1e16 y", "0 <= x <= 4", r":8: coefficient of 'y' in row 'c1' = 1e16"),
    ("+1234567890123456 y", "0 <= x <= 4", r":8: coefficient of 'y' in row 'c1' = 1234567890123456"),
    ("+2e15y", "0 <= x <= 4", r":8: coefficient of 'y' in row 'c1' = 2e15"),  # a number, then a name
    ("+1 y", "0 <= x <= 1e16", r":11: bound of 'x' = 1e16"),
    ("+1 y", "1e16 <= x <= +inf", r":11: bound of 'x' = 1e16"),
    ("+1 y", "0 <= inf <= 4", r":11: bound '0 <= inf <= 4'; expected one such as"),
    ("+1 y", "+inf <= x <= 4", r":11: bound of 'x' = \+inf; expected a finite lower bound"),
])
def test_the_line_at_once_paths_refuse_what_the_token_path_does(tmp_path, term, bound, message):
    # Pyomo's layout, one term a line, is checked a line at a time by one regex; these lines must
    # leave it for the token-by-token path and be refused there.
    path = tmp_path / "m.lp"
    path.write_text(PYOMO_LAYOUT.format(term=term, bound=bound))
    with pytest.raises(ValueError, match=re.escape(str(path)) + message):
        check_model_file(path)
    path.write_text(PYOMO_LAYOUT.format(term="+3 y", bound="0 <= x <= 4"))
    assert check_model_file(path) == "lp"


MPS = "NAME t\nROWS\n N obj\n L c1\nCOLUMNS\n x obj 1\n x c1 {a}\nRHS\n RHS c1 3\nENDATA\n"


@pytest.mark.parametrize(("value", "message"), [
    ("1_0", "'1_0'; expected a number"),  # float() reads 10, the solvers' strtod 1
    ("\u0661", "'\u0661'; expected a number"),  # float() reads an Arabic-Indic 1, strtod nothing
    ("nan", "'nan'; expected a number"),
    ("0x10", "'0x10'; expected a number"),
    ("inf", "inf; expected a finite number of magnitude < 1e15"),
    ("1e400", "1e400; expected a finite number of magnitude < 1e15"),
])
def test_mps_numbers_are_numbers_the_solvers_read_alike(tmp_path, value, message):
    path = tmp_path / "m.mps"
    path.write_text(MPS.format(a=value), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:7: entry \(x, c1\) = {re.escape(message)}"):
        check_model_file(path)


@pytest.mark.parametrize(("field", "value"), [("a", "9.9e14"), ("c", "1e14"), ("b", "1e14"), ("up", "1e20"),
                                              ("up", "+infinity"), ("up", "1e300"), ("lo", "-1e20"),
                                              ("lo", "-inf"), ("up", "1e14")])
def test_numbers_within_the_limits_read_alike_in_both_solvers(tmp_path, field, value):
    values = {"c": "1", "a": "1", "b": "3", "lo": "0", "up": "10", field: value}
    path = tmp_path / "m.lp"
    path.write_text(LP.format(**values))
    objectives = {solver: solve_file(path, solver).objective for solver in SOLVERS}
    assert len(SOLVERS) < 2 or objectives["highs"] == pytest.approx(objectives["scip"], rel=1e-9), objectives


def test_highs_names_its_reason_for_refusing_a_model(tmp_path):
    # Past the check (called directly): HiGHS's readModel fails on a 1e16 matrix entry
    # (large_matrix_value); its log line is the reason, instead of a bare "could not read".
    path = tmp_path / "m.lp"
    path.write_text(LP.format(c=1, a="1e16", b=3, lo=0, up=10))
    with pytest.raises(ValueError, match=r"HiGHS could not read .*m\.lp as an LP file: ERROR: .*"
                       r"\[1e\+16, 1e\+16\]"):
        _highs_file(path, get_spec("highs"), {}, False)


# -- reading: a megabyte at a time --------------------------------------------------------------

TEXT = ("\ufeff\\ caf\u00e9 \u00fcn\u00efc\u00f6de \u20ac\r\nmax\r\n obj: x + 2 y\r\nst\r\n c1: x + y <= 3\r\n"
        " c2: y <= 1\r\nend\r\n")


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 1 << 20])
def test_reading_in_chunks_sees_the_same_lines_and_offsets(tmp_path, monkeypatch, chunk):
    from clusteropt.solvers import files

    monkeypatch.setattr(files, "_CHUNK", chunk)
    path = tmp_path / "m.lp"
    data = TEXT.encode()
    path.write_bytes(data)
    assert check_model_file(path) == "lp"
    euro = data.index("\u20ac".encode())  # its second byte damaged: the sequence from its first byte is bad
    path.write_bytes(data[:euro + 1] + b"\xff" + data[euro + 2:])
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: byte {euro} is not UTF-8; expected an LP"):
        check_model_file(path)
    path.write_bytes(data[:40] + b"\0" + data[41:])
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: byte 40 is NUL"):
        check_model_file(path)
    path.write_bytes(data.replace(b"c2:", b"c1:"))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:6: row 'c1' declared twice \(first at line "
                       r"5\)"):
        check_model_file(path)
    path.write_bytes(data[:-len("end\r\n")])  # no END: the last word of the last line
    with pytest.raises(ValueError, match=r"the file ends with '1', not the END keyword"):
        check_model_file(path)
