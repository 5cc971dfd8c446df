"""Reader for the public coflow-benchmark trace format (``FB2010-1Hr-150-0.txt``, paper 001).

The coflow-benchmark repository (github.com/coflow/coflow-benchmark) ships a one-hour Facebook
MapReduce trace scaled down to a 150-port big switch: 526 coflows, one per line::

    <ports> <coflows>
    <id> <arrival ms> <M> <mapper port 1> ... <mapper port M> <R> <port:MB> ... (R entries)

A reducer entry ``port:MB`` is the reducer's total shuffle in megabytes; the usual reading (the one
coflow simulators use) splits it equally over the M mappers, so the coflow moves
``d[mapper, reducer] = MB / M`` from input port ``mapper`` to output port ``reducer``.
:func:`read_coflow_benchmark` turns such a file into a :class:`CoflowInstance` of integer units
and slot releases, and rejects a malformed line with a :class:`TraceError` whose message starts
with ``<file>:<line>:``.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from clusteropt.instances.base import InstanceError
from clusteropt.instances.coflow import CoflowInstance

__all__ = ["TraceError", "read_coflow_benchmark"]

log = logging.getLogger(__name__)

_INT = re.compile(r"[+-]?[0-9]+")
_PORT = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SNAP = 1e-9  # a quotient within this relative distance of an integer is that integer


class TraceError(InstanceError):
    """A bad line in a trace file; the message starts with ``<file>:<line>:``.

    Attributes ``path`` and ``lineno`` (1-based) locate the line; ``where``, ``value`` and
    ``expected`` are those of :class:`~clusteropt.instances.base.InstanceError`.

    >>> str(TraceError("fb.txt", 3, "arrival", "-5", ">= 0 (milliseconds)"))
    "fb.txt:3: arrival = '-5'; expected >= 0 (milliseconds)"
    """

    def __init__(self, path: str | Path, lineno: int, what: str, value: Any, expected: str):
        self.path, self.lineno = str(path), int(lineno)
        super().__init__(f"{path}:{lineno}: {what}", value, expected)


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} = {value!r}; expected a positive finite number")
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} = {value!r}; expected a positive finite number")
    return float(value)


def _snap(q: np.ndarray) -> np.ndarray:
    """Round quotients that are integers up to floating-point noise (``3.0000000000000004``)."""
    r = np.round(q)
    return np.where(np.abs(q - r) <= _SNAP * np.maximum(1.0, np.abs(r)), r, q)


class _Line:
    """One coflow line being parsed; raises :class:`TraceError` located at the line."""

    def __init__(self, path: Path, lineno: int, tokens: list[str], n_ports: int):
        self.path, self.lineno, self.tokens, self.n_ports = path, lineno, tokens, n_ports

    def error(self, what: str, value: Any, expected: str) -> TraceError:
        return TraceError(self.path, self.lineno, what, value, expected)

    def integer(self, k: int, what: str, *, minimum: int | None = None) -> int:
        tok = self.tokens[k]
        if not _INT.fullmatch(tok):
            raise self.error(what, tok, "an integer")
        value = int(tok)
        if minimum is not None and value < minimum:
            raise self.error(what, tok, f"an integer >= {minimum}")
        return value

    def ports(self, tokens: Sequence[str], what: str, first: int) -> np.ndarray:
        for k, tok in enumerate(tokens):
            if not _PORT.fullmatch(tok) or int(tok) >= self.n_ports:
                raise self.error(f"{what} (token {first + k + 1})", tok,
                                 f"a port number in [0, {self.n_ports}) (the header's port count)")
        return np.array(tokens, dtype=np.int64) if tokens else np.zeros(0, dtype=np.int64)

    def reducers(self, tokens: Sequence[str], first: int) -> tuple[np.ndarray, np.ndarray]:
        ports: list[str] = []
        sizes = np.empty(len(tokens))
        for k, tok in enumerate(tokens):
            port, sep, mb = tok.partition(":")
            where = f"reducer entry {k + 1} (token {first + k + 1})"
            if not sep or ":" in mb:
                raise self.error(where, tok, "'port:MB', e.g. '65:1.0'")
            if not _PORT.fullmatch(port) or int(port) >= self.n_ports:
                raise self.error(where, tok, f"a port number in [0, {self.n_ports}) before ':'")
            if not _NUMBER.fullmatch(mb):
                raise self.error(where, tok, "a finite number of megabytes after ':'")
            size = float(mb)
            if not (math.isfinite(size) and size >= 0):
                raise self.error(where, tok, "a finite size >= 0 MB after ':'")
            ports.append(port)
            sizes[k] = size
        return np.array(ports, dtype=np.int64) if ports else np.zeros(0, dtype=np.int64), sizes


def _parse_header(path: Path, lines: list[str]) -> tuple[int, int, int]:
    """Return (header line index, ports, coflows)."""
    for k, text in enumerate(lines):
        tokens = text.split()
        if not tokens:
            continue
        line = _Line(path, k + 1, tokens, 0)
        if len(tokens) != 2:
            raise line.error("header", text.strip(), "'<ports> <coflows>' (two integers)")
        return k, line.integer(0, "header port count", minimum=1), line.integer(1, "header coflow count",
                                                                                 minimum=0)
    raise TraceError(path, 1, "header", "" if not lines else lines[0], "'<ports> <coflows>'; the file is empty")


def read_coflow_benchmark(
    path: str | Path,
    *,
    unit_mb: float = 1.0,
    slot_ms: float = 1000.0,
    weights: Sequence[float] | np.ndarray | None = None,
) -> CoflowInstance:
    """Read a coflow-benchmark trace (``FB2010-1Hr-150-0.txt`` format) into a coflow instance.

    Each coflow line ``<id> <arrival ms> <M> <mapper ports> <R> <port:MB ...>`` becomes one
    coflow whose flows go from every mapper port (an input port) to every reducer port (an output
    port) with demand ``MB / M`` megabytes, the reducer's shuffle split equally over the mappers.

    * **Units**: ``units = ceil(MB / M / unit_mb)``: demands are rounded *up* so no positive demand
      becomes 0; a reducer with ``MB == 0`` gives no flow.  A quotient within a relative ``1e-9``
      of an integer counts as that integer (``0.3 / 0.1`` is 3 units, not 4).
    * **Releases**: ``release = floor(arrival_ms / slot_ms)`` (same integer snapping); the coflow
      may use slots ``release + 1`` onward (see :class:`CoflowInstance`).
    * **Ports**: ``n_inputs = n_outputs =`` the header's port count, even where the trace leaves
      ports unused.
    * **Rack-local flows**: a port that is both a mapper and a reducer of a coflow keeps its flow
      from input p to output p.  In the big-switch model that flow crosses input port p and output
      port p like any other flow (it is what coflow simulators such as CoflowSim do with the
      trace); it is *not* dropped.
    * **Duplicates**: a mapper port listed k times within a line counts k times (its flows carry
      ``k * MB / M``; M stays the listed count), and reducer entries for the same port add their
      MB; the summed demand is rounded up once, and a warning is logged.  The instance then holds
      each (coflow, input, output) once, as :class:`CoflowInstance` requires.
    * **Order and ids**: coflow j is the j-th coflow line of the file and keeps the trace's id.

    Parameters
    ----------
    path : str or Path
        The trace file.
    unit_mb : float, default 1.0
        Megabytes per unit (one unit per port per slot); positive and finite.
    slot_ms : float, default 1000.0
        Milliseconds per slot; positive and finite.
    weights : sequence of float, optional
        One weight per coflow line in file order; default all 1.0.

    Returns
    -------
    CoflowInstance

    Raises
    ------
    TraceError
        A malformed file, with a message starting ``<file>:<line>:``: an empty file or bad header,
        a token count disagreeing with M or R, a non-numeric token, M or R below 1, a negative,
        non-numeric or non-finite arrival or size, bad ``port:MB`` syntax, a port outside
        ``[0, ports)``, a duplicate coflow id (naming both lines), or a number of coflow lines
        disagreeing with the header (reported at the header line, with the count found).
    ValueError
        ``unit_mb``, ``slot_ms`` or ``weights`` is bad (the message names the parameter).
    FileNotFoundError
        No such file.

    References
    ----------
    Coflow-benchmark format: github.com/coflow/coflow-benchmark (README, "Trace Format").
    Paper 001 (Ahmadi, Khuller, Purohit, Yang, "On Scheduling Coflows"): the big-switch model.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tiny.txt"
    >>> _ = p.write_text("4 2\\n1 0 1 2 1 3:1.0\\n2 2500 2 0 1 1 1:5.0\\n")
    >>> inst = read_coflow_benchmark(p)
    >>> inst.ids.tolist(), inst.release.tolist()
    ([1, 2], [0, 2])
    >>> list(zip(inst.coflow.tolist(), inst.input.tolist(), inst.output.tolist(), inst.units.tolist()))
    [(0, 2, 3, 1), (1, 0, 1, 3), (1, 1, 1, 3)]
    >>> _ = p.write_text("4 1\\n1 0 1 7 1 3:1.0\\n")
    >>> read_coflow_benchmark(p)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusteropt.instances.coflow_trace.TraceError: ...tiny.txt:2: mapper port (token 4) = '7'; expected a port ...
    """
    unit_mb = _positive("unit_mb", unit_mb)
    slot_ms = _positive("slot_ms", slot_ms)
    path = Path(path)
    lines = path.read_text().splitlines()
    head, n_ports, n_declared = _parse_header(path, lines)

    ids: list[int] = []
    arrivals: list[float] = []
    first_line: dict[int, int] = {}
    coflows: list[np.ndarray] = []
    inputs: list[np.ndarray] = []
    outputs: list[np.ndarray] = []
    demands: list[np.ndarray] = []
    n_local = 0
    for k in range(head + 1, len(lines)):
        tokens = lines[k].split()
        if not tokens:
            continue
        line = _Line(path, k + 1, tokens, n_ports)
        if len(tokens) < 4:
            raise line.error("token count", len(tokens),
                             "at least 4: '<id> <arrival ms> <M> <mapper ports...> <R> <port:MB ...>'")
        cid = line.integer(0, "coflow id")
        if cid in first_line:
            raise line.error("coflow id", cid, f"distinct ids ({cid} is also the id on line {first_line[cid]})")
        if not _NUMBER.fullmatch(tokens[1]):
            raise line.error("arrival", tokens[1], "a finite number of milliseconds")
        arrival = float(tokens[1])
        if not (math.isfinite(arrival) and arrival >= 0):
            raise line.error("arrival", tokens[1], "a finite number of milliseconds >= 0")
        m = line.integer(2, "mapper count M", minimum=1)
        if len(tokens) < 4 + m:
            raise line.error("token count", len(tokens),
                             f"at least {4 + m} (M = {m} mapper ports, then R); is M right?")
        r = line.integer(3 + m, f"reducer count R (token {4 + m}, after M = {m} mapper ports)", minimum=1)
        if len(tokens) != 4 + m + r:
            raise line.error("token count", len(tokens),
                             f"{4 + m + r} = 4 + M + R with M = {m} mappers and R = {r} reducers")
        mappers = line.ports(tokens[3 : 3 + m], "mapper port", 3)
        rports, sizes = line.reducers(tokens[4 + m :], 4 + m)

        in_ports, in_count = np.unique(mappers, return_counts=True)
        out_ports, inverse = np.unique(rports, return_inverse=True)
        out_mb = np.bincount(inverse, weights=sizes, minlength=out_ports.size)
        if in_ports.size < m or out_ports.size < r:
            log.warning("%s:%d: coflow %d lists a port twice; its demands are summed", path, k + 1, cid)
        keep = out_mb > 0
        out_ports, out_mb = out_ports[keep], out_mb[keep]
        nin, nout = in_ports.size, out_ports.size
        inputs.append(np.repeat(in_ports, nout))
        outputs.append(np.tile(out_ports, nin))
        demands.append((in_count[:, None] * out_mb[None, :]).ravel() / (m * unit_mb))
        coflows.append(np.full(nin * nout, len(ids), dtype=np.int64))
        n_local += int(np.intersect1d(in_ports, out_ports, assume_unique=True).size)
        first_line[cid] = k + 1
        ids.append(cid)
        arrivals.append(arrival)

    n = len(ids)
    if n != n_declared:
        raise TraceError(path, head + 1, "header coflow count", n_declared,
                         f"the number of coflow lines in the file, {n} found")
    if weights is None:
        weight = np.ones(n)
    else:
        weight = np.asarray(weights, dtype=float)
        if weight.shape != (n,):
            raise ValueError(f"weights has shape {weight.shape}; expected ({n},): one weight per coflow line")

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)

    units = np.maximum(np.ceil(_snap(cat(demands, float))), 1).astype(np.int64)
    release = np.floor(_snap(np.asarray(arrivals, dtype=float) / slot_ms)).astype(np.int64)
    inst = CoflowInstance(
        n_inputs=n_ports, n_outputs=n_ports, coflow=cat(coflows, np.int64), input=cat(inputs, np.int64),
        output=cat(outputs, np.int64), units=units, weight=weight, release=release,
        ids=np.asarray(ids, dtype=np.int64),
    )
    busy = np.bincount(inst.input, minlength=n_ports) + np.bincount(inst.output, minlength=n_ports)
    used = np.count_nonzero(busy)
    log.info("read %s: %d coflows, %d flows (%d rack-local), %d units, %d of %d ports used, releases 0..%d",
             path, n, inst.n_flows, n_local, int(units.sum()), used, n_ports, int(release.max(initial=0)))
    return inst
