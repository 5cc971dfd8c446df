"""Readers refuse what is not a plain file, or is larger than it may be, before reading it (issue 42).

The reviewer's cases: a FIFO in place of a ring instance's ``.npy`` requests hung for ever, a link
to ``/dev/zero`` exhausted memory, a 6 GB sparse file took 89 s before the error.  Every reader
(``load_instance``, the ring ``.npy`` reference, the trace and price readers) now refuses a FIFO,
a device and an oversized file unread, with an ``InstanceError`` naming the file; the ring reader
also checks the ``.npy`` header against the instance's declared count, and the file's size against
the header, before it reads the data.

A reader that still blocked on a FIFO is released after a while (the test's writer end opens and
closes), so a regression fails on its message instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from clusteropt.cli import main
from clusteropt.instances import InstanceError, RingInstance, load_instance
from clusteropt.instances.base import MAX_FILE_BYTES, read_regular_file
from clusteropt.instances.ring import MAX_REQUESTS
from tests.instances.test_fuzz_readers import READERS

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                                reason="needs FIFOs and /dev/zero")


def error_of(read, path: Path) -> BaseException | None:
    """What ``read(path)`` raises (None if it returns).  A reader blocked on a FIFO is given the end
    of the pipe after 20 s, so it returns (then fails on what it read) rather than hangs."""
    box: list[BaseException | None] = []

    def target():
        try:
            read(path)
        except BaseException as exc:  # the test inspects whatever it is
            box.append(exc)
        else:
            box.append(None)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive() and path.is_fifo():
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # a writer that closes: the reader sees the end
        thread.join(20)
    assert box, f"{read} is still reading {path}"
    return box[0]


def special(kind: str, path: Path) -> Path:
    """``path`` made a FIFO, a link to /dev/zero, or a sparse file just over MAX_FILE_BYTES."""
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        with path.open("wb") as fh:
            fh.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    return path


SPECIAL = {"fifo": "not a FIFO", "dev-zero": "not a character device",
           "huge": "a file of at most 1073741824 bytes"}


# -- ring instances: the .npy requests ----------------------------------------------------------------


def ring_files(tmp_path: Path, T: int = 30) -> tuple[Path, Path]:
    inst = RingInstance(n=12, servers=3, requests=np.arange(T) % 12)
    path = tmp_path / "ring.json"
    inst.to_json(path, binary=True)
    return path, tmp_path / "ring.requests.npy"


def edit_ref(path: Path, **fields) -> None:
    data = json.loads(path.read_text())
    data["requests"].update(fields)
    data["requests"] = {k: v for k, v in data["requests"].items() if v is not None}
    path.write_text(json.dumps(data))


def header(shape, descr: str = "<i8", version=(1, 0)) -> bytes:
    import io

    buf = io.BytesIO()
    d = {"descr": descr, "fortran_order": False, "shape": shape}
    (np.lib.format.write_array_header_1_0 if version == (1, 0) else np.lib.format.write_array_header_2_0)(buf, d)
    return buf.getvalue()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_fifo_or_device_as_npy_is_refused_unread(tmp_path, kind):
    path, npy = ring_files(tmp_path)
    special(kind, npy)
    exc = error_of(load_instance, path)
    assert isinstance(exc, InstanceError), repr(exc)
    assert str(exc) == f"requests.npy = '{npy}'; expected a regular file, {SPECIAL[kind]}" + (
        " (named pipe)" if kind == "fifo" else "")


def test_a_sparse_six_gigabyte_npy_is_refused_by_the_declared_count(tmp_path):
    path, npy = ring_files(tmp_path)
    with npy.open("r+b") as fh:
        fh.truncate(6 * 2**30)  # the header is intact; sparse, so no disk is used
    with pytest.raises(InstanceError) as info:
        load_instance(path)
    limit = 8 + 4 + 10_000 + 8 * 30
    assert str(info.value) == (f"requests.npy = '{npy}'; expected a file of at most {limit} bytes "
                               f"(requests.count = 30 int64 requests and a .npy header); it has {6 * 2**30}")


@pytest.mark.parametrize(("damage", "match"), [
    # the header promises far more than the JSON declares
    (lambda npy: npy.write_bytes(header((10**9,)) + bytes(240)),
     r"^requests.count = 30; expected the 1000000000 entries of .*ring.requests.npy$"),
    # the header agrees with the count but the file is cut or padded
    (lambda npy: npy.write_bytes(npy.read_bytes()[:-8]),
     r"^requests.npy = .*; expected 368 bytes: a 128-byte header and 30 entries of 8 bytes \(int64\); the file "
     r"has 360 \(truncated or padded\)$"),
    (lambda npy: npy.write_bytes(npy.read_bytes() + b"\0" * 8), r"; the file has 376 \(truncated or padded\)$"),
    # nothing but integers, and nothing unpickled whatever the header says
    (lambda npy: npy.write_bytes(header((30,), "|O") + bytes(240)),
     r"^requests.npy dtype = 'object'; expected an integer dtype$"),
    (lambda npy: npy.write_bytes(header((30, 1)) + bytes(240)),
     r"^requests.npy shape = \(30, 1\); expected a 1-d"),
    (lambda npy: npy.write_bytes(header((30,), version=(2, 0)).replace(b"\x02\x00", b"\x03\x00", 1) + bytes(240)),
     r"expected a NumPy .npy file of integers \(format version 3.0; this reader takes 1.0 and 2.0"),
])
def test_the_header_is_checked_against_the_count_and_the_size(tmp_path, damage, match):
    path, npy = ring_files(tmp_path)
    edit_ref(path, sha256=None)
    damage(npy)
    with pytest.raises(InstanceError, match=match):
        load_instance(path)


def test_a_format_2_header_of_the_declared_count_is_read(tmp_path):
    path, npy = ring_files(tmp_path)
    edit_ref(path, sha256=None)
    npy.write_bytes(header((30,), "<i4", version=(2, 0)) + (np.arange(30) % 12).astype("<i4").tobytes())
    assert load_instance(path).requests.tolist() == (np.arange(30) % 12).tolist()


def test_a_count_beyond_max_requests_is_refused_before_the_file_is_opened(tmp_path):
    path, npy = ring_files(tmp_path)
    edit_ref(path, count=MAX_REQUESTS + 1)
    special("fifo", npy)  # it would block if it were opened
    exc = error_of(load_instance, path)
    assert str(exc) == ("requests.count = 100000001; expected a number of requests in 0..100000000 "
                        "(MAX_REQUESTS = 10**8)")


def test_the_cli_refuses_a_fifo_npy_with_one_line(tmp_path, capsys):
    path, npy = ring_files(tmp_path)
    special("fifo", npy)

    def run(p: Path):
        raise SystemExit(main(["run", str(p)]))

    done = error_of(run, path)
    _, err = capsys.readouterr()
    assert isinstance(done, SystemExit) and done.code == 2, err
    assert err.strip().splitlines() == [f"error: {path}: requests.npy = '{npy}'; expected a regular file, not a "
                                        "FIFO (named pipe)"]


# -- instance JSON and the trace readers ---------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(SPECIAL))
@pytest.mark.parametrize("reader", ["load_instance", *sorted(READERS)])
def test_readers_refuse_fifos_devices_and_oversized_files(tmp_path, reader, kind):
    read = load_instance if reader == "load_instance" else READERS[reader][1]
    path = special(kind, tmp_path / "input.txt")
    exc = error_of(read, path)
    assert isinstance(exc, InstanceError), repr(exc)
    where = "instance file" if reader == "load_instance" else "trace file"
    assert str(exc).startswith(f"{where} = '{path}'; expected ") and SPECIAL[kind] in str(exc), str(exc)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="no /proc here")
def test_a_file_whose_size_is_not_reported_is_read_up_to_the_limit():
    # /proc files are regular files of size 0: read on to the limit, never past it
    assert read_regular_file("/proc/self/status", where="x").startswith(b"Name:")
    with pytest.raises(InstanceError, match=r"^x = '/proc/self/status'; expected a file of at most 10 bytes \(a "
                                            r"cap\); it has more$"):
        read_regular_file("/proc/self/status", where="x", limit=10, why="a cap")
