"""LP / MPS export of Pyomo and CVXPY models, and solving such files directly.

Pyomo models are written by Pyomo's own LP and MPS writers with symbolic labels, so the file
reads like the model (``x(a_1)``, ``cap(3)``).  Linear CVXPY problems are turned into matrices
(:func:`clusteropt.solvers.cvxpy_backend.linear_form`) and written by HiGHS with the wrapper's
names.  :func:`solve_file` reads a file straight into HiGHS (highspy), SCIP (PySCIPOpt), Gurobi
(gurobipy), CPLEX, Xpress or COPT (coptpy), each with its own reader; given the model the file was
written from, the values come back as that model's variables (:func:`model_values`).

Before a solver reads it, :func:`check_model_file` checks the file's structure (free MPS, or
CPLEX LP) and numbers line by line, because both readers take some damaged files as another
model.  It refuses, naming the file and line: sections out of order or missing (an MPS file
without ROWS, an LP file without its sense line), a row declared twice, an entry naming an
undeclared row or column, a repeated (column, row) entry or right-hand side, a column split
across blocks, wrong field counts, unpaired integer markers, text after the end keyword, and
numbers of magnitude 1e15 or more (:data:`MAX_FILE_MAGNITUDE`; bounds of 1e20 or more are
infinite, :data:`INFINITE_BOUND`).  It reads about 0.1 to 0.15 s of CPU per MiB (Pyomo's and
HiGHS's layouts of 17 to 110 MiB, checked line by line with one regex for the common lines).
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import math
import re
import shutil
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.solvers.registry import SolverSpec
from clusteropt.solvers.result import NO_SOLUTION, SolveResult, Termination, settle

log = logging.getLogger(__name__)

FORMATS = {".lp": "lp", ".mps": "mps"}

__all__ = ["FORMATS", "INFINITE_BOUND", "MAX_FILE_MAGNITUDE", "check_model_file", "write_model"]


def _format_of(path: Path) -> str:
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(
            f"cannot tell the file format of {str(path)!r} from its suffix {path.suffix!r}; "
            f"expected one of {', '.join(FORMATS)}"
        )
    return fmt


def write_model(model: Any, path: str | Path) -> Path:
    """Write ``model`` (Pyomo ``ConcreteModel``, ``cvxpy.Problem``, :class:`CvxpyModel` or
    :class:`~clusteropt.models.matrix.MatrixLP`) to LP/MPS.

    The format follows the suffix: ``.lp`` (CPLEX LP) or ``.mps`` (free MPS).  Names are the
    model's own (the paper's symbols), so the file can be read next to the paper.  A
    :class:`~clusteropt.models.matrix.MatrixLP` (a registered model's array form,
    ``build(name, instance, arrays=True)``) is written by HiGHS with its Pyomo model's column
    names (``x(3_1)``, as Pyomo's LP writer labels them) and its constraints' names as row names.

    Parameters
    ----------
    model : pyomo ConcreteModel, cvxpy.Problem, CvxpyModel or MatrixLP
    path : str or Path
        Destination; its parent directory must exist.

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    ValueError
        Unknown suffix, or an :class:`~clusteropt.models.exact.ExactModel` (an algorithm, with no
        LP/MPS form; the message names the solver model of the same optimum).
    FileNotFoundError
        The parent directory does not exist.
    clusteropt.solvers.UnsuitableSolverError
        A CVXPY problem that needs a non-linear cone (the cone is named in the message).

    Examples
    --------
    >>> import cvxpy as cp, tempfile, pathlib
    >>> x = cp.Variable(2, integer=True, name="x")
    >>> prob = cp.Problem(cp.Maximize(x[0] + 2 * x[1]), [x >= 0, x[0] + x[1] <= 3.5])
    >>> out = write_model(prob, pathlib.Path(tempfile.mkdtemp()) / "tiny.lp")
    >>> "x(1)" in out.read_text()
    True
    """
    from clusteropt.solvers.options import backend_of

    path = Path(path)
    _format_of(path)
    if not path.parent.is_dir():
        # checked here: HiGHS's writer crashes the interpreter on a missing directory
        raise FileNotFoundError(f"cannot write {path}: no such directory {path.parent}")
    backend = backend_of(model)
    if backend == "exact":
        raise ValueError(model.no_solver_form("LP/MPS form"))
    if backend == "matrix":
        _write_matrix(model, path)
        return path
    if backend == "pyomo":
        # Pyomo picks its LP / MPS writer from the suffix; rows read c_u_capacity(0_gpu)_
        # (Pyomo's prefix for an upper-bounded row), columns y(3_1)
        model.write(str(path), io_options={"symbolic_solver_labels": True})
        return path
    _write_cvxpy(model, path)
    return path


def _write_cvxpy(model, path: Path) -> None:
    from clusteropt.solvers.cvxpy_backend import linear_form

    form = linear_form(model)
    _write_arrays(path, form.c, form.col_lower, form.col_upper, form.A, form.row_lower, form.row_upper,
                  maximize=form.maximize, integer=form.integer, col_names=list(form.col_names),
                  row_names=list(form.row_names), offset=form.offset,
                  name=model.name if isinstance(model, CvxpyModel) else None)


def _write_matrix(lp, path: Path) -> None:
    """A :class:`~clusteropt.models.matrix.MatrixLP` written by HiGHS with its Pyomo model's names
    (:meth:`~clusteropt.models.matrix.MatrixLP.file_col_names`): the Pyomo model is never built.
    """
    integer = lp.integer if lp.integer is not None else np.zeros(lp.n_cols, dtype=bool)
    _write_arrays(path, lp.cost, lp.col_lower, lp.col_upper, lp.a, lp.row_lower, lp.row_upper,
                  maximize=lp.maximize, integer=np.asarray(integer, dtype=bool), col_names=lp.file_col_names(),
                  row_names=lp.file_row_names(), offset=0.0, name=lp.name)


def _write_arrays(path: Path, c, col_lower, col_upper, A, row_lower, row_upper, *, maximize: bool, integer,
                  col_names: list[str], row_names: list[str], offset: float, name: str | None) -> None:
    """Write an LP / MILP given as arrays with HiGHS's writer (the format from ``path``'s suffix)."""
    import highspy
    import scipy.sparse as sp  # here: listing solvers (clusteropt solvers) imports no scipy

    lp = highspy.HighsLp()
    A = sp.csc_array(A)
    if offset != 0.0:
        # the objective's constant as a column fixed at 1, as Pyomo's writers spell it: Gurobi 13 reads
        # HiGHS's bare "+3" at the end of the objective as a column named "3", and solvers differ on
        # the sign of an objective row's right-hand side in MPS
        A = sp.hstack([A, sp.csc_array((A.shape[0], 1))], format="csc")
        c = np.append(c, offset)
        col_lower, col_upper = np.append(col_lower, 1.0), np.append(col_upper, 1.0)
        integer, col_names = np.append(integer, False), [*col_names, CONSTANT_COLUMN]
    n, m = A.shape[1], A.shape[0]
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = c
    lp.col_lower_, lp.col_upper_ = col_lower, col_upper
    lp.row_lower_, lp.row_upper_ = row_lower, row_upper
    lp.sense_ = highspy.ObjSense.kMaximize if maximize else highspy.ObjSense.kMinimize
    A.sort_indices()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr
    lp.a_matrix_.index_ = A.indices
    lp.a_matrix_.value_ = A.data
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
    if np.any(integer):
        lp.integrality_ = [
            highspy.HighsVarType.kInteger if f else highspy.HighsVarType.kContinuous
            for f in integer
        ]
    lp.col_names_ = col_names
    lp.row_names_ = row_names
    if name is not None:
        lp.model_name_ = name
    from clusteropt.solvers.highs import new_highs

    h = new_highs()  # silent, and no banner on stdout (clusteropt.solvers.highs)
    status = h.passModel(lp)
    if status == highspy.HighsStatus.kError:
        raise RuntimeError(f"HiGHS refused the model {name or ''} given as arrays ({status})")
    status = h.writeModel(str(path))
    if status == highspy.HighsStatus.kError:
        raise OSError(f"HiGHS could not write {path}")
    if _format_of(path) == "lp":
        _drop_empty_lp_sections(path)


CONSTANT_COLUMN = "ONE_VAR_CONSTANT"
"""The column fixed at 1 that carries an exported objective's constant (Pyomo's name for it); file
solves leave it out of ``values``."""

_LP_SECTIONS = frozenset({"bin", "binary", "binaries", "gen", "general", "generals", "semi", "semi-continuous",
                          "semis", "sos", "bounds", "bound", "end"})


def _drop_empty_lp_sections(path: Path) -> None:
    """Remove the empty sections HiGHS writes into an LP file (``bin``, ``gen``, ``semi`` with no line
    under them): COPT 8 refuses an empty ``semi`` section.  HiGHS writes keywords unindented and
    every entry under them indented, so a keyword is a line equal to one.
    """
    lines = path.read_text(encoding="utf-8").split("\n")
    kept = [line for k, line in enumerate(lines)
            if not (line.lower() in _LP_SECTIONS - {"end", "bounds", "bound"}
                    and (k + 1 >= len(lines) or lines[k + 1].lower() in _LP_SECTIONS))]
    if len(kept) != len(lines):
        path.write_text("\n".join(kept), encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# solving files

HIGHS_STATUS: dict[str, Termination] = {
    "kOptimal": Termination.OPTIMAL,
    "kInfeasible": Termination.INFEASIBLE,
    "kUnbounded": Termination.UNBOUNDED,
    "kUnboundedOrInfeasible": Termination.INFEASIBLE_OR_UNBOUNDED,
    "kTimeLimit": Termination.TIME_LIMIT,
    "kIterationLimit": Termination.ITERATION_LIMIT,
    "kSolutionLimit": Termination.ITERATION_LIMIT,
    "kObjectiveBound": Termination.FEASIBLE,
    "kObjectiveTarget": Termination.FEASIBLE,
    "kInterrupt": Termination.ERROR,
    "kSolveError": Termination.ERROR,
    "kLoadError": Termination.ERROR,
    "kModelError": Termination.ERROR,
    "kPresolveError": Termination.ERROR,
    "kPostsolveError": Termination.ERROR,
    "kMemoryLimit": Termination.ERROR,
}
"""``highspy.HighsModelStatus`` name -> :class:`Termination`."""

SCIP_STATUS: dict[str, Termination] = {
    "optimal": Termination.OPTIMAL,
    "gaplimit": Termination.OPTIMAL,  # stopped at the requested relative gap
    "infeasible": Termination.INFEASIBLE,
    "unbounded": Termination.UNBOUNDED,
    "inforunbd": Termination.INFEASIBLE_OR_UNBOUNDED,
    "timelimit": Termination.TIME_LIMIT,
    "nodelimit": Termination.ITERATION_LIMIT,
    "totalnodelimit": Termination.ITERATION_LIMIT,
    "stallnodelimit": Termination.ITERATION_LIMIT,
    "sollimit": Termination.ITERATION_LIMIT,
    "bestsollimit": Termination.ITERATION_LIMIT,
    "restartlimit": Termination.ITERATION_LIMIT,
    "memlimit": Termination.ERROR,
    "userinterrupt": Termination.ERROR,
}
"""PySCIPOpt ``Model.getStatus()`` text -> :class:`Termination`."""



END_KEYWORD = {"lp": "end", "mps": "endata"}
"""The keyword that closes a complete file of each format (case-insensitive)."""

MAX_FILE_MAGNITUDE = 1e15
"""Every finite number in a model file must be smaller in magnitude than this (bounds: see below).

HiGHS refuses a matrix entry of magnitude ``large_matrix_value`` (1e15) or more and treats costs
and bounds from ``infinite_cost`` / ``infinite_bound`` (1e20) on as infinite; SCIP treats values
beyond ``numerics/hugeval`` (1e15) as huge and reads ``numerics/infinity`` (1e20) as infinite.  In
between the two solvers answer different models (highspy 1.15.1, PySCIPOpt 6.3 / SCIP 10): a cost
of 1e16 made SCIP report the optimum 0 instead of 2, an upper bound of 1e19 made HiGHS report a
feasible model infeasible (SCIP: 10 instead of 2), and a coefficient of 1e20 is a SCIP read error.
So costs, coefficients, right-hand sides and ranges stay below 1e15, and so do finite bounds.
"""

INFINITE_BOUND = 1e20
"""A bound of this magnitude or more is infinite, to both solvers (``infinite_bound``, ``numerics/infinity``).

Writers use it so: Pyomo's MPS writer gives an integer column without bounds ``LI -10E20`` /
``UI 10E20``; LP files spell it ``inf`` / ``infinity``.  Only an infinite lower bound of ``-inf``
and an infinite upper bound of ``+inf`` are taken; bounds between 1e15 and 1e20 are refused.
"""

_MAGNITUDE_TEXT = ("a finite number of magnitude < 1e15 (MAX_FILE_MAGNITUDE: HiGHS's large_matrix_value and "
                   "SCIP's numerics/hugeval; solvers answer other models beyond it){}")
_INFINITY_WORDS = frozenset({"inf", "infinity"})


_CHUNK = 1 << 20
"""Bytes read at a time by :func:`_text_chunks`."""


def _text_chunks(path: Path, fmt: str):
    """``(number of the first line, lines)`` of ``path``, read as UTF-8 a megabyte at a time.

    Lines end at ``\n`` only (as the solvers' C readers read them); a ``\r`` before it is dropped.
    Raises ValueError at the first NUL byte or byte that is not UTF-8, with its offset from the
    file's start; a byte-order mark before the first line is skipped.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, lineno, carry, started = 0, 1, "", False
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(_CHUNK)
            nul = chunk.find(b"\0")
            if nul >= 0:
                raise ValueError(f"{path}: byte {offset + nul} is NUL; expected an {fmt.upper()} text file")
            pending = len(decoder.getstate()[0])  # bytes of a character cut by the last chunk's end
            try:
                text = decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}: byte {offset - pending + exc.start} is not UTF-8; expected an "
                                 f"{fmt.upper()} text file") from None
            if text and not started:  # the file's first character (a chunk may end inside it)
                started = True
                text = text[1:] if text.startswith("\ufeff") else text
            offset += len(chunk)
            lines = (carry + text).split("\n")
            carry = lines.pop() if chunk else ""
            if not chunk and lines == [""]:
                return
            yield lineno, [line[:-1] if line.endswith("\r") else line for line in lines]
            lineno += len(lines)
            if not chunk:
                return


class _FileCheck:
    """What the LP and MPS checks share: errors at a line, numbers, the closing keyword."""

    fmt = ""

    def __init__(self, path: Path):
        self.path = path
        self.end_line: int | None = None  # the line of END / ENDATA
        self.last_token = ""  # the last line with content, or its last word (for a truncated file)

    def lines(self, first: int, lines: list[str]) -> None:
        """Check lines ``first, first + 1, ...`` (without their line breaks)."""
        for lineno, text in enumerate(lines, first):
            self.line(lineno, text)

    def line(self, lineno: int, text: str) -> None:
        """Check one line (without its line break)."""
        raise NotImplementedError

    def fail(self, lineno: int, what: str) -> ValueError:
        return ValueError(f"{self.path}:{lineno}: {what}")

    def number(self, lineno: int, token: str, where: str, *, side: str = "") -> float:
        """``token`` as a float of magnitude below :data:`MAX_FILE_MAGNITUDE`.

        A ``side="lower"`` / ``"upper"`` bound may also be infinite (:data:`INFINITE_BOUND` or more,
        or the words ``inf`` / ``infinity``) in its own direction: ``-inf`` below, ``+inf`` above.
        """
        try:
            value = float(token)
        except ValueError:
            value = math.nan
        # float() takes what the solvers' C readers do not: "1_000", non-ASCII digits, "nan"
        if math.isnan(value) or "_" in token or not token.isascii():
            raise self.fail(lineno, f"{where} = {token!r}; expected a number")
        if abs(value) < MAX_FILE_MAGNITUDE:
            return value
        if side and abs(value) >= INFINITE_BOUND:
            if (value < 0) == (side == "lower"):
                return value
            raise self.fail(lineno, f"{where} = {token}; expected a finite {side} bound, or "
                            f"{'-' if side == 'lower' else '+'}inf")
        if side:
            raise self.fail(lineno, f"{where} = {token}; expected a bound of magnitude < 1e15, or >= 1e20 "
                            "(INFINITE_BOUND) for an infinite one: the solvers read bounds in between differently "
                            "(MAX_FILE_MAGNITUDE)")
        raise self.fail(lineno, f"{where} = {token}; expected " + _MAGNITUDE_TEXT.format(""))

    def finish(self) -> None:
        if self.end_line is None:
            last = self.last_token.split()[-1] if self.last_token.strip() else ""
            raise ValueError(
                f"{self.path}: the file ends with {last!r}, not the {END_KEYWORD[self.fmt].upper()} "
                f"keyword that closes a complete {self.fmt.upper()} file (truncated?)"
            )


# -- MPS ----------------------------------------------------------------------------------------

_MPS_SECTIONS = ("NAME", "OBJSENSE", "ROWS", "COLUMNS", "RHS", "RANGES", "BOUNDS", "QUADOBJ", "ENDATA")
_MPS_RANK = {name: k for k, name in enumerate(_MPS_SECTIONS)}
_MPS_SENSES = frozenset({"MAX", "MAXIMIZE", "MIN", "MINIMIZE"})
_MPS_ROW_TYPES = frozenset("NELG")
_BOUND_VALUED = frozenset({"UP", "LO", "FX", "LI", "UI", "SC"})  # type set column value
_BOUND_BARE = frozenset({"FR", "MI", "PL", "BV"})  # type set column (BV: a value may follow)
_BOUND_BIT = {kind: 1 << k for k, kind in enumerate(sorted(_BOUND_VALUED | _BOUND_BARE))}
_BOUND_SIDE = {"UP": "upper", "UI": "upper", "SC": "upper", "LO": "lower", "LI": "lower"}  # FX, BV: finite
_MARKERS = {"'INTORG'": True, "'INTEND'": False}


class _MpsCheck(_FileCheck):
    """Free MPS (and fixed MPS whose names hold no spaces), one line at a time.

    Sections in the order NAME, OBJSENSE, ROWS, COLUMNS, RHS, RANGES, BOUNDS, QUADOBJ, ENDATA,
    each at most once (ROWS and COLUMNS required); a header starts in column 1, a data line with
    a space.  Keywords (sections, row and bound types, senses) are upper case: SCIP 10 refuses
    ``rows`` or ``up``, where HiGHS reads some of them.  The set name of RHS, RANGES and BOUNDS
    lines may be left out, as fixed MPS allows and both solvers read.

    Rows and columns are declared once.  A column's entries are contiguous: a column split across
    blocks is refused (HiGHS 1.15 read such a file as an unbounded model, SCIP refused it).  Every
    entry, right-hand side, range and bound names a declared row or column, once: a repeated
    (column, row) entry was summed by SCIP and not by HiGHS, a repeated right-hand side kept the
    last value in SCIP and the first in HiGHS.  Integer markers pair up.
    """

    fmt = "mps"

    def __init__(self, path: Path):
        super().__init__(path)
        self.section = ""
        self.seen: set[str] = set()
        self.sense: str | None = None
        self.sense_line = 0
        self.rows: dict[str, tuple[str, int]] = {}  # name -> (type, line)
        self.columns: dict[str, int] = {}  # name -> line of its first entry
        self.column = ""  # the column whose entries are being read
        self.column_rows: set[str] = set()
        self.marker = 0  # line of an open INTORG marker
        self.vectors: dict[str, str] = {}  # RHS / RANGES / BOUNDS -> the set name its lines use
        self.given: dict[str, set] = {"RHS": set(), "RANGES": set(), "QUADOBJ": set()}
        self.bounds: dict[str, int] = {}  # column -> bit mask of its bound types (no tuple a bound)

    def lines(self, first: int, lines: list[str]) -> None:
        # The common line, one more entry of the current column, is checked here inline (the file's
        # bulk: about half the time of the general path); anything else takes the general path.
        rows = self.rows
        for lineno, text in enumerate(lines, first):
            if self.section == "COLUMNS" and text[:1] in (" ", "\t"):
                tokens = text.split()
                if len(tokens) == 3 and tokens[0] == self.column:
                    row, token = tokens[1], tokens[2]
                    try:
                        value = float(token)
                    except ValueError:
                        value = math.nan
                    if row in rows and row not in self.column_rows and -MAX_FILE_MAGNITUDE < value < \
                            MAX_FILE_MAGNITUDE and "_" not in token and token.isascii():
                        self.column_rows.add(row)
                        self.last_token = token
                        continue
            self.line(lineno, text)

    def line(self, lineno: int, text: str) -> None:
        if not text.strip() or text.startswith("*"):
            return
        tokens = text.split()
        if self.end_line is not None:
            raise self.fail(lineno, f"{_shown_line(text)}; expected nothing after ENDATA (line {self.end_line})")
        self.last_token = tokens[-1]
        if text[0].isspace():
            self.data(lineno, tokens)
        else:
            self.header(lineno, tokens)

    def header(self, lineno: int, tokens: list[str]) -> None:
        key = tokens[0]
        if key not in _MPS_RANK:
            raise self.fail(lineno, f"section {key!r}; expected one of {', '.join(_MPS_SECTIONS)} in upper case "
                            "(a data line starts with a space)")
        if self.section and _MPS_RANK[key] <= _MPS_RANK[self.section]:
            raise self.fail(lineno, f"section {key} after {self.section}; expected the order "
                            f"{', '.join(_MPS_SECTIONS)}, each section once")
        self.close(lineno)
        if _MPS_RANK[key] >= _MPS_RANK["COLUMNS"] and "ROWS" not in self.seen:
            raise self.fail(lineno, f"section {key} before any ROWS section; expected ROWS first")
        if _MPS_RANK[key] > _MPS_RANK["COLUMNS"] and "COLUMNS" not in self.seen:
            raise self.fail(lineno, f"section {key} before any COLUMNS section; expected COLUMNS after ROWS")
        if key == "OBJSENSE" and len(tokens) == 2:
            self.objsense(lineno, tokens[1])
        elif key != "NAME" and len(tokens) != 1:
            raise self.fail(lineno, f"section header {key} followed by {' '.join(tokens[1:])!r}; expected the "
                            "header alone on its line")
        self.section = key
        self.seen.add(key)
        if key == "ENDATA":
            self.end_line = lineno

    def close(self, lineno: int) -> None:
        """Checks that end with a section (at the next header)."""
        if self.section == "OBJSENSE" and self.sense is None:
            raise self.fail(lineno, f"OBJSENSE (line {self.sense_line or lineno}) has no sense; expected MAX or "
                            "MIN")
        if self.section == "OBJSENSE":
            return
        if self.marker:
            raise self.fail(lineno, f"the INTORG marker of line {self.marker} is not closed; expected an INTEND "
                            "marker before the end of COLUMNS")

    def objsense(self, lineno: int, word: str) -> None:
        if self.sense is not None:
            raise self.fail(lineno, f"{word!r} in OBJSENSE, which already holds {self.sense!r} (line "
                            f"{self.sense_line}); expected one sense line, then ROWS (a section header missing?)")
        if word not in _MPS_SENSES:
            raise self.fail(lineno, f"objective sense {word!r}; expected MAX, MAXIMIZE, MIN or MINIMIZE")
        self.sense, self.sense_line = word, lineno

    def data(self, lineno: int, tokens: list[str]) -> None:
        section = self.section
        if section == "OBJSENSE":
            if len(tokens) != 1:
                raise self.fail(lineno, f"{' '.join(tokens)!r} in OBJSENSE; expected one word, MAX or MIN (a "
                                "section header missing?)")
            self.objsense(lineno, tokens[0])
        elif section == "ROWS":
            self.row(lineno, tokens)
        elif section == "COLUMNS":
            self.entry(lineno, tokens)
        elif section in ("RHS", "RANGES"):
            self.vector(lineno, section, tokens)
        elif section == "BOUNDS":
            self.bound(lineno, tokens)
        elif section == "QUADOBJ":
            self.quad(lineno, tokens)
        else:
            where = f"in {section}" if section else "before any section header"
            raise self.fail(lineno, f"data line {' '.join(tokens)!r} {where}; expected a section header "
                            "(ROWS, COLUMNS, ...) first (a header missing?)")

    def row(self, lineno: int, tokens: list[str]) -> None:
        if len(tokens) != 2:
            raise self.fail(lineno, f"ROWS line with {len(tokens)} fields; expected 2 (type and name)")
        kind, name = tokens
        if kind not in _MPS_ROW_TYPES:
            raise self.fail(lineno, f"row type {kind!r}; expected N, E, L or G")
        if name in self.rows:
            raise self.fail(lineno, f"row {name!r} declared twice (first at line {self.rows[name][1]}); expected "
                            "every row named once")
        self.rows[name] = (kind, lineno)

    def declared_row(self, lineno: int, name: str, what: str) -> str:
        row = self.rows.get(name)
        if row is None:
            raise self.fail(lineno, f"{what} names row {name!r}, which ROWS does not declare")
        return row[0]

    def entry(self, lineno: int, tokens: list[str]) -> None:
        if len(tokens) == 3 and tokens[1] == "'MARKER'":
            opens = _MARKERS.get(tokens[2])
            if opens is None:
                raise self.fail(lineno, f"marker {tokens[2]!r}; expected 'INTORG' or 'INTEND'")
            if opens == bool(self.marker):
                at = f"inside the INTORG block of line {self.marker}" if opens else "without an INTORG before it"
                raise self.fail(lineno, f"marker {tokens[2]} {at}; expected INTORG and INTEND in pairs")
            self.marker = lineno if opens else 0
            self.column = ""  # a column does not go on across a marker
            return
        if len(tokens) not in (3, 5):
            raise self.fail(lineno, f"COLUMNS line with {len(tokens)} fields; expected 3 or 5 (column, row, value"
                            "[, row, value])")
        col = tokens[0]
        if col != self.column:
            if col in self.columns:
                raise self.fail(lineno, f"column {col!r} goes on after other columns (its entries began at line "
                                f"{self.columns[col]}); expected each column's entries together")
            self.columns[col] = lineno
            self.column = col
            self.column_rows = set()
        for k in (1, 3)[: len(tokens) // 2]:
            name = tokens[k]
            kind = self.declared_row(lineno, name, f"entry ({col}, {name})")
            if name in self.column_rows:
                raise self.fail(lineno, f"entry ({col}, {name}) given twice; expected each (column, row) once "
                                "(solvers disagree on a repeat: one sums, one keeps one)")
            self.column_rows.add(name)
            self.number(lineno, tokens[k + 1], f"{'cost' if kind == 'N' else 'entry'} ({col}, {name})")

    def set_name(self, lineno: int, section: str, name: str) -> None:
        first = self.vectors.setdefault(section, name)
        if name != first:
            raise self.fail(lineno, f"{section} vector {name!r}; expected one {section} vector ({first!r}): "
                            "solvers read one and differ in which")

    def vector(self, lineno: int, section: str, tokens: list[str]) -> None:
        if len(tokens) not in (2, 3, 4, 5):
            raise self.fail(lineno, f"{section} line with {len(tokens)} fields; expected [name,] row, value"
                            "[, row, value]")
        if len(tokens) % 2:
            self.set_name(lineno, section, tokens[0])
            tokens = tokens[1:]
        else:
            self.set_name(lineno, section, "")
        for k in range(0, len(tokens), 2):
            name = tokens[k]
            kind = self.declared_row(lineno, name, f"{section} entry")
            if section == "RANGES" and kind == "N":
                raise self.fail(lineno, f"RANGES entry for the free row {name!r}; expected a range on an E, L or "
                                "G row")
            if name in self.given[section]:
                raise self.fail(lineno, f"{section} of row {name!r} given twice; expected once (solvers disagree "
                                "on a repeat)")
            self.given[section].add(name)
            self.number(lineno, tokens[k + 1], f"{section} of row {name!r}")

    def bound(self, lineno: int, tokens: list[str]) -> None:
        kind = tokens[0]
        rest = tokens[1:]
        shapes: dict[int, tuple[int | None, int, int | None]]  # field count -> positions of set, column, value
        if kind in _BOUND_VALUED:
            shapes = {2: (None, 0, 1), 3: (0, 1, 2)}
        elif kind in _BOUND_BARE:
            shapes = {1: (None, 0, None), 2: (0, 1, None)}
            if kind == "BV":
                shapes[3] = (0, 1, 2)
        else:
            raise self.fail(lineno, f"bound type {tokens[0]!r}; expected one of "
                            f"{', '.join(sorted(_BOUND_VALUED | _BOUND_BARE))}")
        if len(rest) not in shapes:
            raise self.fail(lineno, f"{kind} bound with {len(tokens)} fields; expected {kind} [set name] column"
                            + (" value" if kind in _BOUND_VALUED else ""))
        s, c, v = shapes[len(rest)]
        self.set_name(lineno, "BOUNDS", rest[s] if s is not None else "")
        col = rest[c]
        if col not in self.columns:
            raise self.fail(lineno, f"{kind} bound names column {col!r}, which COLUMNS does not declare")
        mask, bit = self.bounds.get(col, 0), _BOUND_BIT[kind]
        if mask & bit:
            raise self.fail(lineno, f"{kind} bound of column {col!r} given twice; expected each bound once")
        self.bounds[col] = mask | bit
        if v is not None:
            self.number(lineno, rest[v], f"{kind} bound of column {col!r}", side=_BOUND_SIDE.get(kind, ""))

    def quad(self, lineno: int, tokens: list[str]) -> None:
        if len(tokens) != 3:
            raise self.fail(lineno, f"QUADOBJ line with {len(tokens)} fields; expected 3 (column, column, value)")
        for col in tokens[:2]:
            if col not in self.columns:
                raise self.fail(lineno, f"QUADOBJ entry names column {col!r}, which COLUMNS does not declare")
        pair = (tokens[0], tokens[1])
        if pair in self.given["QUADOBJ"]:
            raise self.fail(lineno, f"QUADOBJ entry ({pair[0]}, {pair[1]}) given twice; expected once")
        self.given["QUADOBJ"].add(pair)
        self.number(lineno, tokens[2], f"QUADOBJ entry ({pair[0]}, {pair[1]})")


# -- CPLEX LP -----------------------------------------------------------------------------------

_LP_KEYWORDS = {
    **dict.fromkeys(("maximize", "maximise", "maximum", "max", "minimize", "minimise", "minimum", "min"), "sense"),
    **dict.fromkeys(("subject to", "such that", "st", "s.t.", "st.", "s.t"), "subject to"),
    **dict.fromkeys(("bounds", "bound"), "bounds"),
    **dict.fromkeys(("general", "generals", "gen"), "general"),
    **dict.fromkeys(("binary", "binaries", "bin"), "binary"),
    **dict.fromkeys(("semi-continuous", "semis", "semi"), "semi-continuous"),
    "sos": "sos",
    "end": "end",
}
"""Section keywords of CPLEX LP (case-insensitive, at the start of a line) -> the section."""
_LP_KEYWORD_STARTS = frozenset(key[0] for key in _LP_KEYWORDS)
_LP_RANK = {"sense": 1, "subject to": 2, "bounds": 3, "general": 4, "binary": 4, "semi-continuous": 4, "end": 5}
_LP_TOKEN = re.compile(r"(?P<N>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)|(?P<O><=|=<|>=|=>|[<>=])"
                       r"|(?P<S>[+-])|(?P<C>:)|(?P<Q>[\[\]*^/])|(?P<W>[^\s+\-<>=:\[\]*^/]+)")
_LP_LESS, _LP_MORE = frozenset({"<", "<=", "=<"}), frozenset({">", ">=", "=>"})
# The bulk of an LP file, matched whole by one regex: lines of signed terms "+5 x(0) -2 y"
# (Pyomo's layout), one-line rows "c1: +1 x +1 y <= +3" and objectives "obj: +1 x +2 y" (HiGHS's).
# Their numbers are small by construction: at most 15 digits before the point and no exponent
# but a negative one, so below 1e15; a number and a name split where the tokens above split them
# (the atomic group and the look-ahead), or the line takes the token-by-token path, which is exact.
_LP_SMALL = r"(?>(?:[0-9]{1,15}(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]-[0-9]+)?)(?![0-9.eE])"
_LP_NAME = r"(?>[^\s+\-<>=:\[\]*^/0-9.][^\s+\-<>=:\[\]*^/]*)"
_LP_TERMS = rf"(?:\s*[+-]\s*(?:{_LP_SMALL}\s*)?{_LP_NAME})+"
_LP_SIGNED_TERMS = re.compile(rf"{_LP_TERMS}\s*")
_LP_FIRST_TERM = rf"(?:[+-]?\s*(?:{_LP_SMALL}\s*)?{_LP_NAME})"
_LP_ROW = re.compile(rf"\s*({_LP_NAME})\s*:\s*{_LP_FIRST_TERM}(?:{_LP_TERMS})?\s*"
                     rf"(?:<=|=<|>=|=>|[<>=])\s*[+-]?\s*{_LP_SMALL}\s*")
_LP_OBJECTIVE = re.compile(rf"\s*(?:{_LP_NAME}\s*:)?\s*{_LP_FIRST_TERM}(?:{_LP_TERMS})?\s*")
_LP_INF = r"(?i:inf(?:inity)?)"
_LP_BOUND = re.compile(  # "x <= 5", "0 <= x <= 4", "-inf <= x <= +inf", "x free"
    rf"\s*({_LP_NAME})\s*(?:<=|=<|>=|=>|[<>=])\s*[+-]?\s*{_LP_SMALL}\s*"
    rf"|\s*(?:[+-]?\s*{_LP_SMALL}|-\s*{_LP_INF})\s*(?:<=|=<|<)\s*({_LP_NAME})\s*(?:<=|=<|<)\s*"
    rf"(?:[+-]?\s*{_LP_SMALL}|\+?\s*{_LP_INF})\s*"
    rf"|\s*({_LP_NAME})\s+(?i:free)\s*")
_LP_ONE_NAME = re.compile(_LP_NAME)


def _shown_line(text: str, most: int = 60) -> str:
    """``repr`` of a line, cut to ``most`` characters."""
    text = text.strip()
    return repr(text if len(text) <= most else text[:most] + "...")


class _LpCheck(_FileCheck):
    """CPLEX LP, one line at a time.

    The objective sense comes first (``minimize`` / ``maximize`` and their abbreviations), then the
    objective, ``subject to`` (``st``, ``s.t.``, ``such that``) and the rows, ``bounds``, the
    ``general`` / ``binary`` / ``semi-continuous`` sections in any order (each once) and ``end``.
    Terms are ``[+|-] [number] name`` joined by signs; a row ends with its sense and right-hand side;
    rows are named once.  A repeated variable within one row is taken (both solvers add the terms);
    quadratic terms, SOS and indicator rows are not.
    """

    fmt = "lp"

    def __init__(self, path: Path):
        super().__init__(path)
        self.section = ""
        self.seen: set[str] = set()
        self.rows: dict[str, int] = {}  # row name -> line
        self.state = "start"  # in an expression: start, term, coef, after, rhs, rhs-sign
        self.row = ""  # the row being read ("" before its name)
        self.row_line = 0
        self.coef = ""
        self.coef_line = 0
        self.rhs_sign = ""

    def lines(self, first: int, lines: list[str]) -> None:
        # The common lines, checked inline by one regex each: one more "+5 x(0)" of the objective or
        # a row (Pyomo's layout), a simple bound, one name of an integer section; the rest: line().
        for lineno, text in enumerate(lines, first):
            if "\\" not in text:
                section = self.section
                if section in ("sense", "subject to"):
                    if text[:1] in ("+", "-") and self.state in ("after", "term0") and \
                            _LP_SIGNED_TERMS.fullmatch(text):
                        self.state, self.last_token = "after", text
                        continue
                elif section == "bounds":
                    whole = _LP_BOUND.fullmatch(text)
                    name = whole and (whole.group(1) or whole.group(2) or whole.group(3))
                    if name and name.lower() not in _INFINITY_WORDS and name.lower() not in _LP_KEYWORDS:
                        self.last_token = text
                        continue
                elif section in ("general", "binary", "semi-continuous"):
                    word = text.strip()
                    if word.lower() not in _LP_KEYWORDS and _LP_ONE_NAME.fullmatch(word):
                        self.last_token = word
                        continue
            self.line(lineno, text)

    def line(self, lineno: int, text: str) -> None:
        code = text.split("\\", 1)[0]
        if not code.strip():
            return
        if self.end_line is not None:
            raise self.fail(lineno, f"{_shown_line(code)}; expected nothing after END (line {self.end_line})")
        self.last_token = code
        section, rest = self.keyword(code)
        if section:
            self.enter(lineno, section)
            code = rest
            if not code.strip():
                return
        elif not self.section:
            raise self.fail(lineno, f"{_shown_line(code)}; expected the objective sense first (minimize, "
                            "maximize, min, max, ...)")
        if self.section in ("sense", "subject to"):
            if not self.fast_expression(lineno, code):
                self.expression(lineno, [(m.lastgroup, m.group()) for m in _LP_TOKEN.finditer(code)])
            return
        tokens = [(m.lastgroup, m.group()) for m in _LP_TOKEN.finditer(code)]
        if self.section == "bounds":
            self.bound(lineno, tokens)
        elif self.section == "end":
            raise self.fail(lineno, f"{_shown_line(code)} after END; expected END alone on its line")
        else:
            for kind, word in tokens:
                if kind != "W":
                    raise self.fail(lineno, f"{word!r} in the {self.section} section; expected variable names "
                                    "only")

    @staticmethod
    def keyword(code: str) -> tuple[str, str]:
        """``(section, rest of the line)`` when ``code`` starts with a section keyword, else ``("", code)``."""
        if code.lstrip()[:1].lower() not in _LP_KEYWORD_STARTS:
            return "", code
        words = code.split(None, 2)
        for n in (2, 1):
            if len(words) >= n:
                key = " ".join(words[:n]).lower()
                if key in _LP_KEYWORDS:
                    rest = words[n] if len(words) > n else ""
                    if rest.startswith(":"):  # "max: ..." is a name and a colon, not CPLEX LP
                        return "", code
                    return _LP_KEYWORDS[key], rest
        return "", code

    def enter(self, lineno: int, section: str) -> None:
        if section == "sos":
            raise self.fail(lineno, "an SOS section; expected a linear or integer model (SOS is not read here)")
        if not self.section and section != "sense":
            raise self.fail(lineno, f"{section.upper()} before the objective sense; expected minimize or maximize "
                            "first")
        if self.section:
            rank, now = _LP_RANK[section], _LP_RANK[self.section]
            if rank < now or (rank == now and (rank != 4 or section in self.seen)):
                raise self.fail(lineno, f"{section.upper()} after {self.section.upper()}; expected the sense, the "
                                "objective, SUBJECT TO, BOUNDS, GENERAL / BINARY / SEMI-CONTINUOUS, END, each "
                                "once")
            self.close(lineno, section)
        self.section = section
        self.seen.add(section)
        self.state, self.row = "start", ""
        if section == "end":
            self.end_line = lineno

    def close(self, lineno: int, section: str) -> None:
        """The objective or row being read must be complete when ``section`` begins."""
        if self.section not in ("sense", "subject to"):
            return
        if self.state == "coef":
            self.constant()
        if self.section == "sense":
            if self.state == "term":
                raise self.fail(lineno, f"{section.upper()} while the objective lacks a term after its last sign")
            return
        if self.state != "start":
            missing = {"term0": "its terms, sense and right-hand side", "term": "a term after its last sign",
                       "after": "its sense and right-hand side"}.get(self.state, "its right-hand side")
            raise self.fail(lineno, f"{section.upper()} while {self.row_text()} (line {self.row_line}) lacks "
                            f"{missing}")

    def row_text(self) -> str:
        return f"row {self.row!r}" if self.row else f"the row of line {self.row_line}"

    def where(self, var: str) -> str:
        if self.section == "sense":
            return f"objective coefficient of {var!r}" if var else "objective constant"
        return f"coefficient of {var!r} in {self.row_text()}" if var else f"constant in {self.row_text()}"

    def constant(self) -> None:
        self.number(self.coef_line, self.coef, self.where(""))
        self.state = "after"

    def fast_expression(self, lineno: int, code: str) -> bool:
        """Check a common whole line at once; False leaves it to :meth:`expression`."""
        if self.state in ("after", "term0"):
            whole = _LP_SIGNED_TERMS.fullmatch(code)
        elif self.state == "start":
            whole = (_LP_ROW if self.section == "subject to" else _LP_OBJECTIVE).fullmatch(code)
        else:
            return False
        if whole is None:
            return False
        if self.state == "start" and self.section == "sense":
            self.row_line, self.state = lineno, "after"
        elif self.state == "start":
            name = whole.group(1)
            if name in self.rows:
                return False  # the token path reports it
            self.rows[name] = lineno
            self.row, self.row_line = name, lineno
        else:
            self.state = "after"
        return True

    def expression(self, lineno: int, tokens: list[tuple[str | None, str]]) -> None:
        i = 0
        while i < len(tokens):
            kind, tok = tokens[i]
            state = self.state
            if state == "start":
                self.row, self.row_line = "", lineno
                if kind == "W" and i + 1 < len(tokens) and tokens[i + 1][0] == "C":
                    if self.section == "subject to":
                        if tok in self.rows:
                            raise self.fail(lineno, f"row {tok!r} declared twice (first at line "
                                            f"{self.rows[tok]}); expected every row named once")
                        self.rows[tok] = lineno
                        self.row = tok
                    i += 2
                elif kind == "C":
                    raise self.fail(lineno, "':' without a name before it; expected 'name:' to name a row")
                self.state = "term0"
                continue
            if state in ("term0", "term"):
                if kind == "S":
                    self.state = "term"
                elif kind == "N":
                    self.coef, self.coef_line, self.state = tok, lineno, "coef"
                elif kind == "W":
                    self.state = "after"
                elif kind == "O" and state == "term0" and self.section == "subject to":
                    if not self.row:  # HiGHS writes an empty row as "r0: <= +3", and reads it back
                        raise self.fail(lineno, f"{self.row_text()} has no name and no terms before its sense "
                                        f"{tok!r}")
                    self.state = "rhs"
                else:
                    raise self.fail(lineno, self.unexpected(tok, "a term (a number or a variable name)"))
            elif state == "coef":
                if kind == "W":
                    if not float(self.coef) < MAX_FILE_MAGNITUDE:  # the regex's numbers are unsigned decimals
                        self.number(self.coef_line, self.coef, self.where(tok))
                    self.state = "after"
                else:
                    self.constant()
                    continue
            elif state == "after":
                if kind == "S":
                    self.state = "term"
                elif kind == "O" and self.section == "subject to":
                    self.state = "rhs"
                elif kind == "O":
                    raise self.fail(lineno, f"a sense {tok!r} in the objective; expected SUBJECT TO before the "
                                    "rows (its line missing?)")
                else:
                    raise self.fail(lineno, self.unexpected(tok, "+ or - between terms" + (
                        ", or the row's sense" if self.section == "subject to" else "")))
            elif state in ("rhs", "rhs-sign"):
                if kind == "S" and state == "rhs":
                    self.state, self.rhs_sign = "rhs-sign", tok
                elif kind == "N":
                    if not float(tok) < MAX_FILE_MAGNITUDE:
                        sign = self.rhs_sign if state == "rhs-sign" else ""
                        self.number(lineno, sign + tok, f"right-hand side of {self.row_text()}")
                    self.state = "start"
                else:
                    raise self.fail(lineno, self.unexpected(tok, f"the right-hand side of {self.row_text()}"))
            i += 1

    def unexpected(self, tok: str, expected: str) -> str:
        if tok in "[]*^/":
            return f"{tok!r}: quadratic terms are not read here; expected a linear model"
        return f"{tok!r}; expected {expected}"

    def bound(self, lineno: int, tokens: list[tuple[str | None, str]]) -> None:
        items: list[tuple[str, str]] = []  # ("V", signed number) / ("W", name) / ("O", op) / ("F", free)
        sign = ""
        for kind, tok in tokens:
            if kind == "S" and not sign:
                sign = tok
                continue
            if kind == "N" or (kind == "W" and tok.lower() in _INFINITY_WORDS):
                items.append(("V", sign + tok))
            elif sign:
                raise self.fail(lineno, self.unexpected(tok, f"a number or infinity after {sign!r}"))
            elif kind == "W" and tok.lower() == "free":
                items.append(("F", tok))
            elif kind in ("W", "O"):
                items.append((kind or "", tok))
            else:
                raise self.fail(lineno, self.unexpected(tok, "a bound"))
            sign = ""
        shape = "".join(k for k, _ in items)
        if sign or shape not in ("WF", "WOV", "VOW", "VOWOV"):
            raise self.fail(lineno, f"bound {' '.join(t for _, t in tokens)!r}; expected one such as "
                            "'0 <= x <= 4', 'x >= -1', 'x = 2' or 'x free'")
        senses = {items[1][1], items[3][1]} if shape == "VOWOV" else set()
        if senses and not (senses <= _LP_LESS or senses <= _LP_MORE):
            raise self.fail(lineno, f"bound {' '.join(t for _, t in tokens)!r}; expected both senses alike "
                            "(l <= x <= u)")
        name = items[0][1] if shape[0] == "W" else items[2][1]
        for k, (kind, tok) in enumerate(items):
            if kind == "V":  # its side: "l <= x", "x <= u", "u >= x", "x >= l"; "x = v" is finite
                op = items[k + 1][1] if k + 1 < len(items) else items[k - 1][1]
                before = k + 1 < len(items)
                side = "" if op == "=" else "lower" if (op in _LP_LESS) == before else "upper"
                self.number(lineno, tok, f"bound of {name!r}", side=side)


def check_model_file(path: Path) -> str:
    """Refuse a file that is not a complete, well-formed LP / MPS text, before a solver reads it.

    Solvers' readers are lenient: SCIP solves a truncated file (or binary bytes) as whatever
    model the part it could parse describes, and both solvers read some damaged files as another
    model (an MPS file without its ROWS header as objective 0, an entry naming an undeclared row
    with the entry dropped, an LP file without its sense line as objective 0).  So the file is
    read here first, line by line (linear time, memory for the sets of row and column names):

    * text: no NUL byte, valid UTF-8 (a byte-order mark is skipped);
    * structure: free MPS (and fixed MPS whose names hold no spaces; see :class:`_MpsCheck`) or
      CPLEX LP (:class:`_LpCheck`), closed by ``ENDATA`` / ``end`` with nothing after it;
    * numbers: finite and of magnitude below :data:`MAX_FILE_MAGNITUDE` (1e15), where the two
      solvers begin to answer different models; infinite bounds and right-hand sides as words.

    Returns the format.

    Raises
    ------
    ValueError
        ``<file>:<line>: <what is wrong>; expected <what>`` (a truncated file names its last word,
        binary bytes their byte offset).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "t.lp"
    >>> _ = p.write_text("max\\n obj: x + 2 y\\nst\\n c1: x + y <= 3\\n c1: y <= 1e16\\nend\\n")
    >>> check_model_file(p)
    Traceback (most recent call last):
    ...
    ValueError: ...t.lp:5: row 'c1' declared twice (first at line 4); expected every row named once
    """
    fmt = _format_of(path)
    check: _FileCheck = _MpsCheck(path) if fmt == "mps" else _LpCheck(path)
    for first, lines in _text_chunks(path, fmt):
        check.lines(first, lines)
    check.finish()
    return fmt


def solve_file_with(path: Path, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    """Solve an LP / MPS file with ``spec``'s file route (options already native)."""
    route = spec.route("file")
    reader = FILE_SOLVERS[route.native]
    check_model_file(path)
    return reader(path, spec, native, tee)


def _highs_file(path: Path, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    import highspy

    from clusteropt.solvers.highs import quiet_banner

    quiet_banner()  # highspy 1.16's first Highs of a process prints one (clusteropt.solvers.highs)
    h = highspy.Highs()
    h.setOptionValue("output_flag", True)  # the log reaches the callback (HiGHS's reasons) ...
    h.setOptionValue("log_to_console", bool(tee))  # ... and the console only with tee
    reasons = _highs_reasons(h)
    t0 = time.perf_counter()
    with _without_bom(path) as readable:
        read = h.readModel(str(readable))
        reasons[:] = [r.replace(str(readable), str(path)) for r in reasons]
    if read == highspy.HighsStatus.kError:
        raise ValueError(f"HiGHS could not read {path} as an {_format_of(path).upper()} file"
                         + (f": {'; '.join(reasons)}" if reasons else ""))
    if reasons:  # kWarning: e.g. matrix values at most small_matrix_value (1e-9), which HiGHS drops
        log.warning("HiGHS read %s with warnings: %s", path, "; ".join(reasons))
        reasons.clear()
    t1 = time.perf_counter()
    for k, v in native.items():  # after reading: HiGHS would count the reading against a time limit
        h.setOptionValue(k, v)
    run_status = h.run()
    t2 = time.perf_counter()
    status = h.getModelStatus()
    info = h.getInfo()
    lp = h.getLp()
    mip = any(int(v) != 0 for v in (lp.integrality_ or []))
    term = HIGHS_STATUS.get(status.name, Termination.UNKNOWN)
    if run_status == highspy.HighsStatus.kError:  # a model error found by run() is no "unknown" stop
        term = Termination.ERROR
    status_text = status.name + (f" ({'; '.join(reasons)})" if term is Termination.ERROR and reasons else "")
    has_solution = int(info.primal_solution_status) == 2 and term not in NO_SOLUTION
    objective = float(info.objective_function_value) if has_solution else None
    bound = None
    if mip and has_solution and math.isfinite(info.mip_dual_bound):
        bound = float(info.mip_dual_bound)
    values: dict[str, np.ndarray] = {}
    if has_solution:
        x = h.getSolution().col_value
        values = {name: np.asarray(val) for name, val in zip(lp.col_names_, x, strict=True)}
    return _finish(spec, term, has_solution, objective, bound, mip, values, t1 - t0, t2 - t1,
                   status_text, h)


@contextlib.contextmanager
def _without_bom(path: Path):
    """``path``, or a copy without its UTF-8 byte-order mark.

    The check accepts a byte-order mark, and so do HiGHS 1.15 and SCIP; HiGHS 1.16's LP reader
    refuses it ("expected a section keyword, found \ufeff").
    """
    with open(path, "rb") as fh:
        if fh.read(3) != b"\xef\xbb\xbf":
            yield path
            return
        with tempfile.TemporaryDirectory() as folder:
            copy = Path(folder) / path.name  # the same suffix: HiGHS picks the format from it
            with open(copy, "wb") as out:
                shutil.copyfileobj(fh, out)
            yield copy


_REASONS_KEPT = 5
"""At most this many of HiGHS's ERROR / WARNING log lines are kept as the reason of a failure."""


def _highs_reasons(h: Any) -> list[str]:
    """A list that collects HiGHS's ERROR and WARNING log lines (its reasons for refusing a model).

    HiGHS reports why it refuses a model only in its log (``readModel`` / ``passModel`` return
    ``kError``; ``run`` ends with ``kModelError``), e.g. "LP matrix packed vector contains 1
    |value| in [1e+16, 1e+16] greater than 1e+15"; the log callback hands each line over whether
    or not it is printed (``log_to_console``).
    """
    kept: list[str] = []

    def keep(event: Any) -> None:
        text = " ".join(str(event.message).split())
        if text.startswith(("ERROR", "WARNING")) and len(kept) < _REASONS_KEPT:
            kept.append(text)

    h.cbLogging.subscribe(keep)
    return kept


def _scip_file(path: Path, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    import pyscipopt

    model = pyscipopt.Model()
    if not tee:
        model.hideOutput()
    t0 = time.perf_counter()
    try:
        model.readProblem(str(path))
    except Exception as exc:  # PySCIPOpt: OSError ("read error!") or a bare Exception ("error in input data!")
        raise ValueError(f"SCIP could not read {path} as an {_format_of(path).upper()} file ({exc})") from None
    t1 = time.perf_counter()
    for k, v in native.items():
        model.setParam(k, v)
    try:
        model.optimize()
    except Exception as exc:  # PySCIPOpt raises a bare Exception ("SCIP: error in LP solver!")
        log.warning("SCIP failed on %s: %s", path, exc)
        return _finish(spec, Termination.ERROR, False, None, None, False, {}, t1 - t0,
                       time.perf_counter() - t1, f"error: {exc}", model)
    t2 = time.perf_counter()
    status = model.getStatus()
    mip = any(v.vtype() != "CONTINUOUS" for v in model.getVars())
    term = SCIP_STATUS.get(status, Termination.UNKNOWN)
    has_solution = model.getNSols() > 0 and term not in NO_SOLUTION
    objective = float(model.getObjVal()) if has_solution else None
    bound = float(model.getDualbound()) if has_solution else None
    if bound is not None and not math.isfinite(bound):
        bound = None
    values = {}
    if has_solution:
        sol = model.getBestSol()
        values = {v.name: np.asarray(model.getSolVal(sol, v)) for v in model.getVars()}
    return _finish(spec, term, has_solution, objective, bound, mip, values, t1 - t0, t2 - t1,
                   status, model)


def model_values(result: SolveResult, model: Any, path: Path) -> SolveResult:
    """``result`` of solving ``path`` with its values keyed as :func:`clusteropt.solvers.solve` keys
    them for ``model``, the model the file was written from (:func:`write_model`): one array per
    variable (the same shapes), with the model's own index as ``labels`` and ``index_names``.

    The file's column names are the writers' (Pyomo's LP and MPS labelers, the CVXPY export's
    ``x(i_j)``); the file columns go back by them, the column-keyed values stay in
    ``raw["columns"]``.  A variable the file lacks reads nan (Pyomo's writers leave out variables
    no constraint or objective uses, and fixed ones, which read their fixed value).

    Raises
    ------
    ValueError
        A column of the file that no variable of ``model`` is written as (the file was written
        from another model).
    """
    from dataclasses import replace

    from clusteropt.solvers.options import backend_of

    columns = dict(result.values)
    backend = backend_of(model)
    if backend == "pyomo":
        values, labels, index_names, used = _pyomo_columns(model, columns, _format_of(path))
    elif backend == "matrix":
        values, labels, index_names, used = _matrix_columns(model, columns)
    else:
        values, labels, index_names, used = _cvxpy_columns(model, columns)
    foreign = sorted(set(columns) - used)
    if foreign:
        shown_names = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise ValueError(f"{path} has columns the model does not write ({shown_names}): was it written from "
                         "another model?")
    if not result.has_solution:
        values, labels, index_names = {}, {}, {}
    return replace(result, values=values, labels=labels, index_names=index_names,
                   raw={**dict(result.raw), "columns": columns})


_Columns = tuple[dict[str, np.ndarray], Mapping[str, list], Mapping[str, tuple[str, ...]], set[str]]
"""A file solve's values as a model's variables: values, labels, index names, the file columns used."""


def _pyomo_columns(model: Any, columns: dict[str, Any], fmt: str) -> _Columns:
    import pyomo.environ as pyo
    from pyomo.core.base.label import LPFileLabeler, TextLabeler

    from clusteropt.solvers.pyomo_backend import _dense_shape, variable_index_names, variable_labels

    labeler = LPFileLabeler() if fmt == "lp" else TextLabeler()  # as Pyomo's LP and MPS writers name them
    values: dict[str, np.ndarray] = {}
    used: set[str] = set()
    for comp in model.component_objects(pyo.Var, active=True, descend_into=True):
        row = []
        for var in comp.values():
            name = labeler(var)
            if name in columns:
                used.add(name)
                row.append(float(columns[name]))
            elif var.fixed and var.value is not None:
                row.append(float(var.value))
            else:
                row.append(math.nan)
        arr = np.array(row, dtype=float)
        if not comp.is_indexed():
            values[comp.name] = arr.reshape(())
            continue
        shape = _dense_shape(comp)
        values[comp.name] = arr.reshape(shape) if shape else arr
    return values, variable_labels(model), variable_index_names(model), used


def _matrix_columns(lp: Any, columns: dict[str, Any]) -> _Columns:
    x = np.full(lp.n_cols, math.nan)
    names = lp.file_col_names()
    used = {name for name in names if name in columns}
    for k, name in enumerate(names):
        if name in columns:
            x[k] = float(columns[name])
    labels = lp.labels()
    return lp.shaped_values(x, labels), labels, dict(lp.index_names), used


def _cvxpy_columns(model: Any, columns: dict[str, Any]) -> _Columns:
    from clusteropt.solvers.cvxpy_backend import _label, cvxpy_labels, unwrap

    _, named = unwrap(model)
    values: dict[str, np.ndarray] = {}
    used: set[str] = set()
    for name, var in named.items():
        shape = tuple(var.shape)
        arr = np.full(shape, math.nan)
        for flat in range(math.prod(shape)):
            column = _label(name, flat, shape)
            if column in columns:
                used.add(column)
                arr[np.unravel_index(flat, shape, order="F")] = float(columns[column])
        values[name] = arr
    labels, index_names = cvxpy_labels(model)
    return values, labels, index_names, used


def _finish(spec, term, has_solution, objective, bound, mip, values, build_s, solve_s, status,
            native):
    term, bound, gap = settle(term, has_solution, objective, bound, mip=mip)
    values = {k: v for k, v in values.items() if k != CONSTANT_COLUMN}
    return SolveResult(
        termination=term,
        has_solution=has_solution,
        objective=objective,
        bound=bound,
        gap=gap,
        values=values,
        solver=spec.name,
        backend="file",
        build_seconds=float(build_s),
        solve_seconds=float(solve_s),
        raw={"status": str(status), "native": native},
    )


# ---------------------------------------------------------------------------------------------
# the commercial solvers' own readers

GUROBI_STATUS: dict[str, Termination] = {
    "OPTIMAL": Termination.OPTIMAL,
    "INFEASIBLE": Termination.INFEASIBLE,
    "INF_OR_UNBD": Termination.INFEASIBLE_OR_UNBOUNDED,
    "UNBOUNDED": Termination.UNBOUNDED,
    "CUTOFF": Termination.INFEASIBLE,  # no point better than the Cutoff parameter exists
    "ITERATION_LIMIT": Termination.ITERATION_LIMIT,
    "NODE_LIMIT": Termination.ITERATION_LIMIT,
    "TIME_LIMIT": Termination.TIME_LIMIT,
    "SOLUTION_LIMIT": Termination.ITERATION_LIMIT,
    "WORK_LIMIT": Termination.ITERATION_LIMIT,
    "USER_OBJ_LIMIT": Termination.FEASIBLE,
    "SUBOPTIMAL": Termination.FEASIBLE,
    "INTERRUPTED": Termination.ERROR,
    "NUMERIC": Termination.ERROR,
    "MEM_LIMIT": Termination.ERROR,
}
"""gurobipy ``GRB.Status`` name -> :class:`Termination` (a limit with an incumbent becomes FEASIBLE)."""

CPLEX_STATUS: dict[str, Termination] = {
    "optimal": Termination.OPTIMAL,
    "MIP_optimal": Termination.OPTIMAL,
    "optimal_tolerance": Termination.OPTIMAL,  # stopped at the requested relative gap
    "infeasible": Termination.INFEASIBLE,
    "MIP_infeasible": Termination.INFEASIBLE,
    "unbounded": Termination.UNBOUNDED,
    "MIP_unbounded": Termination.UNBOUNDED,
    "infeasible_or_unbounded": Termination.INFEASIBLE_OR_UNBOUNDED,
    "MIP_infeasible_or_unbounded": Termination.INFEASIBLE_OR_UNBOUNDED,
    "abort_time_limit": Termination.TIME_LIMIT,
    "abort_dettime_limit": Termination.TIME_LIMIT,
    "MIP_time_limit_feasible": Termination.TIME_LIMIT,
    "MIP_time_limit_infeasible": Termination.TIME_LIMIT,
    "MIP_dettime_limit_feasible": Termination.TIME_LIMIT,
    "MIP_dettime_limit_infeasible": Termination.TIME_LIMIT,
    "abort_iteration_limit": Termination.ITERATION_LIMIT,
    "node_limit_feasible": Termination.ITERATION_LIMIT,
    "node_limit_infeasible": Termination.ITERATION_LIMIT,
    "solution_limit": Termination.ITERATION_LIMIT,
    "abort_obj_limit": Termination.FEASIBLE,
    "abort_user": Termination.ERROR,
    "MIP_abort_feasible": Termination.ERROR,
    "MIP_abort_infeasible": Termination.ERROR,
    "mem_limit_feasible": Termination.ERROR,
    "mem_limit_infeasible": Termination.ERROR,
    "fail_feasible": Termination.ERROR,
    "fail_infeasible": Termination.ERROR,
}
"""CPLEX ``solution.status`` name -> :class:`Termination` (a limit with an incumbent becomes FEASIBLE)."""

XPRESS_STOP: dict[str, Termination] = {
    "TIMELIMIT": Termination.TIME_LIMIT,
    "ITERLIMIT": Termination.ITERATION_LIMIT,
    "NODELIMIT": Termination.ITERATION_LIMIT,
    "SOLLIMIT": Termination.ITERATION_LIMIT,
    "WORKLIMIT": Termination.ITERATION_LIMIT,
    "MIPGAP": Termination.OPTIMAL,  # stopped at the requested relative gap (miprelstop)
    "CTRLC": Termination.ERROR,
    "USER": Termination.ERROR,
    "MEMORYERROR": Termination.ERROR,
    "LICENSELOST": Termination.ERROR,
    "NUMERICALERROR": Termination.ERROR,
    "GENERICERROR": Termination.ERROR,
}
"""Xpress ``stopstatus`` name -> :class:`Termination` when the solve stopped before its end; a
finished solve (``SOLVECOMPLETE`` / ``NONE``) is read from ``solstatus``: :data:`XPRESS_SOLSTATUS`."""

XPRESS_SOLSTATUS: dict[str, Termination] = {
    "OPTIMAL": Termination.OPTIMAL,
    "INFEASIBLE": Termination.INFEASIBLE,
    "UNBOUNDED": Termination.UNBOUNDED,
    "FEASIBLE": Termination.FEASIBLE,
    "NOTFOUND": Termination.UNKNOWN,
}
"""Xpress ``solstatus`` name -> :class:`Termination` of a solve that ran to its end."""

COPT_STATUS: dict[str, Termination] = {
    "OPTIMAL": Termination.OPTIMAL,
    "INFEASIBLE": Termination.INFEASIBLE,
    # a primal ray alone: COPT 8 says "unbounded" of an LP whose rows add up to 0 >= 2
    "UNBOUNDED": Termination.INFEASIBLE_OR_UNBOUNDED,
    "INF_OR_UNB": Termination.INFEASIBLE_OR_UNBOUNDED,
    "NODELIMIT": Termination.ITERATION_LIMIT,
    "ITERLIMIT": Termination.ITERATION_LIMIT,
    "TIMEOUT": Termination.TIME_LIMIT,
    "IMPRECISE": Termination.FEASIBLE,
    "NUMERICAL": Termination.ERROR,
    "UNFINISHED": Termination.ERROR,
    "INTERRUPTED": Termination.ERROR,
}
"""COPT ``model.status`` name -> :class:`Termination` (a limit with an incumbent becomes FEASIBLE)."""

_COPT_STATUS_NAMES = ("OPTIMAL", "INFEASIBLE", "UNBOUNDED", "INF_OR_UNB", "NUMERICAL", "NODELIMIT",
                      "IMPRECISE", "TIMEOUT", "UNFINISHED", "INTERRUPTED", "ITERLIMIT", "UNSTARTED")


def _solver_failed(spec: SolverSpec, path: Path, exc: Exception, t0: float, t1: float, native: Any) -> SolveResult:
    """The result of a solver that raised while solving ``path`` (a size-limited licence's refusal
    above all: its message is the status, the termination ``ERROR``).
    """
    text = " ".join(str(exc).split())
    log.warning("%s failed on %s: %s", spec.name, path, text)
    return _finish(spec, Termination.ERROR, False, None, None, False, {}, t1 - t0, time.perf_counter() - t1,
                   f"error: {text}", native)


def _finite(x: Any, infinity: float = INFINITE_BOUND) -> float | None:
    """``x`` as a float when it is finite and below the solver's infinity, else None."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and abs(v) < infinity else None


def _gurobi_file(path: Path, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    import gurobipy as gp

    env = gp.Env(empty=True)
    env.setParam("OutputFlag", int(bool(tee)))
    env.start()
    t0 = time.perf_counter()
    try:
        model = gp.read(str(path), env)
    except gp.GurobiError as exc:
        raise ValueError(f"Gurobi could not read {path} as an {_format_of(path).upper()} file ({exc})") from None
    t1 = time.perf_counter()
    try:
        for k, v in native.items():
            model.setParam(k, v)
        model.optimize()
    except gp.GurobiError as exc:  # "Model too large for size-limited license"
        return _solver_failed(spec, path, exc, t0, t1, model)
    t2 = time.perf_counter()
    names = {getattr(gp.GRB.Status, n): n for n in dir(gp.GRB.Status) if n.isupper()}
    status = names.get(model.Status, str(model.Status))
    term = GUROBI_STATUS.get(status, Termination.UNKNOWN)
    mip = bool(model.IsMIP)
    has_solution = model.SolCount > 0 and term not in NO_SOLUTION
    objective = float(model.ObjVal) if has_solution else None
    bound = _finite(model.ObjBound) if mip and has_solution else None
    values = {v.VarName: np.asarray(float(v.X) + 0.0) for v in model.getVars()} if has_solution else {}
    return _finish(spec, term, has_solution, objective, bound, mip, values, t1 - t0, t2 - t1, status, model)


def _cplex_file(path: Path, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    from operator import attrgetter

    import cplex
    from cplex.exceptions import CplexError

    model = cplex.Cplex()
    if not tee:
        for stream in ("log", "results", "warning"):
            getattr(model, f"set_{stream}_stream")(None)
    t0 = time.perf_counter()
    try:
        model.read(str(path))
    except CplexError as exc:
        raise ValueError(f"CPLEX could not read {path} as an {_format_of(path).upper()} file ({exc})") from None
    t1 = time.perf_counter()
    try:
        for k, v in native.items():
            attrgetter(k)(model.parameters).set(v)
        model.solve()
    except CplexError as exc:  # "CPLEX Error 1016: Community Edition. Problem size limits exceeded."
        return _solver_failed(spec, path, exc, t0, t1, model)
    t2 = time.perf_counter()
    sol = model.solution
    status = sol.status[sol.get_status()]
    term = CPLEX_STATUS.get(status, Termination.UNKNOWN)
    mip = model.variables.get_num_integer() + model.variables.get_num_binary() > 0
    has_solution = sol.get_solution_type() != sol.type.none and term not in NO_SOLUTION
    if has_solution and not mip and not sol.is_primal_feasible():
        has_solution = False  # an LP stopped at a basis that is not primal feasible
    objective = float(sol.get_objective_value()) if has_solution else None
    bound = _finite(sol.MIP.get_best_objective()) if mip and has_solution else None
    values = ({n: np.asarray(float(x) + 0.0) for n, x in zip(model.variables.get_names(), sol.get_values(),
                                                             strict=True)} if has_solution else {})
    return _finish(spec, term, has_solution, objective, bound, mip, values, t1 - t0, t2 - t1, status, model)


def _xpress_file(path: Path, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    import xpress as xp

    model = xp.problem()
    model.setControl("outputlog", int(bool(tee)))
    t0 = time.perf_counter()
    try:
        model.readProb(str(path))
    except (xp.SolverError, xp.ModelError) as exc:
        raise ValueError(f"Xpress could not read {path} as an {_format_of(path).upper()} file ({exc})") from None
    t1 = time.perf_counter()
    try:
        for k, v in native.items():
            model.setControl(k, v)
        model.optimize()
    except (xp.SolverError, xp.ModelError) as exc:  # a licence's size limit
        return _solver_failed(spec, path, exc, t0, t1, model)
    t2 = time.perf_counter()
    attrs = model.attributes
    solstatus = xp.SolStatus(attrs.solstatus).name
    stopstatus = xp.StopType(attrs.stopstatus).name
    if stopstatus in ("NONE", "SOLVECOMPLETE"):
        term = XPRESS_SOLSTATUS.get(solstatus, Termination.UNKNOWN)
    else:
        term = XPRESS_STOP.get(stopstatus, Termination.UNKNOWN)
    mip = int(attrs.originalmipents) > 0
    has_solution = solstatus in ("OPTIMAL", "FEASIBLE") and term not in NO_SOLUTION
    objective = float(attrs.objval) if has_solution else None
    bound = _finite(attrs.bestbound, 1e40) if mip and has_solution else None  # Xpress's infinity: 1e40
    values: dict[str, np.ndarray] = {}
    if has_solution:
        n = int(attrs.originalcols)
        names = model.getNameList(xp.Namespaces.COLUMN, 0, n - 1)
        values = {name: np.asarray(float(x) + 0.0) for name, x in zip(names, model.getSolution(), strict=True)}
    return _finish(spec, term, has_solution, objective, bound, mip, values, t1 - t0, t2 - t1,
                   f"{solstatus} (stop: {stopstatus})", model)


def _copt_file(path: Path, spec: SolverSpec, native: dict[str, Any], tee: bool) -> SolveResult:
    import coptpy

    config = coptpy.EnvrConfig()
    config.set("nobanner", "1")
    env = coptpy.Envr(config)
    model = env.createModel(path.stem)
    model.setParam("Logging", int(bool(tee)))
    t0 = time.perf_counter()
    try:
        model.read(str(path))
    except coptpy.CoptError as exc:
        raise ValueError(f"COPT could not read {path} as an {_format_of(path).upper()} file ({exc})") from None
    _copt_infinite_bounds(model, coptpy)
    t1 = time.perf_counter()
    try:
        for k, v in native.items():
            model.setParam(k, v)
        model.solve()
    except coptpy.CoptError as exc:  # a size limit without a licence
        return _solver_failed(spec, path, exc, t0, t1, model)
    t2 = time.perf_counter()
    names = {getattr(coptpy.COPT, n): n for n in _COPT_STATUS_NAMES}
    status = names.get(model.status, str(model.status))
    term = COPT_STATUS.get(status, Termination.UNKNOWN)
    mip = bool(model.ismip)
    has_solution = bool(model.hasmipsol if mip else model.haslpsol) and term not in NO_SOLUTION
    objective = float(model.bestobj if mip else model.lpobjval) if has_solution else None
    bound = _finite(model.bestbnd, 1e30) if mip and has_solution else None  # COPT's infinity: 1e30
    values = {v.name: np.asarray(float(v.x) + 0.0) for v in model.getVars()} if has_solution else {}
    return _finish(spec, term, has_solution, objective, bound, mip, values, t1 - t0, t2 - t1, status, model)


def _copt_infinite_bounds(model: Any, coptpy: Any) -> None:
    """Bounds of magnitude :data:`INFINITE_BOUND` (1e20) or more as COPT's infinity (1e30).

    The package reads such a bound as none (the check, HiGHS, SCIP, Gurobi, CPLEX and Xpress do
    too); COPT keeps it: Pyomo's MPS writer bounds a free integer column by +-1e21, which made an
    unbounded MILP "optimal" at 1e21 in COPT 8.
    """
    inf = float(coptpy.COPT.INFINITY)
    for var in model.getVars():
        lb, ub = float(var.lb), float(var.ub)
        if -inf < lb <= -INFINITE_BOUND:
            var.lb = -inf
        if INFINITE_BOUND <= ub < inf:
            var.ub = inf


FILE_SOLVERS = {"highspy": _highs_file, "pyscipopt": _scip_file, "gurobipy": _gurobi_file, "cplex": _cplex_file,
                "xpress": _xpress_file, "coptpy": _copt_file}
"""Native name of a file route -> function that reads and solves the file."""
