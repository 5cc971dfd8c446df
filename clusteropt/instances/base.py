"""Conventions every instance follows: frozen, validated on construction, JSON with a kind.

* An instance is a frozen dataclass deriving from :class:`Instance`; its arrays are numpy arrays
  made read-only on construction, so an instance cannot change after it was validated.
* ``validate()`` raises :class:`InstanceError` naming the field, the offending index and what was
  expected: ``InstanceError: demand[3, 1] = -2.0; expected >= 0``.  Nothing else leaves a
  constructor or :func:`load_instance` for bad data (a missing file raises ``FileNotFoundError``).
* Numbers are real numbers: a boolean or a string such as ``"5"`` is rejected where a number is
  expected.  Integer fields are converted exactly (a JSON integer becomes an ``int64`` with no
  float detour; an integral float is accepted up to ``2**53``, where floats stop holding every
  integer) and must lie within ``+-2**62`` (:data:`INT_LIMIT`), so sums of a few stay in ``int64``.
* Real-valued fields (prices, capacities, demands, bandwidths, weights, ...) have magnitude at most
  :data:`MAX_MAGNITUDE` = ``1e7``.  Models use a field, or a product of two, as a coefficient;
  HiGHS refuses a matrix entry of magnitude ``large_matrix_value`` = ``1e15`` or more, SCIP
  treats values beyond ``numerics/hugeval`` = ``1e15`` as huge and both read ``1e20``
  (``infinite_bound``, ``infinite_cost``, ``numerics/infinity``) as infinite: a field of ``1e16``
  made HiGHS answer "objective 0" on a model SCIP solved to 183.2, one of ``1e20`` crashed SCIP.
  ``1e7`` keeps a product of two fields at ``1e14``, a decade below ``1e15`` for the sums the
  modelling layers merge, and keeps the round-off of a field times a variable of order one
  (``1e7 * 2.2e-16``) below the feasibility tolerances (HiGHS ``primal_feasibility_tolerance``
  ``1e-7``, SCIP ``numerics/feastol`` ``1e-6``), so a reported feasibility means something.
  Integer fields (ids, slots, counts, units) keep their exactness limits instead.
* Names (resources, ids, ...) are distinct; a repeat is reported with its index and the first one.
* ``to_json()`` / ``from_json()`` round-trip through a dict holding ``"kind"`` and
  ``"schema_version"``; :func:`load_instance` reads any registered kind from a file.

The checks subclasses share live here: :meth:`Instance._array` (and :func:`as_number_array`) for
arrays, :func:`check_int`, :func:`check_number`, :func:`check_string` and :func:`check_names` for
scalar and name fields, :func:`first_repeat` for duplicate keys.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import reprlib
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

import numpy as np

__all__ = [
    "FLOAT_INT_LIMIT",
    "INSTANCE_KINDS",
    "INT_LIMIT",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_MAGNITUDE",
    "Instance",
    "InstanceError",
    "as_number_array",
    "check_int",
    "check_names",
    "check_number",
    "check_string",
    "first_repeat",
    "load_instance",
    "open_regular_file",
    "read_regular_file",
    "shown",
    "write_bytes_atomic",
    "write_text_atomic",
]


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file and a rename.

    A crash or a full disk mid-write leaves the earlier file (if any) intact, never a torn one.
    An existing ``path`` that is a symbolic link or not a regular file (a device such as
    ``/dev/stdout`` or ``/dev/null``, a FIFO) is opened and written through, as a shell's ``>``
    does, rather than replaced: the link, the device or the pipe stays what it was.

    >>> import tempfile, pathlib
    >>> p = write_text_atomic(pathlib.Path(tempfile.mkdtemp()) / "a.txt", "hello")
    >>> p.read_text()
    'hello'
    """
    return _write_atomic(path, text, "w")


def write_bytes_atomic(path: str | Path, data: bytes | Callable[[Path], object]) -> Path:
    """Write ``data`` to ``path`` like :func:`write_text_atomic` (temporary file and a rename).

    ``data`` may also be a function that writes the file it is given the path of (for writers
    that only write to a file name, such as Pyomo's LP writer); that temporary file's name ends
    with ``path``'s suffix.
    """
    return _write_atomic(path, data, "wb")


def _write_atomic(path: str | Path, data: str | bytes | Callable[[Path], object], mode: str) -> Path:
    import errno
    import shutil
    import stat

    path = Path(path)
    try:
        info = os.stat(path)  # follows a symbolic link
    except (FileNotFoundError, NotADirectoryError):
        info = None  # a dangling link is written through below; a missing one made
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if path.is_symlink() or (info is not None and not stat.S_ISREG(info.st_mode)):
        if not callable(data):
            with open(path, mode) as fh:
                fh.write(data)
            return path
        fd, tmp = tempfile.mkstemp(suffix=path.suffix)
        os.close(fd)
        try:
            data(Path(tmp))
            with open(tmp, "rb") as src, open(path, "wb") as dst:
                shutil.copyfileobj(src, dst)
        finally:
            os.unlink(tmp)
        return path
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                               suffix=".tmp" + (path.suffix if callable(data) else ""))
    try:
        if callable(data):
            os.close(fd)
            data(Path(tmp))
        else:
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


#: Largest magnitude of an integer field: ``int64`` with headroom, so sums of a few entries fit.
INT_LIMIT = 2**62
#: Largest magnitude of a float taken as an integer: float64 holds every integer up to ``2**53``
#: and skips some above (``9007199254740993.0`` reads as ``...992``).
FLOAT_INT_LIMIT = 2**53
#: Largest magnitude of a real-valued field: products of two stay a decade below the solvers'
#: ``1e15`` (HiGHS ``large_matrix_value``, SCIP ``numerics/hugeval``); see the module docstring.
MAX_MAGNITUDE = 1e7
_MAGNITUDE_TEXT = "of magnitude <= 1e7 (MAX_MAGNITUDE: solvers mishandle coefficients near 1e15)"
#: Deepest nesting of lists and objects inside a field of an instance (arrays need at most 3).
MAX_DEPTH = 32
#: Integer literals longer than this are not parsed: no field takes a value above float's 1.8e308
#: (309 digits), and Python refuses to parse more than 4300 digits.
_MAX_LITERAL_DIGITS = 400
_FLOAT_MAX_INT = int(sys.float_info.max)


class _Text:
    """A value shown in an error message by a prepared text (for long, deep or huge values)."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


class _HugeInt(_Text):
    """An integer literal of a JSON file too long for any field (see :data:`_MAX_LITERAL_DIGITS`)."""


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict = 3, 8, 8, 4
_SHORT.maxstring, _SHORT.maxother, _SHORT.maxlong = 100, 100, 40


def shown(value: Any) -> Any:
    """``value`` itself when it is short, else a stand-in whose ``repr`` is a short text.

    Error messages repeat the offending value; a 5000-digit integer, a megabyte string or a list
    nested 100000 deep must not make them (or ``repr`` itself) blow up.

    >>> shown(3), shown([1, 2]), shown(10**50)
    (3, [1, 2], <an integer of 51 digits>)
    """
    if value is None or isinstance(value, bool | float | np.bool_ | np.floating | _Text):
        return value
    if isinstance(value, int | np.integer):
        v = int(value)
        if abs(v) < 10**30:
            return value
        digits = len(str(abs(v))) if v.bit_length() < 10_000 else int(v.bit_length() * math.log10(2)) + 1
        return _Text(f"<an integer of {digits} digits>")
    if isinstance(value, str) and len(value) <= 100:
        return value
    if isinstance(value, list | tuple) and len(value) <= 8 and all(
            v is None or isinstance(v, bool | float | str) or (isinstance(v, int) and abs(v) < 10**30)
            for v in value) and sum(len(v) for v in value if isinstance(v, str)) <= 120:
        return value
    try:
        return _Text(_SHORT.repr(value))
    except Exception:  # a repr that fails must not hide the real error
        return _Text(f"<a {type(value).__name__}>")


def _range_text(low: float | None, high: float | None, what: str) -> str:
    if low is not None and high is not None:
        return f"{what} in {low} .. {high}"
    if low is not None:
        return f"{what} >= {low}"
    if high is not None:
        return f"{what} <= {high}"
    return what


def check_int(where: str, value: Any, *, low: int | None = None, high: int | None = None,
              floats: bool = False, expected: str | None = None) -> int:
    """``value`` as a Python int, or :class:`InstanceError` naming ``where``.

    Booleans, strings and other non-numbers are rejected; floats only with ``floats=True`` and
    then only integral ones up to ``2**53`` in magnitude.  ``low`` / ``high`` bound the value
    (``expected`` replaces the generated text such as ``"an integer >= 1"``); the magnitude is
    at most :data:`INT_LIMIT` in any case.

    >>> check_int("horizon", 5, low=1)
    5
    >>> check_int("horizon", True, low=1)
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: horizon = True; expected an integer >= 1
    """
    text = expected or _range_text(low, high, "an integer")
    if isinstance(value, bool | np.bool_):
        raise InstanceError(where, value, text)
    if isinstance(value, float | np.floating) and floats:
        if not math.isfinite(value) or not float(value).is_integer():
            raise InstanceError(where, value, text)
        if np.abs(value) > FLOAT_INT_LIMIT:  # np.abs: numpy's stubs give abs(np.floating[Any]) as object
            raise InstanceError(where, value, f"{text} (a float above 2**53 need not be the integer written: "
                                "write it without a fraction or exponent)")
        value = int(value)
    if not isinstance(value, int | np.integer):
        raise InstanceError(where, shown(value), text)
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise InstanceError(where, shown(value), text)
    if abs(value) > INT_LIMIT:
        raise InstanceError(where, shown(value), "an integer of magnitude <= 2**62" if text == "an integer"
                            else f"{text}, of magnitude <= 2**62")
    return value


def check_number(where: str, value: Any, *, low: float | None = None, high: float | None = None,
                 expected: str | None = None) -> float:
    """``value`` as a finite Python float in ``low .. high``, or :class:`InstanceError` naming ``where``.

    The magnitude is at most :data:`MAX_MAGNITUDE` in any case.

    >>> check_number("alpha", 2, low=0)
    2.0
    >>> check_number("alpha", 1e16, low=0)
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: alpha = 1e+16; expected a finite number >= 0, of magnitude <= 1e7 ...
    >>> check_number("alpha", "2", low=0)
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: alpha = '2'; expected a finite number >= 0
    """
    text = expected or _range_text(low, high, "a finite number")
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        raise InstanceError(where, shown(value), text)
    if isinstance(value, int) and abs(value) > _FLOAT_MAX_INT:
        raise InstanceError(where, shown(value), text)
    v = float(value)
    if not math.isfinite(v) or (low is not None and v < low) or (high is not None and v > high):
        raise InstanceError(where, shown(value), text)
    if abs(v) > MAX_MAGNITUDE:
        raise InstanceError(where, shown(value), f"{text}, {_MAGNITUDE_TEXT}")
    return v


def check_string(where: str, value: Any, *, choices=None, nonempty: bool = False) -> str:
    """``value`` if it is a string (non-empty / one of ``choices`` when asked), else :class:`InstanceError`.

    >>> check_string("utility", {}, choices=("log", "sqrt"))
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: utility = {}; expected one of ['log', 'sqrt']
    """
    if choices is not None:
        if not isinstance(value, str) or value not in choices:
            raise InstanceError(where, shown(value), f"one of {sorted(choices)}")
    elif not isinstance(value, str) or (nonempty and not value):
        raise InstanceError(where, shown(value), "a non-empty string" if nonempty else "a string")
    return value


def job_count(n_jobs, jobs, default):
    """The job count of a preset given as ``n_jobs=`` (the generators' name) or ``jobs=`` (the
    CLI's ``--jobs``): one of them, or ``default`` when neither is given.

    >>> job_count(None, 5, 20), job_count(7, None, 20), job_count(None, None, 20)
    (5, 7, 20)
    >>> job_count(5, 6, 20)
    Traceback (most recent call last):
    ...
    TypeError: n_jobs = 5 and jobs = 6: pass one of them (they are the same parameter)
    """
    if n_jobs is not None and jobs is not None:
        raise TypeError(f"n_jobs = {n_jobs!r} and jobs = {jobs!r}: pass one of them (they are the same parameter)")
    return default if n_jobs is None and jobs is None else n_jobs if n_jobs is not None else jobs


def first_repeat(keys) -> tuple[int, int] | None:
    """``(k, j)``: the first position k whose key (an entry, or a row of a 2-d array) occurred before,
    first at j < k; ``None`` when all keys are distinct.

    >>> first_repeat(["gpu", "cpu", "gpu"]), first_repeat(np.array([[0, 1], [1, 0], [0, 1]]))
    ((2, 0), (2, 0))
    """
    if isinstance(keys, np.ndarray):
        if keys.shape[0] == 0:
            return None
        _, first, inverse = np.unique(keys, axis=0 if keys.ndim > 1 else None, return_index=True,
                                      return_inverse=True)
        origin = first[inverse.reshape(-1)]
        rep = np.flatnonzero(origin != np.arange(keys.shape[0]))
        return (int(rep[0]), int(origin[rep[0]])) if rep.size else None
    seen: dict[Any, int] = {}
    for k, key in enumerate(keys):
        if key in seen:
            return k, seen[key]
        seen[key] = k
    return None


def check_names(where: str, value: Any, *, what: str = "resource names") -> tuple[str, ...]:
    """A non-empty list of distinct non-empty strings as a tuple, or :class:`InstanceError`.

    A repeat names its index and the first index (duplicate names would merge rows of a model).

    >>> check_names("resources", ["gpu", "cpu", "gpu"])
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: resources[2] = 'gpu'; expected a name distinct from resources[0]
    """
    if isinstance(value, str) or not isinstance(value, list | tuple) or not value:
        raise InstanceError(where, shown(value), f"a non-empty list of {what}")
    names = tuple(value)
    for k, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise InstanceError(f"{where}[{k}]", shown(name), "a non-empty string")
    rep = first_repeat(names)
    if rep is not None:
        raise InstanceError(f"{where}[{rep[0]}]", shown(names[rep[0]]), f"a name distinct from {where}[{rep[1]}]")
    return names


def _is_int_type(t: type) -> bool:
    return issubclass(t, int | np.integer) and not issubclass(t, bool | np.bool_)


def _is_float_type(t: type) -> bool:
    return issubclass(t, float | np.floating)


def _python_scalar(x: Any) -> Any:
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    return x.item() if isinstance(x, np.generic) else x


def _python_numbers(where: str, raw: Any, integer: bool, ndim: int | None) -> np.ndarray:
    """Nested lists / tuples (or anything but a numeric ndarray) as an int64 or float64 array.

    Every entry must be a number (not a bool, string, None, ...); the nested lists rectangular and
    at most 32 deep.  Integer targets keep Python ints exact.
    """
    try:
        obj = np.array(raw, dtype=object)
    except (ValueError, TypeError, RuntimeError, RecursionError, OverflowError, KeyError, IndexError) as exc:
        raise InstanceError(where, shown(raw), f"an array of numbers ({exc})") from None
    flat = obj.reshape(-1)
    types = set(map(type, flat))
    if any(issubclass(t, np.generic | np.ndarray) for t in types):  # numpy scalars, 0-d arrays: Python values
        obj = np.asarray(np.frompyfunc(_python_scalar, 1, 1)(obj), dtype=object)
        flat = obj.reshape(-1)
        types = set(map(type, flat))
    bad = {t for t in types if not (_is_int_type(t) or _is_float_type(t))}
    if bad:
        k = next(i for i, x in enumerate(flat) if type(x) in bad)
        x = flat[k]
        x = x.item() if isinstance(x, np.generic) else x
        at = where + (_index_text(np.unravel_index(k, obj.shape)) if obj.ndim else "")
        if obj.ndim == 0 and ndim:
            expected = "an array of numbers"
        elif isinstance(x, list | tuple | np.ndarray):
            expected = ("a number (the nested lists must be rectangular)" if ndim is None or obj.ndim < ndim
                        else f"a number (the array has {ndim} dimension{'s' if ndim != 1 else ''})")
        elif isinstance(x, _HugeInt):
            expected = "an integer of magnitude <= 2**62" if integer else "a finite number"
        elif isinstance(x, bool | np.bool_):
            expected = "a number (true / false is not one)"
        elif isinstance(x, str | bytes):
            expected = "a number (not a string)"
        else:
            expected = "a number"
        raise InstanceError(at, shown(x), expected)
    int_types = {t for t in types if _is_int_type(t)}
    if not int_types:
        return obj.astype(np.float64)  # floats only (or empty): the ndarray path checks them
    if len(int_types) < len(types):  # ints and floats mixed
        is_int = np.asarray(np.frompyfunc(lambda x: type(x) in int_types, 1, 1)(obj), dtype=bool)
    else:
        is_int = np.ones(obj.shape, dtype=bool)
    if integer and not is_int.all():  # the floats among integers: finite and integral
        fl = np.where(is_int, 0.0, obj).astype(np.float64)
        _first_bad(where, obj, ~np.isfinite(fl), "a finite number")
        _first_bad(where, obj, fl != np.round(fl), "an integer")
        _first_bad(where, obj, np.abs(fl) > FLOAT_INT_LIMIT,
                   "an integer (a float above 2**53 need not be the integer written: write it without a "
                   "fraction or exponent)")
    limit = INT_LIMIT if integer else _FLOAT_MAX_INT
    with np.errstate(invalid="ignore"):
        big = ((obj > limit) | (obj < -limit)).astype(bool) & is_int
    _first_bad(where, obj, big, "an integer of magnitude <= 2**62" if integer else "a finite number")
    return obj.astype(np.int64 if integer else np.float64)


def _first_bad(where: str, arr: np.ndarray, bad: np.ndarray, expected: str) -> None:
    if bad.any():
        idx = tuple(np.argwhere(bad)[0])
        value = arr[idx]
        value = value.item() if isinstance(value, np.generic) else value
        raise InstanceError(f"{where}{_index_text(idx) if idx else ''}", shown(value), expected)


def as_number_array(where: str, raw: Any, *, dtype: type = float, ndim: int | None = None,
                    shape: tuple[int | None, ...] | None = None) -> np.ndarray:
    """``raw`` as a new read-only float64 (or int64, for an integer ``dtype``) array, checked.

    Raises :class:`InstanceError` naming ``where`` (and the index) for an entry that is not a
    number (booleans and strings are not), not finite, beyond :data:`MAX_MAGNITUDE` (floats) or,
    for integers, not integral or beyond :data:`INT_LIMIT`; for a wrong number of dimensions; and
    for a size that differs from a non-``None`` entry of ``shape``.

    >>> as_number_array("ids", [2**60 + 1, 2**60], dtype=np.int64).tolist()   # exact, no float detour
    [1152921504606846977, 1152921504606846976]
    >>> as_number_array("weight", [1.0, True])
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: weight[1] = True; expected a number (true / false is not one)
    >>> as_number_array("p", [[1.0, 2.0], [3.0, 1e16]])
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: p[1, 1] = 1e+16; expected a finite number of magnitude <= 1e7 ...
    """
    integer = np.issubdtype(dtype, np.integer)
    if isinstance(raw, np.ndarray) and raw.dtype.kind in "iuf":
        arr = raw
    else:
        arr = _python_numbers(where, raw, integer, ndim)
    if ndim is not None and arr.ndim != ndim:
        raise InstanceError(f"{where}.ndim", arr.ndim, f"{ndim} (shape {arr.shape})")
    if shape is not None:
        for axis, (got, want) in enumerate(zip(arr.shape, shape, strict=True)):
            if want is not None and got != want:
                raise InstanceError(f"{where}.shape[{axis}]", got, f"{want}")
    if arr.dtype.kind == "f":
        _first_bad(where, arr, ~np.isfinite(arr), "a finite number")
        if integer:
            _first_bad(where, arr, arr != np.round(arr), "an integer")
            _first_bad(where, arr, np.abs(arr) > FLOAT_INT_LIMIT,
                       "an integer (a float above 2**53 need not be the integer written: write it without "
                       "a fraction or exponent)")
    elif integer:
        huge = (arr > INT_LIMIT) if arr.dtype.kind == "u" else (arr > INT_LIMIT) | (arr < -INT_LIMIT)
        _first_bad(where, arr, huge, "an integer of magnitude <= 2**62")
    out = np.array(arr, dtype=np.int64 if integer else np.float64)  # a copy: the caller's array stays theirs
    if not integer:
        _first_bad(where, out, np.abs(out) > MAX_MAGNITUDE, f"a finite number {_MAGNITUDE_TEXT}")
    out.setflags(write=False)
    return out


INSTANCE_KINDS: dict[str, type[Instance]] = {}
"""Registered instance kinds: ``"kind"`` string -> class."""


def _index_text(idx: tuple[int | np.integer, ...], most: int | None = None) -> str:
    """``[i, j, ...]``; with ``most``, indices past the first ``most`` become ``...``."""
    shown_idx = [str(int(i)) for i in idx[:most]] + (["..."] if most is not None and len(idx) > most else [])
    return "[" + ", ".join(shown_idx) + "]"


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
        """Convert field ``name`` to a read-only array of ``dtype`` with the given shape (:func:`as_number_array`).

        ``shape`` entries of ``None`` are free; a mismatch names the axis and both sizes.
        """
        arr = as_number_array(name, getattr(self, name), dtype=dtype, ndim=ndim, shape=shape)
        object.__setattr__(self, name, arr)
        return arr

    def _int(self, name: str, **kwargs) -> int:
        """Check field ``name`` with :func:`check_int` (same keywords) and store the Python int."""
        value = check_int(name, getattr(self, name), **kwargs)
        object.__setattr__(self, name, value)
        return value

    def _number(self, name: str, **kwargs) -> float:
        """Check field ``name`` with :func:`check_number` (same keywords) and store the float."""
        value = check_number(name, getattr(self, name), **kwargs)
        object.__setattr__(self, name, value)
        return value

    def _names(self, name: str, **kwargs) -> tuple[str, ...]:
        """Check field ``name`` with :func:`check_names` and store the tuple."""
        value = check_names(name, getattr(self, name), **kwargs)
        object.__setattr__(self, name, value)
        return value

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
        """Inverse of :meth:`to_dict`; checks kind, schema version and field names.

        Lists become tuples; values nested deeper than :data:`MAX_DEPTH` are rejected.
        """
        if not isinstance(data, Mapping):
            raise InstanceError(cls.kind or "instance", shown(data), "a mapping of field names to values")
        data = dict(data)
        kind = data.pop("kind", None)
        if not isinstance(kind, str) or kind != cls.kind:
            raise InstanceError("kind", shown(kind), repr(cls.kind))
        version = data.pop("schema_version", None)
        if isinstance(version, bool) or not isinstance(version, int | float) or version != cls.schema_version:
            raise InstanceError(
                "schema_version", shown(version), f"{cls.schema_version} for kind {cls.kind!r}"
            )
        names = [f.name for f in dataclasses.fields(cls) if f.init]
        unknown = sorted(set(data) - set(names), key=str)
        if unknown:
            raise InstanceError(str(unknown[0]), shown(data[unknown[0]]), f"one of the fields {names}")
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
        return cls(**{k: _from_plain(v, k) for k, v in data.items()})

    @classmethod
    def from_json(cls, text: str) -> Instance:
        """Parse JSON text written by :meth:`to_json`."""
        return cls.from_dict(_parse_json(text))

    def to_json(self, path: str | Path | None = None, *, indent: int | None = 1) -> str:
        """JSON text of :meth:`to_dict`; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent)
        if path is not None:
            write_text_atomic(path, text + "\n")
        return text

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # instances hold arrays; compare, do not hash (mypy: not a method)


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


def _from_plain(value: Any, where: str, index: tuple[int, ...] = (), depth: int = 0, *,
                convert: bool = True) -> Any:
    """JSON value -> field value: lists become tuples (inside mappings they stay lists).

    Raises :class:`InstanceError` at the first list or mapping nested deeper than :data:`MAX_DEPTH`
    (a deeper one would exhaust Python's or numpy's recursion later).
    """
    if isinstance(value, list | tuple | Mapping):
        here = f"{where}{_index_text(index, 8) if index else ''}"
        if depth >= MAX_DEPTH:
            raise InstanceError(here, shown(value), f"lists and objects nested at most {MAX_DEPTH} deep")
        if isinstance(value, Mapping):
            for k, v in value.items():
                _from_plain(v, f"{here}.{k}", (), depth + 1, convert=False)
            return value
        types = set(map(type, value))
        if not any(issubclass(t, list | tuple | Mapping) for t in types):  # a leaf list: no recursion
            return tuple(value) if convert else value
        items = [_from_plain(v, where, (*index, i), depth + 1, convert=convert) for i, v in enumerate(value)]
        return tuple(items) if convert else value
    return value


#: A run of more digits than any integer literal of a field may have: a file without one has no huge literal.
_LONG_DIGITS = re.compile(rf"\d{{{_MAX_LITERAL_DIGITS + 1}}}")


def _parse_int(text: str) -> int | _HugeInt:
    digits = len(text) - text.startswith("-")
    return int(text) if digits <= _MAX_LITERAL_DIGITS else _HugeInt(f"<an integer of {digits} digits>")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InstanceError(key, shown(value), "the key once in its JSON object (a repeat would silently "
                                "replace the first)")
        out[key] = value
    return out


def _parse_json(text: str) -> Any:
    """``json.loads`` that rejects repeated keys, keeps huge integer literals out of Python's int
    parser and reports too deep nesting as :class:`InstanceError` (``json.JSONDecodeError`` passes).
    """
    try:
        if _LONG_DIGITS.search(text) is None:  # no literal can be huge: Python's own int parsing, as fast as C
            return json.loads(text, object_pairs_hook=_unique_keys)
        return json.loads(text, parse_int=_parse_int, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise InstanceError(_deep_place(text), _Text("<deeper than Python's parser goes>"),
                            f"lists and objects nested at most {MAX_DEPTH} deep") from None


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]')


def _deep_place(text: str) -> str:
    """Where JSON ``text`` first nests deeper than :data:`MAX_DEPTH`: ``field[i, j, ...]``."""
    frames: list[list[Any]] = []  # per open container: [bracket, key or index, expecting a key]
    for match in _TOKEN.finditer(text):
        tok = match.group()
        top = frames[-1] if frames else None
        if tok[0] == '"':
            if top is not None and top[0] == "{" and top[2]:
                top[1], top[2] = tok[1:-1], False
        elif tok in "[{":
            frames.append([tok, 0 if tok == "[" else None, tok == "{"])
            if len(frames) > MAX_DEPTH:
                break
        elif tok in "]}":
            if frames:
                frames.pop()
        elif tok == "," and top is not None:
            if top[0] == "[":
                top[1] += 1
            else:
                top[2] = True
    where = ""
    index: list[int] = []
    for bracket, key, _ in frames[:-1]:
        if bracket == "{":
            if index:
                where += _index_text(tuple(index), 8)
                index = []
            where += f".{key}" if where else str(key)
        else:
            index.append(key)
    if index:
        where += _index_text(tuple(index), 8)
    return where or "instance"


#: Largest instance or trace file read (bytes): 1 GiB.  The largest files the package writes or
#: reads are tens of MB (a 2000-coflow instance is 13 MB, the public coflow and GPU traces a few MB),
#: and a JSON or trace file takes 3.4 to 4.4 times its size in memory once parsed (measured on a broker
#: and a coflow instance), so a 1 GiB file already needs some 4.5 GB: a larger one is refused at once
#: rather than after minutes of reading, or a ``MemoryError``.
MAX_FILE_BYTES = 2**30

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def open_regular_file(path: str | Path, *, where: str, limit: int = MAX_FILE_BYTES,
                      why: str = "MAX_FILE_BYTES = 2**30") -> BinaryIO:
    """``path`` open for binary reading, when it is a regular file (a link to one is followed) of at
    most ``limit`` bytes; else :class:`InstanceError` naming ``where``, the path and what it is.

    Nothing is read from anything else: the file is opened with ``O_NONBLOCK`` (opening a FIFO for
    reading would otherwise wait for a writer, for ever) and what it is comes from ``fstat`` of the
    open file, so no other file can take its place between the check and the read.  A FIFO, a
    socket, a device (``/dev/zero`` never ends) or a folder is refused, and so is a file larger than
    ``limit`` (``why`` names the limit in the message), before a byte is read.

    Raises
    ------
    FileNotFoundError
        No such file (each caller words it).
    InstanceError
        Not a regular file, larger than ``limit``, or not readable (permission, a loop of links).

    Examples
    --------
    >>> open_regular_file("/dev/null", where="instance file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    clusteropt.instances.base.InstanceError: instance file = '/dev/null'; expected a regular file, not a char...
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:  # no permission, a socket (ENXIO), a loop of links
        raise InstanceError(where, str(path), f"a readable file ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "a special file")
            raise InstanceError(where, str(path), f"a regular file, not {kind}")
        if info.st_size > limit:
            raise InstanceError(where, str(path),
                                f"a file of at most {limit} bytes ({why}); it has {info.st_size}")
        return open(fd, "rb")  # builtin open of the descriptor: the caller closes it
    except BaseException:
        os.close(fd)
        raise


def read_regular_file(path: str | Path, *, where: str, limit: int = MAX_FILE_BYTES,
                      why: str = "MAX_FILE_BYTES = 2**30") -> bytes:
    """The bytes of the regular file ``path``, refused as :func:`open_regular_file` refuses it.

    The file is read in one call of its size; a file that grows while it is read, or one whose size
    the system does not report (``/proc``), is read on to at most ``limit + 1`` bytes and refused
    at the limit too.
    """
    with open_regular_file(path, where=where, limit=limit, why=why) as fh:
        size = os.fstat(fh.fileno()).st_size
        parts = [fh.read(size + 1)]  # no more memory than the file needs (read(limit) would take a GiB)
        total = len(parts[0])
        while size < total <= limit:
            more = fh.read(min(2**20, limit + 1 - total))
            if not more:
                break
            parts.append(more)
            total += len(more)
    data = b"".join(parts)
    if len(data) > limit:
        raise InstanceError(where, str(path), f"a file of at most {limit} bytes ({why}); it has more")
    return data


def load_instance(path: str | Path) -> Instance:
    """Read an instance file of any registered kind.

    Raises
    ------
    InstanceError
        The file is not UTF-8 JSON, repeats a key in an object, nests deeper than
        :data:`MAX_DEPTH`, has no / an unknown ``kind``, or a field is bad (the message names
        the field and index), or cannot be read (a folder, no permission), or is no regular file
        (a FIFO, a device: refused before anything is read from it) or larger than
        :data:`MAX_FILE_BYTES` (:func:`read_regular_file`).  Nothing else.
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
    raw = read_regular_file(path, where="instance file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstanceError(f"{path}: byte {exc.start}", raw[exc.start : exc.start + 1],
                            "a UTF-8 JSON instance file") from None
    try:
        data = _parse_json(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(
            f"{path}:{exc.lineno}", exc.msg, "a JSON instance file (see instances/)"
        ) from None
    if not isinstance(data, dict) or "kind" not in data:
        raise InstanceError(f"{path}: kind", None, "a top-level object with a 'kind' field")
    cls = INSTANCE_KINDS.get(data["kind"]) if isinstance(data["kind"], str) else None
    if cls is None:
        raise InstanceError(f"{path}: kind", shown(data["kind"]), f"one of {sorted(INSTANCE_KINDS)}")
    read_file = getattr(cls, "read_file", None)  # kinds with files beside the JSON (ring: .npy requests)
    return read_file(data, path) if read_file is not None else cls.from_dict(data)
