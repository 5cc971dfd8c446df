"""Fuzzing the trace and price-file readers with hostile files (issue 18, item 5).

Each reader gets valid files mutated by hypothesis: a token replaced by a hostile value (huge
integers, ``1e300``, ``-1``, ``nan``, ``inf``, empty, letters, a 200 KB field), the file truncated
at a byte, random bytes (often invalid UTF-8) inserted, a byte-order mark added, a line duplicated
or dropped; up to three mutations at once.  The contract, for any content:

* either the reader returns a valid instance (table, matrix) of its type,
* or it raises one :class:`~clusteropt.instances.readers.TraceError` whose message starts
  with ``<file>:<line>:``, is one line, and is not huge;

never another exception type (``MemoryError``, ``OverflowError``, ``UnicodeDecodeError``,
``_csv.Error``, a bare ``ValueError``), and never a warning.  A valid file with a byte-order mark
reads exactly as without it.

``make test`` runs a short derandomized profile; the ``slow`` one runs many more examples.
"""

from __future__ import annotations

import codecs
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusteropt.data import sample_path
from clusteropt.instances.broker import BrokerPrices, read_prices_csv, read_transfer_costs_csv
from clusteropt.instances.coflow.instance import CoflowInstance
from clusteropt.instances.coflow.trace import TraceError, read_coflow_benchmark
from clusteropt.instances.gadget.instance import GadgetInstance, fat_tree_cluster
from clusteropt.instances.gadget.trace import read_alibaba_jobs, read_philly_jobs

DATA = Path(__file__).resolve().parents[1] / "data"
CLUSTER = fat_tree_cluster(6, n_racks=2, seed=0)

PRICES = "dc,resource,a,b,threshold\n0,gpu,3,2,4\n0,cpu,1,0.5,10\n1,gpu,4,3,2\n1,cpu,2,1,6\n"
TRANSFER = "# unit transfer cost\n0,0.1,0.3\n0.2,0,0.5\n0.4,0.6,0\n"


def _prices(path: Path) -> BrokerPrices:
    out = read_prices_csv(path)
    assert isinstance(out, BrokerPrices)
    assert out.a.shape == out.b.shape == out.threshold.shape == (out.n_dcs, len(out.resources))
    assert np.isfinite(out.a).all() and (out.b < out.a).all()
    return out


def _transfer(path: Path) -> np.ndarray:
    out = read_transfer_costs_csv(path)
    assert out.ndim == 2 and out.shape[0] == out.shape[1] >= 1
    assert np.isfinite(out).all() and (out >= 0).all() and (np.diag(out) == 0).all()
    return out


PHILLY = (DATA / "philly_sample.csv").read_text()
ALIBABA = (DATA / "alibaba_sample.csv").read_text()

#: reader name -> (valid file text, read function, type of a successful result)
READERS = {
    "coflow": (sample_path("coflow/small_benchmark.txt").read_text(), read_coflow_benchmark, CoflowInstance),
    "philly": (PHILLY, lambda p: read_philly_jobs(p, cluster=CLUSTER, seed=0), GadgetInstance),
    "alibaba": (ALIBABA, lambda p: read_alibaba_jobs(p, cluster=CLUSTER, seed=0), GadgetInstance),
    # with an explicit horizon (later jobs dropped, whatever their time) and max_jobs
    "philly-horizon": (PHILLY, lambda p: read_philly_jobs(p, cluster=CLUSTER, horizon=20, max_jobs=6, seed=0),
                       GadgetInstance),
    "alibaba-horizon": (ALIBABA, lambda p: read_alibaba_jobs(p, cluster=CLUSTER, horizon=5, seed=0),
                        GadgetInstance),
    "prices": (PRICES, _prices, BrokerPrices),
    "transfer": (TRANSFER, _transfer, np.ndarray),
}

HOSTILE = (
    "1000000000000", "100000000000000000000000", "9" * 30, "-9" * 30, "1e20", "1e300", "1e400", "-1e300",
    "1e-320", "-1", "-0", "+5", "0", "2.5", "nan", "NaN", "inf", "-inf", "", " ", "abc", "x" * 200_000,
    "9" * 200_000, "0x10", "1_000", "\u0661\u0662", "\u00a0", '"', "'", "\ufeff", ":", "::", ",", ",,",
    "4:1e300", "0:-1", "1:nan", "5:" + "9" * 400,
)
_TOKEN = re.compile(rb"[^\s,:]+")


@st.composite
def mutations(draw, text: str) -> tuple[bytes, list[str]]:
    """A mutated file (bytes) and the list of mutations applied, for the failure report."""
    data = text.encode()
    done = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["token", "token", "token", "truncate", "insert", "bom", "duplicate", "drop"]))
        if kind == "token":
            tokens = list(_TOKEN.finditer(data))
            if not tokens:
                continue
            m = tokens[draw(st.integers(0, len(tokens) - 1))]
            value = draw(st.sampled_from(HOSTILE)).encode()
            data = data[: m.start()] + value + data[m.end() :]
            done.append(f"token {m.group()[:20]!r} -> {value[:20]!r}")
        elif kind == "truncate":
            at = draw(st.integers(0, len(data)))
            data = data[:at]
            done.append(f"truncate at {at}")
        elif kind == "insert":
            at = draw(st.integers(0, len(data)))
            junk = draw(st.one_of(st.binary(min_size=1, max_size=8),
                                  st.sampled_from([b"\xff", b"\xc3", b"\xe2\x82", b"\x00", b"\r", b"\n", b"\x1c",
                                                   b"\x0c", b"\xef\xbb\xbf", b'"', b"\xed\xa0\x80"])))
            data = data[:at] + junk + data[at:]
            done.append(f"insert {junk!r} at {at}")
        elif kind == "bom":
            data = codecs.BOM_UTF8 + data
            done.append("bom")
        else:
            lines = data.splitlines(keepends=True)
            if not lines:
                continue
            k = draw(st.integers(0, len(lines) - 1))
            lines[k : k + 1] = [lines[k], lines[k]] if kind == "duplicate" else []
            data = b"".join(lines)
            done.append(f"{kind} line {k + 1}")
    return data, done


def check_contract(tmp_path: Path, name: str, data: bytes, done: list[str]) -> None:
    """The reader ``name`` on ``data``: a valid result or one TraceError at ``<file>:<line>:``."""
    _, read, kind = READERS[name]
    path = tmp_path / f"{name}.txt"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from an overflow either
        try:
            out = read(path)
        except TraceError as exc:
            message = str(exc)
            assert re.match(rf"{re.escape(str(path))}:[1-9][0-9]*: ", message), (done, message)
            assert exc.path == str(path) and exc.lineno >= 1, (done, message)
            assert "\n" not in message and len(message) < 2000, (done, message[:300])
            return
        except Exception as exc:  # the contract: nothing else, whatever the content
            raise AssertionError(f"{name} {done}: {type(exc).__name__}: {str(exc)[:300]}") from exc
    assert isinstance(out, kind), (done, type(out))


def reads_alike(a, b) -> bool:
    if isinstance(a, BrokerPrices):
        return a.resources == b.resources and all(np.array_equal(getattr(a, f), getattr(b, f))
                                                  for f in ("a", "b", "threshold"))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


@pytest.mark.parametrize("name", sorted(READERS))
def test_valid_files_read_and_a_bom_changes_nothing(tmp_path, name):
    text, read, kind = READERS[name]
    (tmp_path / "bom").mkdir()
    plain, bom = tmp_path / "trace.txt", tmp_path / "bom" / "trace.txt"  # one stem: it names GADGET instances
    plain.write_bytes(text.encode())
    bom.write_bytes(codecs.BOM_UTF8 + text.encode())
    a, b = read(plain), read(bom)
    assert isinstance(a, kind) and reads_alike(a, b)


FUZZ = dict(deadline=None, database=None, derandomize=True,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                   HealthCheck.data_too_large])


@pytest.mark.parametrize("name", sorted(READERS))
@settings(max_examples=100, **FUZZ)
@given(data=st.data())
def test_hostile_files_give_an_instance_or_one_trace_error(tmp_path, name, data):
    mutated, done = data.draw(mutations(READERS[name][0]), label="mutated file")
    check_contract(tmp_path, name, mutated, done)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(READERS))
@settings(max_examples=2000, **FUZZ)
@given(data=st.data())
def test_hostile_files_long(tmp_path, name, data):
    mutated, done = data.draw(mutations(READERS[name][0]), label="mutated file")
    check_contract(tmp_path, name, mutated, done)
