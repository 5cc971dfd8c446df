"""The mlBroker price and transfer-cost CSV readers on hostile files (issue 18, item 5).

Each bad file gives one :class:`~clusteropt.instances.readers.TraceError` whose message starts
with ``<file>:<line>:``, never a ``MemoryError``, ``ValueError`` from numpy, ``_csv.Error`` or
``UnicodeDecodeError``.  (The readers' ordinary checks are in ``test_broker.py``; the random
mutations in ``test_fuzz_readers.py``.)
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from clusteropt.instances.broker import MAX_DCS, read_prices_csv, read_transfer_costs_csv
from clusteropt.instances.coflow.trace import TraceError

HEAD = "dc,resource,a,b,threshold\n"
PRICES = HEAD + "0,gpu,3,2,4\n0,cpu,1,0.5,10\n1,gpu,4,3,2\n1,cpu,2,1,6\n"


def raises_at(path: Path, lineno: int, pattern: str, reader) -> TraceError:
    with pytest.raises(TraceError, match=pattern) as info:
        reader(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{lineno}: "), message
    assert (info.value.path, info.value.lineno) == (str(path), lineno)
    assert "\n" not in message and len(message) < 500, message[:300]
    return info.value


def write(tmp_path: Path, data: str | bytes, name: str = "prices.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.parametrize("dc", ["1000000000000", "1e300", "1000000", "9" * 30])
def test_dc_index_is_range_checked_before_allocating(tmp_path, dc):
    # 10**12 was a MemoryError (a 21.8 TiB table), 1e300 numpy's "Maximum allowed dimension exceeded"
    raises_at(write(tmp_path, HEAD + f"0,gpu,2,1,1\n{dc},gpu,2,1,1\n"), 3,
              r"dc = '.*'; expected a whole number in \[0, 999999\] \(MAX_DCS = 10\*\*6 data centers\)",
              read_prices_csv)
    assert MAX_DCS == 10**6


def test_missing_pair_is_reported_before_allocating_the_table(tmp_path):
    path = write(tmp_path, HEAD + "999999,gpu,2,1,1\n")  # the largest dc allowed, every other one missing
    tracemalloc.start()
    try:
        with pytest.raises(TraceError, match=r"prices\.csv:2: dc, resource = '0, gpu'; expected a row for every "
                                             r"dc 0 \.\. 999999"):
            read_prices_csv(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20  # the (3, 10**6, 1) table would be 24 MB


def test_largest_dc_reads(tmp_path):
    rows = "".join(f"{r},gpu,2,1,1\n" for r in range(3))
    assert read_prices_csv(write(tmp_path, HEAD + rows)).n_dcs == 3


@pytest.mark.parametrize("reader, text, lineno", [
    (read_prices_csv, HEAD + "0,gpu,2,1," + "1" * 200_000 + "\n", 2),
    (read_prices_csv, HEAD + "0,gpu,2,1,1\n0," + "g" * 200_000 + ",2,1,1\n", 3),
    (read_transfer_costs_csv, "0,1\n" + "1" * 200_000 + ",0\n", 2),
])
def test_field_over_the_csv_limit_names_the_line(tmp_path, reader, text, lineno):
    # was a bare _csv.Error: field larger than field limit (131072)
    raises_at(write(tmp_path, text), lineno, r"CSV record = 'field larger than field limit \(131072\)'; "
                                             "expected well-formed CSV", reader)


@pytest.mark.parametrize("reader, data, lineno, pos", [
    (read_prices_csv, HEAD.encode() + b"0,gpu\xff,2,1,1\n", 2, 31),
    (read_prices_csv, b"\xef\xbb\xbf" + HEAD.encode() + b"0,gpu,2,1,1\r\n0,cpu,2,1,\xc3\r\n", 3, 52),  # with BOM
    (read_transfer_costs_csv, b"# \xe9\n0,1\n1,0\n", 1, 2),
    (read_transfer_costs_csv, b"0,1\r1,0\x80\r", 2, 7),
])
def test_invalid_utf8_names_byte_and_line(tmp_path, reader, data, lineno, pos):
    # was a UnicodeDecodeError without the file name
    raises_at(write(tmp_path, data), lineno, rf"byte {pos} = b'\\x{data[pos]:02x}'; expected UTF-8 text", reader)


def test_utf8_bom_is_accepted(tmp_path):
    plain = read_prices_csv(write(tmp_path, PRICES))
    bom = read_prices_csv(write(tmp_path, b"\xef\xbb\xbf" + PRICES.encode(), "bom.csv"))
    assert bom.resources == plain.resources and np.array_equal(bom.a, plain.a)
    d = read_transfer_costs_csv(write(tmp_path, b"\xef\xbb\xbf0,1\n1,0\n", "d.csv"))
    assert d.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_many_resource_names_give_a_short_message(tmp_path):
    rows = "".join(f"0,r{k},2,1,1\n" for k in range(50)) + "1,r0,2,1,1\n"
    pattern = r"dc, resource = '1, r1'; expected a row for every dc 0 \.\. 1 and resource \(50 named\)"
    err = raises_at(write(tmp_path, HEAD + rows), 52, pattern, read_prices_csv)
    assert len(str(err)) < 300


def test_many_repeated_header_columns_give_a_short_message(tmp_path):
    head = ",".join([f"c{k}" for k in range(50)] * 2) + ",dc,resource,a,b,threshold\n"
    raises_at(write(tmp_path, head + "0,gpu,2,1,1\n"), 1,
              r"distinct column names \(c0, c1, c10, .*c17, \.\.\. repeated\)", read_prices_csv)
