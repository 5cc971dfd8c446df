"""Online balanced partitioning of ring demands (paper 004: Räcke, Schmid, Zabrodin), as data.

``n`` processes ``0..n-1`` sit on a ring; ``l`` servers (``servers``) hold ``k = n / l`` processes
each.  Request ``t`` is a ring *edge* ``e`` in ``0..n-1``, meaning the pair ``(e, e + 1 mod n)``;
serving it costs 1 when the two processes are on different servers, else 0.  After serving a
request an algorithm may migrate processes, ``alpha`` per process moved (the paper: 1), and the
capacity must hold after every step's migrations (Sec. 1-2 of the paper; docs/algorithms/ring-partitioning.md A1).

Files.  A short sequence is stored inline in the JSON.  A long one (more than
:data:`INLINE_REQUESTS` requests, or ``binary=True``) goes beside the JSON in a NumPy ``.npy``
file (format 1.0: a header then the raw little-endian ``int64`` array; readable by any NumPy
with ``allow_pickle=False``, or by hand from its documented header).  The JSON then holds
``"requests": {"npy": "<file name>", "count": T, "sha256": "<hex of the .npy file>"}`` and
:func:`~clusteropt.instances.load_instance` (or :meth:`RingInstance.read`) checks count and hash.
Before a byte of data is read, the count is checked against :data:`MAX_REQUESTS`, the file is
checked to be a regular file (a FIFO or a device such as ``/dev/zero`` is refused, unread) no
larger than the count allows, its header (``numpy.lib.format``) to describe a 1-d integer array of
``count`` entries, and its size to be the one that header implies; any other file is refused with
an :class:`~clusteropt.instances.base.InstanceError` naming ``requests.npy`` (or ``requests.count``)
and the path, e.g. ``requests.npy = '.../r.requests.npy'; expected a regular file, not a FIFO (named pipe)``.

Generators (:func:`random_ring`) draw request sequences with a seed: ``uniform``, ``hotspot``,
``moving-hotspot``, ``zipf`` and ``phases``.  The ``hit-the-cut`` sequence is built *against* a
deterministic algorithm, so it lives with the policies (:func:`clusteropt.online.ring.hit_the_cut`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from clusteropt.instances.base import (
    Instance,
    InstanceError,
    as_number_array,
    check_int,
    check_number,
    check_string,
    open_regular_file,
    shown,
    write_bytes_atomic,
    write_text_atomic,
)

__all__ = ["INLINE_REQUESTS", "MAX_PROCESSES", "MAX_REQUESTS", "PATTERNS", "RingInstance", "contiguous_assignment",
           "random_ring"]

#: Longest request sequence written inline in the JSON; longer ones go to a ``.npy`` file beside it.
INLINE_REQUESTS = 10_000
#: Most processes of a ring (the default initial assignment holds one int64 per process).
MAX_PROCESSES = 2**24
#: Most requests of a ring instance: 10**8, a hundred times the package's ring benchmark (10**6
#: requests, ``benchmarks/ring_online.py``).  Its ``.npy`` file is 800 MB of int64 and reading it peaks
#: near 1 GB; the online policies take 0.45 to 34 microseconds of CPU a request there, so 10**8
#: requests already take 45 s to 57 minutes a run.  A request file is checked against this before it is read.
MAX_REQUESTS = 10**8
#: The request patterns of :func:`random_ring`.
PATTERNS = ("uniform", "hotspot", "moving-hotspot", "zipf", "phases")


def contiguous_assignment(n: int, servers: int) -> np.ndarray:
    """Server of each process when server ``j`` holds the arc ``j k .. (j + 1) k - 1``.

    >>> contiguous_assignment(6, 3).tolist()
    [0, 0, 1, 1, 2, 2]
    """
    return np.arange(n, dtype=np.int64) // (n // servers)


def _int_field(name: str, value: Any, low: int, high: int | None = None) -> int:
    value = check_int(name, value, floats=True)  # integral floats are taken, up to 2**53
    if value < low or (high is not None and value > high):
        raise InstanceError(name, value, f"an integer in {low}..{high}" if high is not None else f">= {low}")
    return value


def _int_vector(name: str, raw: Any, low: int, high: int, what: str) -> np.ndarray:
    """``raw`` as a read-only 1-d int64 array with every entry in ``low..high``.

    Vectorized for arrays (a million entries take milliseconds); integers are taken exactly,
    floats only when integral, booleans and strings not at all, and the first bad entry is named
    (:func:`~clusteropt.instances.base.as_number_array`).
    """
    arr = as_number_array(name, raw if raw is not None else (), dtype=np.int64, ndim=1)
    if arr.size:
        bad = (arr < low) | (arr > high)
        if bad.any():
            i = int(np.argmax(bad))
            raise InstanceError(f"{name}[{i}]", int(arr[i]), f"{what} in {low}..{high}")
    return arr


@dataclasses.dataclass(frozen=True, eq=False)
class RingInstance(Instance):
    """A ring of ``n`` processes on ``servers`` servers of capacity ``k = n / servers``, and requests.

    Parameters
    ----------
    n : int
        Number of processes (>= 2, at most :data:`MAX_PROCESSES` = ``2**24``), named ``0..n-1``
        along the ring.
    servers : int
        ``l``, the number of servers (>= 1); ``n`` must be a multiple of it.
    requests : int array (T,)
        Ring edge ids in ``0..n-1``; edge ``e`` is the pair ``(e, e + 1 mod n)``.  At most
        :data:`MAX_REQUESTS` = ``10**8`` of them.
    initial : int array (n,), optional
        Server of each process before the first request; at most ``k`` per server.  Default:
        contiguous arcs (:func:`contiguous_assignment`).
    alpha : float
        Migration cost per process moved (>= 0; the paper's analysis takes 1).
    name : str
        A label.
    generated_by : mapping, optional
        How the requests were made (generator name and every parameter, seed included), kept in
        the file so an instance can be re-created.

    Examples
    --------
    >>> inst = RingInstance(n=8, servers=2, requests=[0, 3, 3, 7])
    >>> inst.k, inst.n_requests, inst.initial.tolist()
    (4, 4, [0, 0, 0, 0, 1, 1, 1, 1])
    >>> inst.request_counts().tolist()
    [1, 0, 0, 2, 0, 0, 0, 1]
    >>> RingInstance(n=8, servers=2, requests=[8])
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: requests[0] = 8; expected an edge id in 0..7
    """

    kind = "ring"

    n: int
    servers: int
    requests: np.ndarray
    initial: np.ndarray | None = None
    alpha: float = 1.0
    name: str = ""
    generated_by: Mapping[str, Any] | None = None

    def validate(self) -> None:
        """Check n, servers (n divisible by it), the edge ids, the initial loads and alpha."""
        set_ = lambda field, value: object.__setattr__(self, field, value)  # noqa: E731
        n = _int_field("n", self.n, 2)
        if n > MAX_PROCESSES:
            raise InstanceError("n", n, f"at most {MAX_PROCESSES} processes (2**24)")
        set_("n", n)
        servers = _int_field("servers", self.servers, 1, n)
        set_("servers", servers)
        if n % servers:
            raise InstanceError("n", n, f"a multiple of servers = {servers} (capacity k = n / servers)")
        k = n // servers
        set_("requests", _int_vector("requests", self.requests, 0, n - 1, "an edge id"))
        if self.requests.size > MAX_REQUESTS:
            raise InstanceError("requests.shape[0]", self.requests.size, "at most MAX_REQUESTS = 10**8 requests")
        if self.initial is None:
            initial = contiguous_assignment(n, servers)
            initial.setflags(write=False)
        else:
            initial = _int_vector("initial", self.initial, 0, servers - 1, "a server id")
            if initial.size != n:
                raise InstanceError("initial.shape[0]", initial.size, f"n = {n} (one server per process)")
            # the first process that overfills its server is the one named
            counts = np.bincount(initial, minlength=servers)
            if counts.max() > k:
                s = int(np.argmax(counts > k))
                members = np.flatnonzero(initial == s)
                v = int(members[k])
                raise InstanceError(f"initial[{v}]", s, f"a server with room: server {s} holds "
                                    f"{int(counts[s])} processes, capacity k = {k}")
        set_("initial", initial)
        set_("alpha", check_number("alpha", self.alpha, low=0))
        check_string("name", self.name)
        if self.generated_by is not None:
            if not isinstance(self.generated_by, Mapping):
                raise InstanceError("generated_by", shown(self.generated_by), "a mapping of JSON values")
            try:  # a copy of plain JSON values (finite numbers: the file must stay strict JSON)
                set_("generated_by", json.loads(json.dumps(dict(self.generated_by), allow_nan=False)))
            except (TypeError, ValueError, RecursionError) as exc:
                raise InstanceError("generated_by", shown(self.generated_by), f"JSON values ({exc})") from None

    # -- derived -------------------------------------------------------------------------------
    @property
    def k(self) -> int:
        """Server capacity ``n / l``."""
        return self.n // self.servers

    @property
    def n_requests(self) -> int:
        """``T``, the length of the request sequence."""
        return int(self.requests.size)

    def request_counts(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """``r_e``: how often each edge is requested in ``requests[start:stop]`` (length n)."""
        return np.bincount(self.requests[start:stop], minlength=self.n).astype(np.int64)

    def with_requests(self, requests, *, generated_by: Mapping[str, Any] | None = None) -> RingInstance:
        """The same ring, servers, initial assignment and alpha with another request sequence."""
        return dataclasses.replace(self, requests=requests, generated_by=generated_by)

    # -- files ---------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with the requests inline (see :meth:`to_json` for the ``.npy`` form)."""
        out = super().to_dict()
        out["generated_by"] = None if self.generated_by is None else dict(self.generated_by)
        return out

    def to_json(self, path: str | Path | None = None, *, indent: int | None = 1,
                binary: bool | None = None) -> str:
        """JSON text; with ``path``, also write the file (and the ``.npy`` requests beside it).

        ``binary`` (default: more than :data:`INLINE_REQUESTS` requests and a ``path``) puts the requests in
        ``<stem>.requests.npy`` next to ``path``.  The ``.npy`` file is written first and both
        through a temporary file and a rename, so a failed write leaves the earlier files intact.
        """
        data = self.to_dict()
        if binary is None:  # without a path there is nowhere to put a .npy file: inline
            binary = path is not None and self.n_requests > INLINE_REQUESTS
        if binary:
            if path is None:
                raise ValueError("binary=True needs a path to write the .npy file beside")
            path = Path(path)
            npy = path.with_name(f"{path.stem}.requests.npy")
            buf = io.BytesIO()
            np.save(buf, np.ascontiguousarray(self.requests, dtype="<i8"), allow_pickle=False)
            blob = buf.getvalue()
            write_bytes_atomic(npy, blob)
            data["requests"] = {"npy": npy.name, "count": self.n_requests,
                                "sha256": hashlib.sha256(blob).hexdigest()}
        text = json.dumps(data, indent=indent)
        if path is not None:
            write_text_atomic(path, text + "\n")
        return text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base_dir: str | Path | None = None) -> RingInstance:
        """Inverse of :meth:`to_dict`; a ``.npy`` reference is read from ``base_dir``."""
        if not isinstance(data, Mapping):
            return super().from_dict(data)  # its error names the problem
        data = dict(data)
        req = data.get("requests")
        if isinstance(req, Mapping):
            data["requests"] = _read_npy_ref(req, base_dir)
        return super().from_dict(data)  # type: ignore[return-value]

    @classmethod
    def read_file(cls, data: Mapping[str, Any], path: Path) -> RingInstance:
        """Hook of :func:`~clusteropt.instances.load_instance`: resolve ``.npy`` beside ``path``."""
        return cls.from_dict(data, base_dir=path.parent)

    @classmethod
    def read(cls, path: str | Path) -> RingInstance:
        """Read a ring instance file (JSON, and its ``.npy`` requests when it refers to one)."""
        from clusteropt.instances.base import load_instance

        inst = load_instance(path)
        if not isinstance(inst, cls):
            raise InstanceError(f"{path}: kind", inst.kind, repr(cls.kind))
        return inst


def _read_npy_ref(ref: Mapping[str, Any], base_dir: str | Path | None) -> np.ndarray:
    """The requests of a ``{"npy": file, "count": T, "sha256": hex}`` reference, checked before read.

    In this order, so that a hostile file is refused in a moment and nothing is read that the
    instance does not declare: the declared ``count`` against :data:`MAX_REQUESTS`; the path (a
    regular file, not a FIFO or device: :func:`~clusteropt.instances.base.open_regular_file`) and
    its size against the declared count; the ``.npy`` header (format 1.0 or 2.0, read with
    ``numpy.lib.format``) for a 1-d integer array of ``count`` entries; the file size against the
    size the header implies (no truncated or padded file); only then the data, and its SHA-256.
    """
    unknown = sorted(set(ref) - {"npy", "count", "sha256"}, key=str)
    if unknown or not isinstance(ref.get("npy"), str):
        raise InstanceError("requests", shown(dict(ref)),
                            "a list of edge ids or {'npy': file, 'count': T, 'sha256': hex}")
    if base_dir is None:
        raise InstanceError("requests.npy", shown(ref["npy"]),
                            "a file beside the JSON: read it with load_instance(path) or RingInstance.read(path)")
    name = ref["npy"]
    if Path(name).name != name or name in ("", ".", "..") or "\0" in name:
        raise InstanceError("requests.npy", shown(name), "a plain file name in the JSON file's folder")
    path = Path(base_dir) / name
    count = ref.get("count")
    declared = int(count) if isinstance(count, int | np.integer) and not isinstance(count, bool) else None
    if declared is not None and not 0 <= declared <= MAX_REQUESTS:
        raise InstanceError("requests.count", shown(count), f"a number of requests in 0..{MAX_REQUESTS} "
                            "(MAX_REQUESTS = 10**8)")
    most = MAX_REQUESTS if declared is None else declared
    try:
        fh = open_regular_file(path, where="requests.npy", limit=_NPY_HEADER_MAX + 8 * most,
                               why=("MAX_REQUESTS = 10**8" if declared is None else f"requests.count = {most}")
                               + " int64 requests and a .npy header")
    except FileNotFoundError:
        raise InstanceError("requests.npy", str(path), "an existing .npy file beside the JSON") from None
    with fh:
        shape, dtype, offset = _npy_header(fh, path)
        if len(shape) != 1:
            raise InstanceError("requests.npy shape", shape, f"a 1-d array of edge ids ({path})")
        size = shape[0]
        if "count" in ref and size != declared:
            raise InstanceError("requests.count", shown(count), f"the {size} entries of {path}")
        if size > MAX_REQUESTS:
            raise InstanceError("requests.npy shape", shape, f"at most MAX_REQUESTS = 10**8 requests ({path})")
        expected = offset + size * dtype.itemsize
        actual = os.fstat(fh.fileno()).st_size
        if actual != expected:
            raise InstanceError("requests.npy", str(path), f"{expected} bytes: a {offset}-byte header and {size} "
                                f"entries of {dtype.itemsize} bytes ({dtype}); the file has {actual} "
                                f"(truncated or padded)")
        fh.seek(0)
        blob = fh.read(expected)
    if len(blob) != expected:  # it shrank while read
        raise InstanceError("requests.npy", str(path), f"{expected} bytes; {len(blob)} could be read")
    if "sha256" in ref and hashlib.sha256(blob).hexdigest() != ref["sha256"]:
        raise InstanceError("requests.sha256", shown(ref["sha256"]),
                            f"the SHA-256 of {path} (the file was changed)")
    return np.frombuffer(blob, dtype=dtype, count=size, offset=offset)


#: Most bytes before the data of a ``.npy`` file this reader takes: the 8-byte magic string and
#: version, the header length (2 bytes in format 1.0, 4 in 2.0) and ``numpy.lib.format``'s
#: ``max_header_size`` of 10000 bytes (a 1-d integer array's header has some 70).
_NPY_HEADER_MAX = 8 + 4 + 10_000


def _npy_header(fh: BinaryIO, path: Path) -> tuple[tuple[int, ...], np.dtype, int]:
    """``(shape, dtype, data offset)`` from the header of the ``.npy`` file open at ``fh``.

    The dtype must be an integer one (no objects: nothing is unpickled, whatever the file says).
    """
    if fh.read(4) == b"PK\x03\x04":  # the zip archive of np.savez
        raise InstanceError("requests.npy", str(path), "a NumPy .npy file of integers (not an .npz archive)")
    fh.seek(0)
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = fmt.read_array_header_1_0(fh)
        elif version == (2, 0):
            shape, _, dtype = fmt.read_array_header_2_0(fh)
        else:
            raise ValueError(f"format version {version[0]}.{version[1]}; this reader takes 1.0 and 2.0 "
                             "(3.0 only differs for non-Latin-1 field names, which an integer array has not)")
    except (ValueError, OSError, EOFError, SyntaxError) as exc:
        raise InstanceError("requests.npy", str(path), f"a NumPy .npy file of integers ({exc})") from None
    if dtype.kind not in "iu":
        raise InstanceError("requests.npy dtype", str(dtype), "an integer dtype")
    return tuple(int(d) for d in shape), dtype, fh.tell()


# -- generators ----------------------------------------------------------------------------------


def random_ring(
    n: int,
    servers: int,
    requests: int,
    pattern: str = "uniform",
    *,
    seed=None,
    alpha: float = 1.0,
    width: int | None = None,
    hot: float = 0.9,
    step: int | None = None,
    phase: int | None = None,
    zipf: float = 1.2,
    name: str = "",
) -> RingInstance:
    """A ring instance with ``requests`` edges drawn by ``pattern`` from ``seed``.

    Patterns (every parameter lands in ``generated_by`` so the instance can be re-created):

    ``uniform``
        Every edge equally likely.
    ``hotspot``
        With probability ``hot`` an edge of a hot arc of ``width`` edges (default ``k``) at a
        random place, else any edge.
    ``moving-hotspot``
        The hot arc moves one edge forward every ``step`` requests (default ``k``).
    ``zipf``
        Edge ranks from a random permutation; ``P[rank r] ~ r^-zipf``.
    ``phases``
        The hot arc jumps to a new random place every ``phase`` requests (default ``10 n``).

    The initial assignment is contiguous arcs; the paper's experiments-free analysis takes
    ``alpha = 1``.

    Examples
    --------
    >>> inst = random_ring(16, 4, 1000, "hotspot", seed=1)
    >>> inst.generated_by["pattern"], inst.generated_by["width"], inst.n_requests
    ('hotspot', 4, 1000)
    >>> random_ring(16, 4, 1000, "hotspot", seed=1) == inst
    True
    """
    n = _int_field("n", n, 2)
    servers = _int_field("servers", servers, 1, n)
    if n % servers:
        raise InstanceError("n", n, f"a multiple of servers = {servers}")
    k = n // servers
    T = _int_field("requests", requests, 0, MAX_REQUESTS)  # before anything is drawn
    if pattern not in PATTERNS:
        raise InstanceError("pattern", pattern, f"one of {', '.join(PATTERNS)}")
    width = k if width is None else _int_field("width", width, 1, n)
    step = k if step is None else _int_field("step", step, 1)
    phase = 10 * n if phase is None else _int_field("phase", phase, 1)
    if not (isinstance(hot, int | float) and 0.0 <= hot <= 1.0):
        raise InstanceError("hot", hot, "a probability in [0, 1]")
    if not (isinstance(zipf, int | float) and math.isfinite(zipf) and zipf >= 0):
        raise InstanceError("zipf", zipf, "a finite exponent >= 0")
    rng = np.random.default_rng(seed)
    gen: dict[str, Any] = {"generator": "random_ring", "pattern": pattern, "n": n, "servers": servers,
                           "requests": T,
                           "seed": int(seed) if isinstance(seed, int | np.integer) else None if seed is None
                           else str(seed)}
    if pattern == "uniform":
        req = rng.integers(0, n, size=T)
    elif pattern == "zipf":
        ranks = np.arange(1, n + 1, dtype=float) ** -float(zipf)
        perm = rng.permutation(n)
        req = perm[rng.choice(n, size=T, p=ranks / ranks.sum())]
        gen["zipf"] = float(zipf)
    else:
        if pattern == "hotspot":
            start = np.full(T, rng.integers(0, n))
        elif pattern == "moving-hotspot":
            start = rng.integers(0, n) + np.arange(T) // step
            gen["step"] = step
        else:  # phases
            n_phases = -(-T // phase) if T else 0
            start = np.repeat(rng.integers(0, n, size=n_phases), phase)[:T]
            gen["phase"] = phase
        inside = rng.random(T) < hot
        req = np.where(inside, start + rng.integers(0, width, size=T), rng.integers(0, n, size=T)) % n
        gen.update(width=width, hot=float(hot))
    return RingInstance(n=n, servers=servers, requests=np.asarray(req, dtype=np.int64), alpha=alpha,
                        name=name or f"ring-{pattern}-n{n}-l{servers}-T{T}", generated_by=gen)
