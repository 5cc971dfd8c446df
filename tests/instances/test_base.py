"""Instance conventions (DESIGN.md, Contracts / Instances), exercised on WorkerPlacementInstance.

* a bad field raises ``InstanceError`` (a ``ValueError``) naming the field, the index and the
  expectation;
* instances are frozen and their arrays read-only;
* JSON round-trips with ``kind`` and ``schema_version``; ``load_instance`` dispatches on kind;
* generators are reproducible from a seed and accept a ``np.random.Generator``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusteropt.instances import (
    INSTANCE_KINDS,
    Instance,
    InstanceError,
    WorkerPlacementInstance,
    load_instance,
    random_worker_placement,
)

# A small valid instance: 2 jobs, 1 server, resources (gpu, mem).
GOOD = {
    "capacity": [[4.0, 16.0]],
    "per_worker": [[1.0, 4.0], [2.0, 4.0]],
    "max_workers": [2, 1],
    "utility": [1.0, 3.0],
    "resources": ("gpu", "mem"),
}


def make(**changes) -> WorkerPlacementInstance:
    return WorkerPlacementInstance(**{**GOOD, **changes})


def raises_exactly(message: str, **changes) -> InstanceError:
    with pytest.raises(InstanceError) as info:
        make(**changes)
    assert str(info.value) == message
    return info.value


# -- InstanceError messages --------------------------------------------------------------------


def test_instance_error_is_a_value_error():
    assert issubclass(InstanceError, ValueError)
    with pytest.raises(ValueError):
        make(per_worker=[[1, -4], [2, 4]])


def test_instance_error_attributes_and_format():
    err = InstanceError("jobs[3].bandwidth", -2.0, ">= 0")
    assert str(err) == "jobs[3].bandwidth = -2.0; expected >= 0"
    assert (err.where, err.value, err.expected) == ("jobs[3].bandwidth", -2.0, ">= 0")


def test_valid_instance_builds():
    inst = make()
    assert (inst.n_jobs, inst.n_servers) == (2, 1)
    assert inst.max_workers.dtype == np.int64
    assert inst.capacity.dtype == np.float64
    assert inst.resources == ("gpu", "mem")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        # sign rules name field and full index
        ({"per_worker": [[1, 4], [1, -4]]}, "per_worker[1, 1] = -4.0; expected >= 0"),
        ({"per_worker": [[1, -4], [2, 4]]}, "per_worker[0, 1] = -4.0; expected >= 0"),
        ({"capacity": [[-1, 16]]}, "capacity[0, 0] = -1.0; expected >= 0"),
        ({"max_workers": [2, 0]}, "max_workers[1] = 0; expected >= 1"),
        ({"utility": [1.0, -0.5]}, "utility[1] = -0.5; expected >= 0"),
        # integrality
        ({"max_workers": [2, 1.5]}, "max_workers[1] = 1.5; expected an integer"),
        # non-finite entries
        ({"capacity": [[4, np.nan]]}, "capacity[0, 1] = nan; expected a finite number"),
        ({"per_worker": [[1, 4], [np.inf, 4]]}, "per_worker[1, 0] = inf; expected a finite number"),
        ({"utility": [-np.inf, 1.0]}, "utility[0] = -inf; expected a finite number"),
        ({"max_workers": [np.nan, 1]}, "max_workers[0] = nan; expected a finite number"),
        # resources
        ({"resources": ()}, "resources = (); expected a non-empty list of resource names"),
        ({"resources": ("gpu", "gpu")}, "resources[1] = 'gpu'; expected a name distinct from resources[0]"),
        ({"resources": ("gpu", 3)}, "resources[1] = 3; expected a non-empty string"),
        ({"resources": ("gpu", "")}, "resources[1] = ''; expected a non-empty string"),
        ({"resources": (None, "mem")}, "resources[0] = None; expected a non-empty string"),
        # no servers
        ({"capacity": np.zeros((0, 2))}, "capacity.shape[0] = 0; expected at least one server"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_field_messages(changes, message):
    raises_exactly(message, **changes)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        # the resource axis must match len(resources)
        ({"capacity": [[4, 16, 3]]}, "capacity.shape[1] = 3; expected 2"),
        ({"per_worker": [[1, 4, 0], [2, 4, 0]]}, "per_worker.shape[1] = 3; expected 2"),
        # the job axis must match per_worker
        ({"max_workers": [2, 1, 1]}, "max_workers.shape[0] = 3; expected 2"),
        ({"utility": [1.0]}, "utility.shape[0] = 1; expected 2"),
        # wrong number of dimensions
        ({"capacity": [4, 16]}, "capacity.ndim = 1; expected 2 (shape (2,))"),
        ({"max_workers": [[2, 1]]}, "max_workers.ndim = 2; expected 1 (shape (1, 2))"),
    ],
)
def test_shape_messages_name_the_axis(changes, message):
    raises_exactly(message, **changes)


def test_non_numeric_array_names_field():
    err = raises_exactly("capacity[0, 0] = 'a'; expected a number (not a string)", capacity=[["a", 16]])
    assert err.where == "capacity[0, 0]"


def test_numpy_scalars_and_0d_arrays_count_as_numbers():
    # Python callers pass lists of numpy scalars; small integer types must not warn when range-checked.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inst = make(utility=[np.float32(1.5), np.array(3.0)], max_workers=[np.int8(2), np.uint64(1)])
    assert inst.utility.tolist() == [1.5, 3.0] and inst.max_workers.tolist() == [2, 1]
    raises_exactly("max_workers[0] = True; expected a number (true / false is not one)",
                   max_workers=[np.bool_(True), 1])
    raises_exactly("max_workers[0] = '1'; expected a number (not a string)", max_workers=np.array(["1", "2"]))


def test_error_reports_first_bad_entry_in_c_order():
    with pytest.raises(InstanceError, match=re.escape("per_worker[0, 1] = -1.0")):
        make(per_worker=[[1, -1], [-2, -3]])


@pytest.mark.parametrize("resources", [5, None])
def test_resources_not_a_sequence_is_an_instance_error(resources):
    # BUG (see report): validate() calls tuple(self.resources) unguarded, so a number or None
    # (e.g. `"resources": 5` in a JSON file) raises a bare TypeError instead of InstanceError.
    with pytest.raises(InstanceError, match=r"^resources = "):
        make(resources=resources)


def test_resources_as_a_bare_string_is_rejected():
    # BUG (see report): tuple("gpu") == ("g", "p", "u"), so a plain string is silently split into
    # one-letter resource names and, with 3 columns, accepted.
    with pytest.raises(InstanceError, match=r"^resources = 'gpu'"):
        WorkerPlacementInstance([[1, 2, 3]], [[1, 1, 1]], [1], [1.0], "gpu")


def test_huge_max_workers_is_reported_as_given():
    # BUG (see report): 1e300 passes the integer check, then overflows in astype(int64) and is
    # reported as a negative number with a RuntimeWarning.
    with pytest.raises(InstanceError, match=r"^max_workers\[1\] = 1e\+300"):
        make(max_workers=[2, 1e300])


# -- frozen and read-only --------------------------------------------------------------------


def test_instance_is_frozen():
    inst = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        inst.capacity = np.zeros((1, 2))  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        inst.resources = ("a", "b")  # type: ignore[misc]
    with pytest.raises(AttributeError):
        inst.new_field = 1  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["capacity", "per_worker", "max_workers", "utility"])
def test_arrays_are_read_only(name):
    arr = getattr(make(), name)
    assert not arr.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        arr[0] = 0
    with pytest.raises(ValueError, match="read-only"):
        arr += 1


def test_instance_copies_caller_arrays():
    cap = np.array([[4.0, 16.0]])
    inst = make(capacity=cap)
    cap[0, 0] = 100.0  # the caller's array stays writable and is not shared
    assert inst.capacity[0, 0] == 4.0


def test_instances_are_not_hashable_but_compare_by_value():
    assert make() == make()
    assert make() != make(utility=[1.0, 2.0])
    with pytest.raises(TypeError):
        hash(make())


# -- JSON round trip ---------------------------------------------------------------------------


def assert_same(a: WorkerPlacementInstance, b: WorkerPlacementInstance) -> None:
    assert type(a) is type(b)
    assert a == b
    for f in ("capacity", "per_worker", "max_workers", "utility"):
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)
        assert not y.flags.writeable
    assert a.resources == b.resources
    assert isinstance(b.resources, tuple)


def test_json_has_kind_and_schema_version_first():
    data = json.loads(make().to_json())
    assert list(data)[:2] == ["kind", "schema_version"]
    assert data["kind"] == "worker-placement" == WorkerPlacementInstance.kind
    assert data["schema_version"] == WorkerPlacementInstance.schema_version == 1
    assert set(data) == {"kind", "schema_version", *GOOD}
    assert INSTANCE_KINDS["worker-placement"] is WorkerPlacementInstance


@settings(
    max_examples=15, deadline=None, database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    n_jobs=st.integers(1, 12),
    n_servers=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_json_round_trip_random(tmp_path, n_jobs, n_servers, seed):
    inst = random_worker_placement(n_jobs, n_servers, seed=seed)
    # text
    back = WorkerPlacementInstance.from_json(inst.to_json())
    assert_same(inst, back)
    # compact text, and via the base class dispatcher
    assert_same(inst, WorkerPlacementInstance.from_json(inst.to_json(indent=None)))
    # file, through load_instance
    path = tmp_path / f"wp-{n_jobs}-{n_servers}-{seed}.json"
    text = inst.to_json(path)
    assert path.read_text() == text + "\n"
    assert_same(inst, load_instance(path))
    assert_same(inst, load_instance(str(path)))


def test_to_json_replaces_file_without_leftovers(tmp_path):
    path = tmp_path / "wp.json"
    path.write_text("old contents")
    a = random_worker_placement(3, 2, seed=1)
    a.to_json(path)
    assert load_instance(path) == a
    b = random_worker_placement(3, 2, seed=2)
    b.to_json(path)
    assert load_instance(path) == b
    assert [p.name for p in tmp_path.iterdir()] == ["wp.json"]  # no temporary files left


def test_to_dict_from_dict_round_trip():
    inst = make(resources=("gpu", "mem"))
    assert_same(inst, WorkerPlacementInstance.from_dict(inst.to_dict()))


def test_default_resources_round_trip():
    inst = WorkerPlacementInstance([[1, 2, 3]], [[1, 1, 1]], [1], [1.0])
    assert inst.resources == ("gpu", "cpu", "mem")
    assert_same(inst, WorkerPlacementInstance.from_json(inst.to_json()))


def good_dict() -> dict:
    return make().to_dict()


def test_from_dict_wrong_kind():
    data = {**good_dict(), "kind": "coflow"}
    with pytest.raises(InstanceError) as info:
        WorkerPlacementInstance.from_dict(data)
    assert str(info.value) == "kind = 'coflow'; expected 'worker-placement'"


def test_from_dict_missing_kind():
    data = good_dict()
    del data["kind"]
    with pytest.raises(InstanceError, match=r"^kind = None; expected 'worker-placement'$"):
        WorkerPlacementInstance.from_dict(data)


@pytest.mark.parametrize("version", [2, 0, "1", None, True])
def test_from_dict_wrong_schema_version(version):
    data = {**good_dict(), "schema_version": version}
    with pytest.raises(InstanceError) as info:
        WorkerPlacementInstance.from_dict(data)
    assert info.value.where == "schema_version"
    assert str(info.value) == f"schema_version = {version!r}; expected 1 for kind 'worker-placement'"


def test_from_dict_unknown_field():
    data = {**good_dict(), "bandwidth": [1, 2]}
    with pytest.raises(InstanceError) as info:
        WorkerPlacementInstance.from_dict(data)
    assert info.value.where == "bandwidth"
    assert str(info.value).startswith("bandwidth = [1, 2]; expected one of the fields [")
    for name in ("capacity", "per_worker", "max_workers", "utility", "resources"):
        assert repr(name) in str(info.value)


@pytest.mark.parametrize("field", ["capacity", "per_worker", "max_workers", "utility"])
def test_from_dict_missing_field(field):
    data = good_dict()
    del data[field]
    with pytest.raises(InstanceError) as info:
        WorkerPlacementInstance.from_dict(data)
    assert str(info.value) == f"{field} = None; expected a value (the field is required)"


def test_from_dict_missing_optional_field_uses_default():
    data = good_dict()
    data["capacity"] = [[1, 2, 3]]
    data["per_worker"] = [[1, 1, 1], [1, 1, 1]]
    del data["resources"]
    assert WorkerPlacementInstance.from_dict(data).resources == ("gpu", "cpu", "mem")


def test_from_dict_bad_value_is_validated():
    data = {**good_dict(), "utility": [1.0, -2.0]}
    with pytest.raises(InstanceError, match=re.escape("utility[1] = -2.0; expected >= 0")):
        WorkerPlacementInstance.from_dict(data)


def test_from_dict_does_not_mutate_input():
    data = good_dict()
    before = json.dumps(data)
    WorkerPlacementInstance.from_dict(data)
    assert json.dumps(data) == before


# -- load_instance ------------------------------------------------------------------------------


def test_load_instance_not_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{\n  'kind': nope\n")
    with pytest.raises(InstanceError) as info:
        load_instance(path)
    assert str(path) in str(info.value)
    assert str(info.value).startswith(f"{path}:2 = ")  # file and line number
    assert "expected a JSON instance file" in str(info.value)


@pytest.mark.parametrize("content", ['{"schema_version": 1}', "[1, 2]", '"worker-placement"', "3"])
def test_load_instance_without_kind(tmp_path, content):
    path = tmp_path / "nokind.json"
    path.write_text(content)
    with pytest.raises(InstanceError) as info:
        load_instance(path)
    assert str(info.value) == (
        f"{path}: kind = None; expected a top-level object with a 'kind' field"
    )


def test_load_instance_unknown_kind(tmp_path):
    path = tmp_path / "unknown.json"
    path.write_text(json.dumps({**good_dict(), "kind": "teleportation"}))
    with pytest.raises(InstanceError) as info:
        load_instance(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: kind = 'teleportation'; expected one of [")
    assert "'worker-placement'" in msg


def test_load_instance_kind_of_wrong_type(tmp_path):
    # BUG (see report): an unhashable kind (a list) makes INSTANCE_KINDS.get() raise TypeError.
    path = tmp_path / "listkind.json"
    path.write_text(json.dumps({**good_dict(), "kind": ["worker-placement"]}))
    with pytest.raises(InstanceError, match="kind"):
        load_instance(path)


def test_load_instance_not_utf8(tmp_path):
    # BUG (see report): read_text() raises UnicodeDecodeError, which is not an InstanceError, so
    # the CLI prints a traceback for a binary file.
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(InstanceError):
        load_instance(path)


def test_load_instance_bad_field_is_instance_error(tmp_path):
    path = tmp_path / "badfield.json"
    path.write_text(json.dumps({**good_dict(), "per_worker": [[1, -4], [2, 4]]}))
    with pytest.raises(InstanceError, match=re.escape("per_worker[0, 1] = -4.0; expected >= 0")):
        load_instance(path)


def test_load_instance_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_instance(tmp_path / "nope.json")


def test_load_instance_of_a_folder_is_an_instance_error(tmp_path):
    # BUG (issue 18): read_bytes() on a folder raised IsADirectoryError, not the one-line error.
    with pytest.raises(InstanceError, match=rf"^instance file = '{re.escape(str(tmp_path))}'; expected a regular "
                                            r"file, not a folder$"):
        load_instance(tmp_path)


def test_from_dict_of_a_non_mapping_is_an_instance_error():
    with pytest.raises(InstanceError, match=r"^worker-placement = \[1, 2\]; expected a mapping"):
        WorkerPlacementInstance.from_dict([1, 2])


def test_from_dict_rejects_lists_nested_too_deep():
    deep: list = [1.0]
    for _ in range(40):
        deep = [deep]
    with pytest.raises(InstanceError, match=r"^utility\[0, 0, 0, 0, 0, 0, 0, 0, \.\.\.\] = .*; expected lists and "
                       r"objects nested at most 32 deep$"):
        WorkerPlacementInstance.from_dict({**good_dict(), "utility": deep})


def test_base_instance_has_no_kind_and_is_not_registered():
    assert Instance.kind == ""
    assert "" not in INSTANCE_KINDS


# -- generator ----------------------------------------------------------------------------------


def test_generator_reproducible_for_same_seed():
    a = random_worker_placement(6, 3, seed=42)
    b = random_worker_placement(6, 3, seed=42)
    assert_same(a, b)
    assert a.to_json() == b.to_json()


def test_generator_differs_for_different_seeds():
    texts = {random_worker_placement(6, 3, seed=s).to_json() for s in range(5)}
    assert len(texts) == 5


def test_generator_accepts_a_generator():
    a = random_worker_placement(5, 2, seed=np.random.default_rng(7))
    b = random_worker_placement(5, 2, seed=np.random.default_rng(7))
    assert_same(a, b)
    assert_same(a, random_worker_placement(5, 2, seed=7))  # same stream as the int seed
    rng = np.random.default_rng(7)
    first = random_worker_placement(5, 2, seed=rng)
    second = random_worker_placement(5, 2, seed=rng)  # the generator advances
    assert first != second


def test_generator_does_not_touch_global_random_state():
    # the legacy global state is exactly what must stay untouched
    np.random.seed(123)  # noqa: NPY002
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    random_worker_placement(4, 2, seed=1)
    random_worker_placement(4, 2, seed=None)
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # noqa: NPY002


def test_generator_shapes_and_paper_ranges():
    inst = random_worker_placement(20, 10, seed=3)
    assert inst.capacity.shape == (10, 3) and inst.per_worker.shape == (20, 3)
    assert inst.resources == ("gpu", "cpu", "mem")
    assert set(inst.capacity[:, 0]) <= {1.0, 2.0, 4.0, 8.0}
    np.testing.assert_array_equal(inst.capacity[:, 1], 8 * inst.capacity[:, 0])
    np.testing.assert_array_equal(inst.capacity[:, 2], 64 * inst.capacity[:, 0])
    np.testing.assert_array_equal(inst.per_worker[:, 0], 1.0)
    assert inst.per_worker[:, 1].min() >= 2 and inst.per_worker[:, 1].max() <= 8
    assert inst.per_worker[:, 2].min() >= 8 and inst.per_worker[:, 2].max() <= 48
    assert inst.max_workers.min() >= 1 and inst.max_workers.max() <= 8
    assert inst.utility.min() >= 1 and inst.utility.max() <= 10


@pytest.mark.parametrize(("n_jobs", "n_servers"), [(0, 2), (2, 0), (-1, 1)])
def test_generator_rejects_empty_sizes(n_jobs, n_servers):
    with pytest.raises(ValueError, match="expected both >= 1"):
        random_worker_placement(n_jobs, n_servers, seed=0)
