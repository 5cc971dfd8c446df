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

**Hostile input.**  Every reader of this package (this one, the GPU job CSVs of
:mod:`~clusteropt.instances.gadget.trace` and the price files of :mod:`~clusteropt.instances.broker`)
returns a valid instance or raises one :class:`TraceError` naming the file and line, whatever the
file holds: files are decoded as UTF-8 (a leading byte-order mark is accepted, invalid bytes are
reported with their offset and line), CSV syntax errors (such as a field longer than
``csv.field_size_limit()``) are reported with their line, and every number read is range-checked
*before* anything is sized by it.  The limits of this reader are :data:`MAX_PORTS`,
:data:`MAX_FLOWS` and :data:`MAX_INT`.  A path that is no regular file (a FIFO, a device such as
``/dev/zero``, a folder) or a file larger than :data:`~clusteropt.instances.base.MAX_FILE_BYTES` is
refused before anything is read from it, with an :class:`~clusteropt.instances.base.InstanceError`
naming the file (:func:`~clusteropt.instances.base.read_regular_file`).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from clusteropt.instances.coflow.instance import CoflowInstance
from clusteropt.instances.readers import MAX_INT as MAX_INT  # also the old path's (instances.coflow_trace)
from clusteropt.instances.readers import NUMBER, positive, read_text, snap
from clusteropt.instances.readers import TraceError as TraceError

__all__ = ["MAX_FLOWS", "MAX_PORTS", "read_coflow_benchmark"]

log = logging.getLogger(__name__)

_MAX_DIGITS = len(str(MAX_INT))  # a token with more significant digits is out of range unparsed

_INT = re.compile(r"[+-]?[0-9]+")
_PORT = re.compile(r"[0-9]+")

#: Most ports a coflow-benchmark header may declare (per-port arrays are sized by it).
MAX_PORTS = 10**6
#: Most flows (mapper x reducer pairs with a positive size) in one coflow-benchmark file: reading 10**7 flows
#: peaks at about 1.6 GB.  The public 150-port trace cannot come close (526 coflows of at most 150 x 150).
MAX_FLOWS = 10**7



def _split_lines(text: str) -> list[str]:
    """Lines ending at ``\\n``, ``\\r\\n`` or ``\\r`` (as editors count them), without their ends."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _whole(token: str) -> int | None:
    """``int(token)`` for an integer token of at most :data:`MAX_INT`'s digit count, else None."""
    digits = token.lstrip("+-").lstrip("0")
    return int(token) if len(digits) <= _MAX_DIGITS else None



class _Line:
    """One coflow line being parsed; raises :class:`TraceError` located at the line."""

    def __init__(self, path: Path, lineno: int, tokens: list[str], n_ports: int):
        self.path, self.lineno, self.tokens, self.n_ports = path, lineno, tokens, n_ports

    def error(self, what: str, value: Any, expected: str) -> TraceError:
        return TraceError(self.path, self.lineno, what, value, expected)

    def integer(self, k: int, what: str, *, minimum: int | None = None, maximum: int = MAX_INT,
                why: str = "MAX_INT = 2**53") -> int:
        """Token ``k`` as an integer in ``[minimum, maximum]`` (``minimum`` None: ``-MAX_INT``)."""
        tok = self.tokens[k]
        if not _INT.fullmatch(tok):
            raise self.error(what, tok, "an integer")
        value = _whole(tok)
        below = tok.startswith("-") if value is None else minimum is not None and value < minimum
        if minimum is not None and below:
            raise self.error(what, tok, f"an integer >= {minimum}")
        low = -MAX_INT if minimum is None else minimum
        if value is None or not low <= value <= maximum:
            raise self.error(what, tok, f"an integer in [{low}, {maximum}] ({why})")
        return value

    def port(self, tok: str) -> int | None:
        """``tok`` as a port number in ``[0, n_ports)``, else None."""
        value = _whole(tok) if _PORT.fullmatch(tok) else None
        return value if value is not None and value < self.n_ports else None

    def ports(self, tokens: Sequence[str], what: str, first: int) -> np.ndarray:
        out = np.zeros(len(tokens), dtype=np.int64)
        for k, tok in enumerate(tokens):
            value = self.port(tok)
            if value is None:
                raise self.error(f"{what} (token {first + k + 1})", tok,
                                 f"a port number in [0, {self.n_ports}) (the header's port count)")
            out[k] = value
        return out

    def reducers(self, tokens: Sequence[str], first: int) -> tuple[np.ndarray, np.ndarray]:
        ports = np.zeros(len(tokens), dtype=np.int64)
        sizes = np.empty(len(tokens))
        for k, tok in enumerate(tokens):
            port, sep, mb = tok.partition(":")
            where = f"reducer entry {k + 1} (token {first + k + 1})"
            if not sep or ":" in mb:
                raise self.error(where, tok, "'port:MB', e.g. '65:1.0'")
            value = self.port(port)
            if value is None:
                raise self.error(where, tok, f"a port number in [0, {self.n_ports}) before ':'")
            if not NUMBER.fullmatch(mb):
                raise self.error(where, tok, "a finite number of megabytes after ':'")
            size = float(mb)
            if not (math.isfinite(size) and size >= 0):
                raise self.error(where, tok, "a finite size >= 0 MB after ':'")
            ports[k] = value
            sizes[k] = size
        return ports, sizes

    def release(self, arrival: float, slot_ms: float) -> int:
        """``floor(arrival / slot_ms)`` (snapped), at most :data:`MAX_INT`."""
        q = arrival / slot_ms
        slot = float(snap(np.array([q]))[0]) if math.isfinite(q) else q
        if not (math.isfinite(slot) and math.floor(slot) <= MAX_INT):
            raise self.error("arrival", self.tokens[1], f"at most MAX_INT = 2**53 slots of slot_ms = {slot_ms!r} "
                             f"ms (floor(arrival / slot_ms) = {q:.3g}); raise slot_ms")
        return math.floor(slot)

    def units(self, demand_mb: np.ndarray, out_ports: np.ndarray, m: int, unit_mb: float) -> np.ndarray:
        """``ceil(MB / M / unit_mb)`` (snapped, at least 1) of every flow, each at most :data:`MAX_INT`."""
        with np.errstate(over="ignore", invalid="ignore"):
            q = demand_mb / (m * unit_mb)
            units = np.maximum(np.ceil(snap(q)), 1)
        bad = ~(units <= MAX_INT)  # also NaN / inf
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            port = int(out_ports[k % out_ports.size])
            raise self.error(f"reducer port {port} size (MB)", float(demand_mb[k]),
                             f"at most MAX_INT = 2**53 units per flow; ceil(MB / M / unit_mb) = {q[k]:.3g} "
                             f"with M = {m} and unit_mb = {unit_mb!r}; raise unit_mb")
        return units.astype(np.int64)


def _parse_header(path: Path, lines: list[str]) -> tuple[int, int, int]:
    """Return (header line index, ports, coflows)."""
    for k, text in enumerate(lines):
        tokens = text.split()
        if not tokens:
            continue
        line = _Line(path, k + 1, tokens, 0)
        if len(tokens) != 2:
            raise line.error("header", text.strip(), "'<ports> <coflows>' (two integers)")
        ports = line.integer(0, "header port count", minimum=1, maximum=MAX_PORTS,
                             why="MAX_PORTS; the reader sizes per-port arrays by it")
        return k, ports, line.integer(1, "header coflow count", minimum=0)
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
    * **Limits** (checked before anything is sized by them): at most :data:`MAX_PORTS` = 10**6
      ports, :data:`MAX_FLOWS` = 10**7 flows in the file, and :data:`MAX_INT` = 2**53 for the
      magnitude of an id or any other integer token, one flow's units, and the latest release
      plus the file's total units (so every slot of a schedule is exact).
    * **Text**: UTF-8 (a leading byte-order mark is accepted); lines end at ``\\n``, ``\\r\\n``
      or ``\\r``, and tokens are separated by whitespace.

    Parameters
    ----------
    path : str or Path
        The trace file.
    unit_mb : float, default 1.0
        Megabytes per unit (one unit per port per slot); positive, finite and not subnormal.
    slot_ms : float, default 1000.0
        Milliseconds per slot; positive, finite and not subnormal.
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
        disagreeing with the header (reported at the header line, with the count found); a number
        beyond the limits above (a release or units beyond :data:`MAX_INT` name ``slot_ms`` or
        ``unit_mb``); bytes that are not UTF-8 (with their offset).
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
    clusteropt.instances.readers.TraceError: ...tiny.txt:2: mapper port (token 4) = '7'; expected a port ...
    """
    unit_mb = positive("unit_mb", unit_mb)
    slot_ms = positive("slot_ms", slot_ms)
    path = Path(path)
    lines = _split_lines(read_text(path))
    head, n_ports, n_declared = _parse_header(path, lines)

    ids: list[int] = []
    releases: list[int] = []
    first_line: dict[int, int] = {}
    coflows: list[np.ndarray] = []
    inputs: list[np.ndarray] = []
    outputs: list[np.ndarray] = []
    units: list[np.ndarray] = []
    n_local = n_flows = total_units = 0
    for k in range(head + 1, len(lines)):
        tokens = lines[k].split()
        if not tokens:
            continue
        line = _Line(path, k + 1, tokens, n_ports)
        if len(tokens) < 4:
            raise line.error("token count", len(tokens),
                             "at least 4: '<id> <arrival ms> <M> <mapper ports...> <R> <port:MB ...>'")
        cid = line.integer(0, "coflow id", why="MAX_INT = 2**53, exact in a float64")
        if cid in first_line:
            raise line.error("coflow id", cid, f"distinct ids ({cid} is also the id on line {first_line[cid]})")
        if not NUMBER.fullmatch(tokens[1]):
            raise line.error("arrival", tokens[1], "a finite number of milliseconds")
        arrival = float(tokens[1])
        if not (math.isfinite(arrival) and arrival >= 0):
            raise line.error("arrival", tokens[1], "a finite number of milliseconds >= 0")
        release_slot = line.release(arrival, slot_ms)
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
        with np.errstate(over="ignore"):
            out_mb = np.bincount(inverse, weights=sizes, minlength=out_ports.size)
        if in_ports.size < m or out_ports.size < r:
            log.warning("%s:%d: coflow %d lists a port twice; its demands are summed", path, k + 1, cid)
        keep = out_mb > 0
        out_ports, out_mb = out_ports[keep], out_mb[keep]
        nin, nout = in_ports.size, out_ports.size
        if n_flows + nin * nout > MAX_FLOWS:
            raise line.error("flows", f"{nin} mapper ports x {nout} reducer ports",
                             f"at most MAX_FLOWS = {MAX_FLOWS} flows in the file ({n_flows} before this line)")
        n_flows += nin * nout
        with np.errstate(over="ignore"):
            demand_mb = (in_count[:, None] * out_mb[None, :]).ravel()
        flow_units = line.units(demand_mb, out_ports, m, unit_mb)
        total_units += int(flow_units.sum(dtype=float))  # a float sum: no int64 wrap-around before the check
        if total_units > MAX_INT:
            raise line.error("total units", total_units, "at most MAX_INT = 2**53 units in the file with "
                             f"unit_mb = {unit_mb!r} MB; raise unit_mb")
        inputs.append(np.repeat(in_ports, nout))
        outputs.append(np.tile(out_ports, nin))
        units.append(flow_units)
        coflows.append(np.full(nin * nout, len(ids), dtype=np.int64))
        n_local += int(np.intersect1d(in_ports, out_ports, assume_unique=True).size)
        first_line[cid] = k + 1
        ids.append(cid)
        releases.append(release_slot)

    n = len(ids)
    if n != n_declared:
        raise TraceError(path, head + 1, "header coflow count", n_declared,
                         f"the number of coflow lines in the file, {n} found")
    if n and max(releases) > MAX_INT - total_units:  # a schedule may end at the last release plus all units
        j = int(np.argmax(releases))
        lineno = first_line[ids[j]]
        raise TraceError(path, lineno, "arrival", lines[lineno - 1].split()[1],
                         f"a release slot of at most MAX_INT - (the file's total units) = 2**53 - {total_units}, "
                         f"so every slot of a schedule is exact; it is {releases[j]} with slot_ms = {slot_ms!r}: "
                         "raise slot_ms or unit_mb")
    if weights is None:
        weight = np.ones(n)
    else:
        weight = np.asarray(weights, dtype=float)
        if weight.shape != (n,):
            raise ValueError(f"weights has shape {weight.shape}; expected ({n},): one weight per coflow line")

    def cat(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts).astype(np.int64, copy=False) if parts else np.zeros(0, dtype=np.int64)

    release = np.asarray(releases, dtype=np.int64)
    inst = CoflowInstance(
        n_inputs=n_ports, n_outputs=n_ports, coflow=cat(coflows), input=cat(inputs), output=cat(outputs),
        units=cat(units), weight=weight, release=release, ids=np.asarray(ids, dtype=np.int64),
        slot_seconds=slot_ms / 1000.0,
    )
    busy = np.bincount(inst.input, minlength=n_ports) + np.bincount(inst.output, minlength=n_ports)
    used = np.count_nonzero(busy)
    log.info("read %s: %d coflows, %d flows (%d rack-local), %d units, %d of %d ports used, releases 0..%d",
             path, n, inst.n_flows, n_local, int(inst.units.sum()), used, n_ports, int(release.max(initial=0)))
    return inst
