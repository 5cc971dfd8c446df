"""Conventions every instance follows: frozen, validated on construction, JSON with a kind.

* An instance is a frozen dataclass deriving from :class:`Instance`; its arrays are numpy arrays
  made read-only on construction, so an instance cannot change after it was validated.
* ``validate()`` raises :class:`InstanceError` naming the field, the offending index and what was
  expected: ``InstanceError: demand[3, 1] = -2.0; expected >= 0``.
* ``to_json()`` / ``from_json()`` round-trip through a dict holding ``"kind"`` and
  ``"schema_version"``; :func:`load_instance` reads any registered kind from a file.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "INSTANCE_KINDS",
    "Instance",
    "InstanceError",
    "load_instance",
    "write_bytes_atomic",
    "write_text_atomic",
]


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename.

    A crash or a full disk mid-write leaves the earlier file (if any) intact, never a torn one.

    >>> import tempfile, pathlib
    >>> p = write_text_atomic(pathlib.Path(tempfile.mkdtemp()) / "a.txt", "hello")
    >>> p.read_text()
    'hello'
    """
    return _write_atomic(path, text, "w")


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` like :func:`write_text_atomic` (temporary file and a rename)."""
    return _write_atomic(path, data, "wb")


def _write_atomic(path: str | Path, data: str | bytes, mode: str) -> Path:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as an ordinary open() would have created it
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


class InstanceError(ValueError):
    """Bad instance data: names the field, the index and what was expected.

    >>> str(InstanceError("jobs[3].bandwidth", -2.0, ">= 0"))
    'jobs[3].bandwidth = -2.0; expected >= 0'
    """

    def __init__(self, where: str, value: Any, expected: str):
        self.where, self.value, self.expected = where, value, expected
        super().__init__(f"{where} = {value!r}; expected {expected}")


INSTANCE_KINDS: dict[str, type[Instance]] = {}
"""Registered instance kinds: ``"kind"`` string -> class."""


def _index_text(idx: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


@dataclasses.dataclass(frozen=True, eq=False)
class Instance:
    """Base of all instances.  Subclasses set ``kind`` and implement :meth:`validate`.

    Array fields are declared with type ``np.ndarray`` and converted with :meth:`_array` in
    ``validate``; tuples stay tuples.  Equality compares the JSON dicts.
    """

    kind: ClassVar[str] = ""
    schema_version: ClassVar[int] = 1

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.kind:
            if cls.kind in INSTANCE_KINDS and INSTANCE_KINDS[cls.kind] is not cls:
                raise TypeError(f"instance kind {cls.kind!r} registered twice")
            INSTANCE_KINDS[cls.kind] = cls

    def __post_init__(self):
        self.validate()

    def validate(self) -> None:
        """Check and normalize every field; raise :class:`InstanceError` on the first bad one."""

    # -- helpers for subclasses ------------------------------------------------------------
    def _array(
        self,
        name: str,
        *,
        dtype: type = float,
        ndim: int | None = None,
        shape: tuple[int | None, ...] | None = None,
    ) -> np.ndarray:
        """Convert field ``name`` to a read-only array of ``dtype`` with the given shape.

        ``shape`` entries of ``None`` are free; a mismatch names the axis and both sizes.
        """
        raw = getattr(self, name)
        try:
            arr = np.array(raw, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InstanceError(name, raw, f"an array of numbers ({exc})") from None
        if ndim is not None and arr.ndim != ndim:
            raise InstanceError(f"{name}.ndim", arr.ndim, f"{ndim} (shape {arr.shape})")
        if shape is not None:
            for axis, (got, want) in enumerate(zip(arr.shape, shape, strict=True)):
                if want is not None and got != want:
                    raise InstanceError(f"{name}.shape[{axis}]", got, f"{want}")
        bad = ~np.isfinite(arr)
        if bad.any():
            idx = tuple(np.argwhere(bad)[0])
            raise InstanceError(f"{name}{_index_text(idx)}", float(arr[idx]), "a finite number")
        if np.issubdtype(dtype, np.integer):
            frac = arr != np.round(arr)
            if frac.any():
                idx = tuple(np.argwhere(frac)[0])
                raise InstanceError(f"{name}{_index_text(idx)}", float(arr[idx]), "an integer")
            huge = np.abs(arr) > 2.0**62
            if huge.any():
                idx = tuple(np.argwhere(huge)[0])
                raise InstanceError(f"{name}{_index_text(idx)}", float(arr[idx]), "an integer below 2**62")
            arr = arr.astype(np.int64)
        arr.setflags(write=False)
        object.__setattr__(self, name, arr)
        return arr

    @staticmethod
    def _check(name: str, arr: np.ndarray, ok: np.ndarray, expected: str) -> None:
        """Raise for the first entry of ``arr`` where ``ok`` is False."""
        ok = np.asarray(ok)
        if not ok.all():
            idx = tuple(np.argwhere(~ok)[0])
            value = arr[idx].item() if arr.ndim else arr.item()
            raise InstanceError(f"{name}{_index_text(idx) if idx else ''}", value, expected)

    # -- JSON ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict with ``kind`` and ``schema_version`` first."""
        out: dict[str, Any] = {"kind": self.kind, "schema_version": self.schema_version}
        for f in dataclasses.fields(self):
            out[f.name] = _plain(getattr(self, f.name))
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Instance:
        """Inverse of :meth:`to_dict`; checks kind, schema version and field names."""
        data = dict(data)
        kind = data.pop("kind", None)
        if kind != cls.kind:
            raise InstanceError("kind", kind, repr(cls.kind))
        version = data.pop("schema_version", None)
        if version != cls.schema_version:
            raise InstanceError(
                "schema_version", version, f"{cls.schema_version} for kind {cls.kind!r}"
            )
        names = [f.name for f in dataclasses.fields(cls) if f.init]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise InstanceError(unknown[0], data[unknown[0]], f"one of the fields {names}")
        missing = [
            f.name
            for f in dataclasses.fields(cls)
            if f.init
            and f.name not in data
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise InstanceError(missing[0], None, "a value (the field is required)")
        return cls(**{k: _from_plain(v) for k, v in data.items()})

    def to_json(self, path: str | Path | None = None, *, indent: int | None = 1) -> str:
        """JSON text of :meth:`to_dict`; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent)
        if path is not None:
            write_text_atomic(path, text + "\n")
        return text

    @classmethod
    def from_json(cls, text: str) -> Instance:
        """Parse JSON text written by :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # instances hold arrays; compare them, do not hash them


def _plain(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Instance):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"cannot write the non-finite number {value} to JSON")
    return value


def _from_plain(value: Any) -> Any:
    return tuple(_from_plain(v) for v in value) if isinstance(value, list) else value


def load_instance(path: str | Path) -> Instance:
    """Read an instance file of any registered kind.

    Raises
    ------
    InstanceError
        The file is not JSON, has no / an unknown ``kind``, or a field is bad.
    FileNotFoundError
        No such file.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from clusteropt.instances import random_worker_placement
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "wp.json"
    >>> inst = random_worker_placement(n_jobs=3, n_servers=2, seed=1)
    >>> _ = inst.to_json(p)
    >>> load_instance(p) == inst
    True
    """
    import clusteropt.instances  # noqa: F401  (registers every kind)

    path = Path(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstanceError(f"{path}: byte {exc.start}", raw[exc.start : exc.start + 1],
                            "a UTF-8 JSON instance file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(
            f"{path}:{exc.lineno}", exc.msg, "a JSON instance file (see instances/)"
        ) from None
    if not isinstance(data, dict) or "kind" not in data:
        raise InstanceError(f"{path}: kind", None, "a top-level object with a 'kind' field")
    cls = INSTANCE_KINDS.get(data["kind"]) if isinstance(data["kind"], str) else None
    if cls is None:
        raise InstanceError(f"{path}: kind", data["kind"], f"one of {sorted(INSTANCE_KINDS)}")
    read_file = getattr(cls, "read_file", None)  # kinds with files beside the JSON (ring: .npy requests)
    return read_file(data, path) if read_file is not None else cls.from_dict(data)
