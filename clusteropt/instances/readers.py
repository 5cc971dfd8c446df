"""Reading trace files: located errors, UTF-8 text, numbers and CSV rows checked field by field.

Every trace reader of the package (the coflow benchmark, :mod:`clusteropt.instances.coflow.trace`;
the Philly and Alibaba GPU traces, :mod:`clusteropt.instances.gadget.trace`; mlBroker's price and
transfer-cost CSVs, :mod:`clusteropt.instances.broker`) returns a valid instance or raises one
:class:`TraceError` that names the file, the line, the field, its value and what was expected.
The pieces they share live here.
"""

from __future__ import annotations

import codecs
import csv
import io
import math
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from clusteropt.instances.base import InstanceError, read_regular_file

__all__ = ["MAX_INT", "NUMBER", "CsvRow", "TraceError", "csv_records", "csv_rows", "positive", "read_text", "snap"]

#: A decimal number as the trace readers accept it (no sign-only, no inf / nan, no hex).
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SNAP = 1e-9  # a quotient within this relative distance of an integer is that integer

#: Largest magnitude of an integer read or computed by the trace readers: coflow ids, release slots, the
#: total units of a file.  ``2**53`` is the largest range in which every integer is exact in a float64
#: (instances are validated through float arrays) and sums of such integers stay far inside int64.
MAX_INT = 2**53
_SHOWN = 60  # characters of a long offending value kept in a message
_MISSING = ("", "nan")


class TraceError(InstanceError):
    """A bad line in a trace file; the message starts with ``<file>:<line>:``.

    Attributes ``path`` and ``lineno`` (1-based) locate the line; ``where``, ``value`` and
    ``expected`` are those of :class:`~clusteropt.instances.base.InstanceError`.

    A text or bytes value longer than 60 characters is shortened, so the message stays readable
    however long the offending field.

    >>> str(TraceError("fb.txt", 3, "arrival", "-5", ">= 0 (milliseconds)"))
    "fb.txt:3: arrival = '-5'; expected >= 0 (milliseconds)"
    >>> str(TraceError("fb.txt", 3, "arrival", "9" * 200_000, "a number"))
    "fb.txt:3: arrival = '9999999999999999999999999999999999999999... (200000 characters)'; expected a number"
    """

    def __init__(self, path: str | Path, lineno: int, what: str, value: Any, expected: str):
        self.path, self.lineno = str(path), int(lineno)
        if isinstance(value, str | bytes) and len(value) > _SHOWN:
            value = f"{value[:40]!s}... ({len(value)} characters)" if isinstance(value, str) else (
                value[:40] + f"... ({len(value)} bytes)".encode())
        super().__init__(f"{path}:{lineno}: {what}", value, expected)


def read_text(path: Path) -> str:
    """The whole file decoded as UTF-8 (a leading byte-order mark dropped), or one :class:`TraceError`.

    The error names the byte offset and the line (lines end at ``\\n``, ``\\r\\n`` or ``\\r``) of the
    first byte that is not UTF-8.  A FIFO, a device or an oversized file is refused unread
    (:func:`~clusteropt.instances.base.read_regular_file`).
    """
    raw = read_regular_file(path, where="trace file")
    skip = len(codecs.BOM_UTF8) if raw.startswith(codecs.BOM_UTF8) else 0
    try:
        return raw[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        pos = skip + exc.start
        head = raw[:pos]
        lineno = 1 + head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n")
        raise TraceError(path, lineno, f"byte {pos}", raw[pos : pos + 1],
                         f"UTF-8 text ({exc.reason}); re-encode the file as UTF-8") from None


def positive(name: str, value: float) -> float:
    """A positive finite number (at least the smallest normal float, so its inverse is finite)."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} = {value!r}; expected a positive finite number")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} = {value!r}; expected a positive finite number")
    if value < sys.float_info.min:
        raise ValueError(f"{name} = {value!r}; expected a positive finite number >= {sys.float_info.min!r} "
                         "(a normal float: dividing by it must not overflow)")
    return float(value)


def snap(q: np.ndarray) -> np.ndarray:
    """Round quotients that are integers up to floating-point noise (``3.0000000000000004``)."""
    r = np.round(q)
    return np.where(np.abs(q - r) <= _SNAP * np.maximum(1.0, np.abs(r)), r, q)


class CsvRow:
    """One CSV row being parsed; raises :class:`TraceError` located at its line."""

    def __init__(self, path: Path, lineno: int, row: dict[str, str]):
        self.path, self.lineno, self.row = path, lineno, row

    def error(self, what: str, value, expected: str) -> TraceError:
        """A :class:`TraceError` at this row's line."""
        return TraceError(self.path, self.lineno, what, value, expected)

    def number(self, col: str, *, optional: bool = False, most: float = math.inf) -> float | None:
        """A finite number in ``0 .. most`` from column ``col``; ``None`` for empty/NaN if ``optional``.

        ``most`` is :data:`~clusteropt.instances.base.MAX_MAGNITUDE` for a column that becomes a
        field as it is (a price, a threshold): the instance would refuse it, without the line.
        """
        text = self.row[col].strip()
        if optional and text.lower() in _MISSING:
            return None
        if not NUMBER.fullmatch(text):
            extra = "" if optional else f" ({col} is required; empty or NaN is not allowed)"
            raise self.error(col, text, f"a finite number{extra}")
        value = float(text)
        if not (math.isfinite(value) and value >= 0):
            raise self.error(col, text, "a finite number >= 0")
        if value > most:
            raise self.error(col, text, f"a finite number in 0 .. {most:g} (MAX_MAGNITUDE: solvers mishandle "
                             "coefficients near 1e15)")
        return value

    def count(self, col: str, *, minimum: int, maximum: int = MAX_INT, why: str = "MAX_INT = 2**53") -> int:
        """A whole number in ``[minimum, maximum]`` (``"2"`` or ``"2.0"``) from column ``col``."""
        value = self.number(col)
        assert value is not None  # not optional: a missing number raised
        if value != math.floor(value):
            raise self.error(col, self.row[col].strip(), f"a whole number >= {minimum}")
        if value < minimum:
            raise self.error(col, self.row[col].strip(), f"a whole number >= {minimum}")
        if value > maximum:
            raise self.error(col, self.row[col].strip(), f"a whole number in [{minimum}, {maximum}] ({why})")
        return int(value)


def csv_records(path: Path):
    """Yield ``(line number, cells)`` of every CSV record of ``path``, including empty ones.

    The file is decoded as UTF-8 (:func:`~clusteropt.instances.coflow.trace._read_text`); a CSV syntax
    error (a field longer than ``csv.field_size_limit()``, a stray quote in strict dialects, ...) is a
    :class:`TraceError` at the line where it was found.
    """
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise TraceError(path, max(reader.line_num, 1), "CSV record", str(exc),
                             f"well-formed CSV, fields of at most {csv.field_size_limit()} characters") from None
        yield reader.line_num, cells


def _header(path: Path, records, expected: str) -> list[str]:
    """The stripped column names of the first record (line 1); an empty file is a :class:`TraceError`."""
    first = next(records, None)
    if not first or not first[1]:
        raise TraceError(path, 1, "header", "", f"{expected}; the file is empty")
    return [n.strip() for n in first[1]]


def _repeated(names: list[str]) -> list[str]:
    """The (first ten) names listed more than once, sorted, then ``"..."`` if there are more.

    Linear time and a short message however many columns a hostile header has.
    """
    dup = sorted(n for n, count in Counter(names).items() if count > 1)
    return dup if len(dup) <= 10 else [*dup[:10], "..."]


def _dict_rows(path: Path, records, names: list[str], expected_count: str):
    """``CsvRow`` per non-empty record, after checking its column count against the header."""
    for lineno, cells in records:
        if not cells:
            continue  # a blank line
        if len(cells) != len(names):
            raise TraceError(path, lineno, "column count", len(cells), expected_count)
        yield CsvRow(path, lineno, dict(zip(names, cells, strict=True)))


def csv_rows(path: Path, required: tuple[str, ...], what: str = "at least one job row"):
    """Yield ``CsvRow`` for every non-blank data row after checking the header (distinct names, the
    ``required`` columns) and column counts; a file without rows is a :class:`TraceError` naming
    ``what`` it should hold.  Shared by the job CSVs here and the broker's price CSV.
    """
    records = csv_records(path)
    names = _header(path, records, f"a CSV header with columns {', '.join(required)}")
    dup = _repeated(names)
    if dup:
        raise TraceError(path, 1, "header", ",".join(names), f"distinct column names ({', '.join(dup)} "
                         "repeated)")
    missing = [c for c in required if c not in names]
    if missing:
        raise TraceError(path, 1, "header", ",".join(names),
                         f"the columns {', '.join(required)}; missing: {', '.join(missing)}")
    n_rows = 0
    for row in _dict_rows(path, records, names, f"{len(names)} (the header's column count)"):
        n_rows += 1
        yield row
    if n_rows == 0:
        raise TraceError(path, 1, "header", ",".join(names), f"{what} after it; the file has none")
