"""Paper 004 ring instances: validation names field and index, JSON and ``.npy`` files, generators.

* every bad field raises ``InstanceError`` naming the field, the index and what was expected;
* JSON round trips inline (text and file) and with the requests in a ``.npy`` file beside the
  JSON (``load_instance`` and ``RingInstance.read``); a changed, missing or foreign ``.npy`` file
  is an ``InstanceError``;
* each generator pattern is reproducible from its seed, differs across seeds, records every
  parameter in ``generated_by`` (enough to re-create it) and has the shape its name promises.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from clusteropt.instances import InstanceError, RingInstance, load_instance, random_ring, random_worker_placement
from clusteropt.instances.ring import INLINE_REQUESTS, PATTERNS, contiguous_assignment


def best_arc_share(requests: np.ndarray, n: int, width: int) -> tuple[float, int]:
    """Largest share of ``requests`` on ``width`` consecutive edges (wrapping), and that arc's start."""
    counts = np.bincount(requests, minlength=n)
    window = np.array([counts[(s + np.arange(width)) % n].sum() for s in range(n)])
    return float(window.max() / max(requests.size, 1)), int(window.argmax())


# -- construction and validation -------------------------------------------------------------------


def test_defaults_and_derived_fields():
    inst = RingInstance(n=12, servers=3, requests=[0, 11, 11, 4])
    assert (inst.k, inst.n_requests, inst.alpha, inst.name, inst.generated_by) == (4, 4, 1.0, "", None)
    assert inst.initial.tolist() == contiguous_assignment(12, 3).tolist() == [0] * 4 + [1] * 4 + [2] * 4
    assert inst.requests.dtype == np.int64 and inst.initial.dtype == np.int64
    assert inst.request_counts().tolist() == [1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2]
    assert inst.request_counts(1, 3).tolist()[11] == 2 and inst.request_counts(1, 3).sum() == 2
    with pytest.raises(ValueError):
        inst.requests[0] = 3  # read-only
    with pytest.raises(dataclasses.FrozenInstanceError):
        inst.n = 4  # type: ignore[misc]
    src = np.array([1, 2, 3])
    copy = RingInstance(n=4, servers=2, requests=src)
    src[0] = 0  # the instance keeps its own copy
    assert copy.requests.tolist() == [1, 2, 3]
    assert RingInstance(n=4, servers=2, requests=np.array([0.0, 3.0])).requests.tolist() == [0, 3]
    assert RingInstance(n=4, servers=2, requests=[]).n_requests == 0
    assert RingInstance(n=4.0, servers=2, requests=[1], alpha=0).alpha == 0.0


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"requests": [0, 8]}, r"^requests\[1\] = 8; expected an edge id in 0..7$"),
    ({"requests": [3, 2, -1]}, r"^requests\[2\] = -1; expected an edge id in 0..7$"),
    ({"requests": [0, 1.5]}, r"^requests\[1\] = 1.5; expected an integer$"),
    ({"requests": [0, float("nan")]}, r"^requests\[1\] = nan; expected a finite number$"),
    ({"requests": np.array([2, 1.5], dtype=object)}, r"^requests\[1\] = 1.5; expected an integer$"),
    ({"requests": [1, None]}, r"^requests\[1\] = None; expected a number$"),
    ({"requests": ["3"]}, r"^requests\[0\] = '3'; expected a number \(not a string\)$"),
    ({"requests": [[1, 2]]}, r"^requests.ndim = 2; expected 1 \(shape \(1, 2\)\)$"),
    ({"requests": [[1], [1, 2]]}, r"^requests\[0\] = \[1\]; expected a number \(the array has 1 dimension\)$"),
    ({"requests": [True, False]}, r"^requests\[0\] = True; expected a number \(true / false is not one\)$"),
    ({"requests": [0, True]}, r"^requests\[1\] = True; expected a number \(true / false is not one\)$"),
    ({"requests": [0, 2**60 + 1, 2.0]}, r"^requests\[1\] = 1152921504606846977; expected an edge id in 0..7$"),
    ({"n": 2**24 + 2, "servers": 2}, r"^n = 16777218; expected at most 16777216 processes \(2\*\*24\)$"),
    ({"n": 1e300}, r"^n = 1e\+300; expected an integer \(a float above 2\*\*53"),
    ({"n": 2**63}, r"^n = 9223372036854775808; expected an integer of magnitude <= 2\*\*62$"),
    ({"n": 9}, r"^n = 9; expected a multiple of servers = 2"),
    ({"n": 1, "servers": 1}, r"^n = 1; expected >= 2$"),
    ({"n": 8.5}, r"^n = 8.5; expected an integer$"),
    ({"servers": 0}, r"^servers = 0; expected an integer in 1..8$"),
    ({"servers": 16}, r"^servers = 16; expected an integer in 1..8$"),
    ({"servers": True}, r"^servers = True; expected an integer$"),
    ({"initial": [0, 0, 0, 0, 0, 1, 1, 1]},
     r"^initial\[4\] = 0; expected a server with room: server 0 holds 5 processes, capacity k = 4$"),
    ({"initial": [1, 0, 1, 1, 0, 1, 1, 0]}, r"^initial\[6\] = 1; expected a server with room: server 1 holds 5"),
    ({"initial": [0, 0, 2, 0, 1, 1, 1, 1]}, r"^initial\[2\] = 2; expected a server id in 0..1$"),
    ({"initial": [0, 0, 0, 0, 1, 1, 1]}, r"^initial.shape\[0\] = 7; expected n = 8"),
    ({"initial": [0, 0, 0, 0, 1, 1, 1, 1, 1]}, r"^initial.shape\[0\] = 9; expected n = 8"),
    ({"initial": [0, 0, 0.5, 0, 1, 1, 1, 1]}, r"^initial\[2\] = 0.5; expected an integer$"),
    ({"alpha": -1}, r"^alpha = -1; expected a finite number >= 0$"),
    ({"alpha": float("nan")}, r"^alpha = nan; expected a finite number >= 0$"),
    ({"alpha": float("inf")}, r"^alpha = inf; expected a finite number >= 0$"),
    ({"alpha": "2"}, r"^alpha = '2'; expected a finite number >= 0$"),
    ({"alpha": None}, r"^alpha = None; expected a finite number >= 0$"),
    ({"alpha": 10**400}, r"^alpha = <an integer of 401 digits>; expected a finite number >= 0$"),
    ({"alpha": True}, r"^alpha = True"),
    ({"name": 3}, r"^name = 3; expected a string$"),
    ({"generated_by": [1]}, r"^generated_by = \[1\]; expected a mapping"),
    ({"generated_by": {"f": object()}}, r"^generated_by = .*; expected JSON values"),
    ({"generated_by": {"f": float("nan")}}, r"^generated_by = \{'f': nan\}; expected JSON values"),
])
def test_bad_fields_are_named(kwargs, match):
    args = {"n": 8, "servers": 2, "requests": [0, 3, 7], **kwargs}
    with pytest.raises(InstanceError, match=match) as info:
        RingInstance(**args)
    assert isinstance(info.value, ValueError)


# -- files -----------------------------------------------------------------------------------------


def some_instance(T: int = 30) -> RingInstance:
    rng = np.random.default_rng(0)
    return RingInstance(n=12, servers=3, requests=rng.integers(0, 12, size=T), initial=rng.permutation(12) % 3,
                        alpha=2.5, name="test ring", generated_by={"by": "hand", "seed": 0, "list": [1, 2]})


def test_json_round_trip_inline(tmp_path):
    inst = some_instance()
    text = inst.to_json()
    data = json.loads(text)
    assert (data["kind"], data["schema_version"], data["requests"]) == ("ring", 1, inst.requests.tolist())
    back = RingInstance.from_json(text)
    assert back == inst and back.initial.tolist() == inst.initial.tolist() and back.alpha == 2.5
    assert back.generated_by == {"by": "hand", "seed": 0, "list": [1, 2]}
    path = tmp_path / "ring.json"
    inst.to_json(path)
    assert load_instance(path) == inst and RingInstance.read(path) == inst
    assert list(tmp_path.iterdir()) == [path]  # no .npy for a short sequence
    empty = RingInstance(n=4, servers=2, requests=[])
    assert RingInstance.from_json(empty.to_json()) == empty
    assert RingInstance.from_json(empty.to_json()) != inst


def test_json_round_trip_with_npy(tmp_path):
    inst = some_instance()
    path = tmp_path / "ring.json"
    inst.to_json(path, binary=True)
    npy = tmp_path / "ring.requests.npy"
    ref = json.loads(path.read_text())["requests"]
    assert ref["npy"] == npy.name and ref["count"] == 30 and len(ref["sha256"]) == 64
    assert np.load(npy, allow_pickle=False).tolist() == inst.requests.tolist()
    assert load_instance(path) == inst and RingInstance.read(path) == inst
    with pytest.raises(InstanceError, match=r"^requests.npy = 'ring.requests.npy'; expected a file beside the"):
        RingInstance.from_json(path.read_text())  # no folder to look in


def test_long_sequences_go_to_npy_by_default(tmp_path):
    inst = random_ring(16, 4, INLINE_REQUESTS + 1, seed=0)
    path = tmp_path / "long.json"
    inst.to_json(path)
    assert (tmp_path / "long.requests.npy").exists()
    assert isinstance(json.loads(path.read_text())["requests"], dict)
    assert RingInstance.read(path) == inst
    assert RingInstance.from_json(inst.to_json()) == inst  # without a path: inline
    with pytest.raises(ValueError, match="needs a path"):
        inst.to_json(binary=True)
    short = tmp_path / "short.json"
    random_ring(16, 4, INLINE_REQUESTS, seed=0).to_json(short)
    assert isinstance(json.loads(short.read_text())["requests"], list)


def write_binary(tmp_path, T: int = 30):
    inst = some_instance(T)
    path = tmp_path / "ring.json"
    inst.to_json(path, binary=True)
    return inst, path, tmp_path / "ring.requests.npy"


def test_changed_npy_is_a_sha_mismatch(tmp_path):
    inst, path, npy = write_binary(tmp_path)
    changed = inst.requests.copy()
    changed[0] = (changed[0] + 1) % 12
    np.save(npy, changed)
    with pytest.raises(InstanceError, match=r"^requests.sha256 = '[0-9a-f]{64}'; expected the SHA-256 .*changed"):
        load_instance(path)
    with pytest.raises(InstanceError, match=r"requests\.sha256"):
        RingInstance.read(path)


def test_missing_npy(tmp_path):
    _, path, npy = write_binary(tmp_path)
    npy.unlink()
    with pytest.raises(InstanceError, match=r"^requests.npy = '.*ring.requests.npy'; expected an existing .npy"):
        load_instance(path)


@pytest.mark.parametrize(("edit", "match"), [
    ({"npy": "../ring.requests.npy"}, r"^requests.npy = '../ring.requests.npy'; expected a plain file name"),
    ({"npy": ".."}, r"^requests.npy = '..'; expected a plain file name"),
    ({"npy": ""}, r"^requests.npy = ''; expected a plain file name"),
    ({"npy": "a\0b"}, r"^requests.npy = 'a\\x00b'; expected a plain file name"),
    ({"count": True, "sha256": None}, r"^requests.count = True; expected the 30 entries of"),
    ({"extra": 1}, r"^requests = .*; expected a list of edge ids or \{'npy'"),
    ({"npy": 3}, r"^requests = .*; expected a list of edge ids or"),
    ({"count": 31, "sha256": None}, r"^requests.count = 31; expected the 30 entries of"),
])
def test_bad_npy_references(tmp_path, edit, match):
    _, path, _ = write_binary(tmp_path)
    data = json.loads(path.read_text())
    data["requests"].update(edit)
    if data["requests"].get("sha256", "") is None:
        del data["requests"]["sha256"]
    path.write_text(json.dumps(data))
    with pytest.raises(InstanceError, match=match):
        load_instance(path)


def test_npz_archive_is_an_instance_error(tmp_path):
    # BUG (issue 18): np.load of an .npz returns an NpzFile, whose missing .dtype raised AttributeError.
    _, path, npy = write_binary(tmp_path)
    data = json.loads(path.read_text())
    del data["requests"]["sha256"]
    path.write_text(json.dumps(data))
    with npy.open("wb") as fh:
        np.savez(fh, requests=np.zeros(30, dtype=np.int64))
    with pytest.raises(InstanceError, match=r"^requests.npy = .*; expected a NumPy .npy file of integers \(not"):
        load_instance(path)


def test_npy_of_floats_or_bad_values(tmp_path):
    _, path, npy = write_binary(tmp_path)
    data = json.loads(path.read_text())
    del data["requests"]["sha256"]
    path.write_text(json.dumps(data))
    np.save(npy, np.zeros(30))
    with pytest.raises(InstanceError, match=r"^requests.npy dtype = 'float64'; expected an integer dtype"):
        load_instance(path)
    np.save(npy, np.full(30, 12))
    with pytest.raises(InstanceError, match=r"^requests\[0\] = 12; expected an edge id in 0..11"):
        load_instance(path)
    npy.write_bytes(b"not a numpy file")
    with pytest.raises(InstanceError, match=r"^requests.npy = .*; expected a NumPy .npy file"):
        load_instance(path)


def test_read_refuses_another_kind(tmp_path):
    path = tmp_path / "wp.json"
    random_worker_placement(n_jobs=2, n_servers=2, seed=0).to_json(path)
    with pytest.raises(InstanceError, match="kind"):
        RingInstance.read(path)


def test_with_requests_keeps_the_ring():
    inst = some_instance()
    other = inst.with_requests([1, 2, 3])
    assert other.requests.tolist() == [1, 2, 3] and other.generated_by is None
    assert other.initial.tolist() == inst.initial.tolist() and other.alpha == inst.alpha
    with pytest.raises(InstanceError, match=r"requests\[0\] = 12"):
        inst.with_requests([12])


# -- generators ------------------------------------------------------------------------------------


@pytest.mark.parametrize("pattern", PATTERNS)
def test_patterns_are_reproducible_and_recorded(pattern):
    a = random_ring(32, 4, 2000, pattern, seed=3)
    assert a == random_ring(32, 4, 2000, pattern, seed=3)
    assert a.requests.tolist() == random_ring(32, 4, 2000, pattern, seed=np.int64(3)).requests.tolist()
    b = random_ring(32, 4, 2000, pattern, seed=4)
    assert not np.array_equal(a.requests, b.requests)
    gen = a.generated_by
    assert (gen["generator"], gen["pattern"], gen["seed"], gen["n"], gen["servers"], gen["requests"]) == \
        ("random_ring", pattern, 3, 32, 4, 2000)
    again = random_ring(**{k: v for k, v in gen.items() if k != "generator"})
    assert again == a  # generated_by is enough to re-create the instance
    assert a.initial.tolist() == contiguous_assignment(32, 4).tolist()
    assert a.requests.min() >= 0 and a.requests.max() < 32 and a.n_requests == 2000
    assert random_ring(32, 4, 0, pattern, seed=3).n_requests == 0


def test_pattern_parameters_land_in_generated_by():
    gen = random_ring(32, 4, 10, "hotspot", seed=0, width=5, hot=0.7).generated_by
    assert (gen["width"], gen["hot"]) == (5, 0.7)
    assert random_ring(32, 4, 10, "moving-hotspot", seed=0, step=3).generated_by["step"] == 3
    assert random_ring(32, 4, 10, "phases", seed=0, phase=7).generated_by["phase"] == 7
    assert random_ring(32, 4, 10, "zipf", seed=0, zipf=2).generated_by["zipf"] == 2.0
    assert random_ring(32, 4, 10, "hotspot", seed=0).generated_by["width"] == 8  # default k
    assert random_ring(32, 4, 10, seed=None).generated_by["seed"] is None
    assert isinstance(random_ring(32, 4, 10, seed=np.random.default_rng(0)).generated_by["seed"], str)
    assert random_ring(32, 4, 10, seed=0, alpha=3, name="x").alpha == 3.0


def test_hotspot_concentrates_requests_in_its_arc():
    n, k, T = 64, 8, 5000
    inst = random_ring(n, n // k, T, "hotspot", seed=1, hot=0.9)
    share, _ = best_arc_share(inst.requests, n, k)
    assert share > 0.88  # expected 0.9 + 0.1 * 8 / 64
    uniform, _ = best_arc_share(random_ring(n, n // k, T, "uniform", seed=1).requests, n, k)
    assert uniform < 0.2  # expected 8 / 64
    narrow, _ = best_arc_share(random_ring(n, n // k, T, "hotspot", seed=1, width=2, hot=0.5).requests, n, 2)
    assert 0.45 < narrow < 0.6
    cold, _ = best_arc_share(random_ring(n, n // k, T, "hotspot", seed=1, hot=0.0).requests, n, k)
    assert cold < 0.2


def test_moving_hotspot_moves_one_edge_per_step():
    n, T, step = 64, 6000, 50
    inst = random_ring(n, 8, T, "moving-hotspot", seed=2, step=step)
    shifted = (inst.requests - np.arange(T) // step) % n  # undo the drift: a fixed hot arc
    share, _ = best_arc_share(shifted, n, 8)
    assert share > 0.88
    first, s0 = best_arc_share(inst.requests[:step], n, 8)
    last, s1 = best_arc_share(inst.requests[-step:], n, 8)
    assert first > 0.7 and last > 0.7
    assert min(abs(s1 - s0 - (T - step) // step) % n, n - abs(s1 - s0 - (T - step) // step) % n) <= 3


def test_phases_jump_between_hot_arcs():
    n, phase = 64, 800
    inst = random_ring(n, 8, 8 * phase, "phases", seed=5, phase=phase)
    starts = []
    for p in range(8):
        share, start = best_arc_share(inst.requests[p * phase:(p + 1) * phase], n, 8)
        assert share > 0.85
        starts.append(start)
    assert len(set(starts)) > 3


def test_zipf_is_skewed():
    n, T = 64, 20_000
    counts = np.sort(random_ring(n, 8, T, "zipf", seed=6, zipf=1.2).request_counts())[::-1]
    ranks = np.arange(1, n + 1) ** -1.2
    assert np.allclose(counts / T, ranks / ranks.sum(), atol=0.02)
    flat = random_ring(n, 8, T, "zipf", seed=6, zipf=0).request_counts()
    assert flat.max() / T < 0.03


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"pattern": "nope"}, r"^pattern = 'nope'; expected one of uniform, hotspot"),
    ({"n": 30}, r"^n = 30; expected a multiple of servers = 4"),
    ({"requests": -1}, r"^requests = -1; expected an integer in 0..100000000"),
    ({"requests": 10**8 + 1}, r"^requests = 100000001; expected an integer in 0..100000000"),
    ({"hot": 1.5}, r"^hot = 1.5; expected a probability"),
    ({"width": 0}, r"^width = 0; expected an integer in 1..32"),
    ({"step": 0}, r"^step = 0; expected >= 1"),
    ({"phase": 0}, r"^phase = 0; expected >= 1"),
    ({"zipf": -1.0}, r"^zipf = -1.0; expected a finite exponent"),
])
def test_generator_arguments_are_checked(kwargs, match):
    args = {"n": 32, "servers": 4, "requests": 10, "seed": 0, **kwargs}
    with pytest.raises(InstanceError, match=match):
        random_ring(**args)
