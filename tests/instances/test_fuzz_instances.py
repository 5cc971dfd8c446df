"""Fuzzing the instance loaders with hostile JSON files (issue 18, items 2-4 and the instance fuzz suite).

One small valid instance of every registered kind (:data:`~clusteropt.instances.base.INSTANCE_KINDS`)
is written as JSON and mutated: a node (a leaf, or a whole list or object) replaced by a hostile
value (``-1``, ``0``, ``1e300``, ``10**30``, ``+-2**63``, ``1.5``, ``"5"``, ``true``, ``null``,
``""``, ``{}``, ``[]``, a ragged list, a 5000-digit integer literal, ``NaN``, lists nested 40 and
100000 deep), a key deleted, a list entry duplicated (repeating names and ids); up to three
mutations at once.  The contract, for any content:

* either :func:`~clusteropt.instances.base.load_instance` returns a valid instance whose
  ``to_dict()`` round-trips (through JSON text and through a file),
* or it raises :class:`~clusteropt.instances.base.InstanceError` whose ``where`` names a field of
  the file;

never another exception type (``RecursionError``, ``OverflowError``, ``TypeError``, a bare
``ValueError``) and never a warning (a numpy overflow warning means a silently wrong number).

``make test`` runs every single replacement of every top-level field and of the first entry of
every array, plus a short derandomized hypothesis profile per kind; the ``slow`` profile runs many
more examples.  The regressions of the campaign follow, one test each.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusteropt.instances import (
    INSTANCE_KINDS,
    ConcurrentOpenShopInstance,
    Instance,
    InstanceError,
    WorkerPlacementInstance,
    broker_preset,
    load_instance,
    random_coflows,
    random_ring,
    random_worker_placement,
    realtime_preset,
)
from clusteropt.instances.base import as_number_array, check_int
from clusteropt.instances.gadget.instance import Cluster, GadgetInstance, fat_tree_cluster, gadget_preset

HORIZON = "expected a slot count in 1 .. 1000000 (MAX_HORIZON: a run visits every slot)"


def _bases() -> dict[str, Instance]:
    coflows = random_coflows(3, 3, max_units=3, seed=0)
    return {
        "worker-placement": random_worker_placement(3, 2, seed=0),
        "gpu-cluster": fat_tree_cluster(4, n_racks=2, seed=0),
        "gadget": gadget_preset("tiny", jobs=3, seed=0),
        "broker": broker_preset("tiny", seed=0),
        "realtime": realtime_preset("paper"),
        "ring": random_ring(8, 2, 12, "hotspot", seed=0),
        "coflow": coflows,
        "concurrent-open-shop": coflows.to_concurrent_open_shop(),
    }


BASES = _bases()
DICTS = {kind: inst.to_dict() for kind, inst in BASES.items()}

# Values json.dumps cannot (or should not) write go in as placeholders replaced in the text.
HUGE, NAN, DEEP, DEEP40 = "@@huge-int@@", "@@nan@@", "@@deep@@", "@@deep40@@"
RAW = {
    json.dumps(HUGE): "7" * 5000,  # beyond Python's 4300-digit int parsing limit
    json.dumps(NAN): "NaN",  # the JSON module's literal
    json.dumps(DEEP): "[" * 100_000 + "]" * 100_000,  # beyond the recursion limit of the parser
    json.dumps(DEEP40): "[" * 40 + "1" + "]" * 40,  # parses, but deeper than MAX_DEPTH
}
HOSTILE: list[Any] = [-1, 0, 1e300, 10**30, 2**63, -(2**63), 1.5, "5", True, None, "", {}, [], [[1], [1, 2]],
                      HUGE, NAN, DEEP, DEEP40]
Path_ = tuple[str | int, ...]


def test_every_kind_has_a_base_instance():
    assert set(BASES) == set(INSTANCE_KINDS)
    for kind, inst in BASES.items():
        assert inst.kind == kind


def _nodes(value: Any, prefix: Path_ = ()) -> list[Path_]:
    """Paths of every node below the root: keys of objects, indices of lists."""
    out: list[Path_] = []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        out.append((*prefix, key))
        out.extend(_nodes(child, (*prefix, key)))
    return out


def _get(data: Any, path: Path_) -> Any:
    for key in path:
        data = data[key]
    return data


def _keys(value: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(value, dict):
        for key, child in value.items():
            found.add(key)
            found |= _keys(child)
    elif isinstance(value, list):
        for child in value:
            found |= _keys(child)
    return found


FIELD_NAMES = {kind: _keys(d) | {"kind", "schema_version"} for kind, d in DICTS.items()}


def _apply(data: dict, mutation: tuple) -> None:
    """Apply one mutation in place; a path made stale by an earlier mutation is skipped."""
    op, path, arg = mutation
    try:
        parent = _get(data, path[:-1])
        if not isinstance(parent, dict | list):  # e.g. a string put there by an earlier replacement
            return
        node = parent[path[-1]]
    except (KeyError, IndexError, TypeError):
        return
    if op == "replace":
        parent[path[-1]] = copy.deepcopy(arg)
    elif op == "delete" and isinstance(parent, dict):
        del parent[path[-1]]
    elif op == "duplicate" and isinstance(node, list) and node:
        k = arg % len(node)
        node.insert(k + 1, copy.deepcopy(node[k]))


def _text(data: dict) -> str:
    text = json.dumps(data)
    for placeholder, raw in RAW.items():
        text = text.replace(placeholder, raw)
    return text


def check_contract(kind: str, text: str, path: Path) -> Instance | InstanceError:
    """Load ``text`` from ``path``: a valid, round-tripping instance or an InstanceError naming a field."""
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            inst = load_instance(path)
        except InstanceError as exc:
            assert any(name in exc.where for name in FIELD_NAMES[kind]), str(exc)
            assert len(str(exc)) < 1000, str(exc)[:300]
            return exc
        assert isinstance(inst, INSTANCE_KINDS[kind])
        again = type(inst).from_dict(json.loads(inst.to_json()))
        assert again == inst
        inst.to_json(path)
        assert load_instance(path) == inst
        return inst


def _cases(kind: str) -> list[tuple[str, Path_, Any]]:
    """Every hostile value at every top-level field and at the first entry (all axes) of every array."""
    base = DICTS[kind]
    paths: list[Path_] = []
    for key, value in base.items():
        paths.append((key,))
        p: Path_ = (key,)
        while isinstance(value, list) and value:
            p, value = (*p, 0), value[0]
            paths.append(p)
        if isinstance(value, dict):  # a nested instance (the gadget's cluster) or mapping
            paths.extend((key, k) for k in value)
    return [("replace", p, v) for p in paths for v in HOSTILE] + \
           [("delete", (key,), None) for key in base] + \
           [("duplicate", p, 0) for p in paths if isinstance(_get(base, p), list)]


@pytest.mark.parametrize("kind", sorted(BASES))
def test_every_single_mutation_loads_or_names_a_field(kind, tmp_path):
    outcomes = {"ok": 0, "error": 0}
    for mutation in _cases(kind):
        data = copy.deepcopy(DICTS[kind])
        _apply(data, mutation)
        got = check_contract(kind, _text(data), tmp_path / "case.json")
        outcomes["error" if isinstance(got, InstanceError) else "ok"] += 1
    assert outcomes["error"] > 100 and outcomes["ok"] > 0  # the mutations do bite, and not all


def _mutations(kind: str) -> st.SearchStrategy:
    base = DICTS[kind]
    nodes = _nodes(base)
    keys = [p for p in nodes if isinstance(p[-1], str)]
    lists = [p for p in nodes if isinstance(_get(base, p), list) and _get(base, p)] or [()]
    one = st.one_of(
        st.tuples(st.just("replace"), st.sampled_from(nodes), st.sampled_from(HOSTILE)),
        st.tuples(st.just("delete"), st.sampled_from(keys), st.none()),
        st.tuples(st.just("duplicate"), st.sampled_from(lists), st.integers(0, 50)),
    )
    return st.lists(one, min_size=1, max_size=3)


def _run_mutations(kind: str, data: st.DataObject, tmp_path: Path) -> None:
    mutated = copy.deepcopy(DICTS[kind])
    for mutation in data.draw(_mutations(kind), label="mutations"):
        _apply(mutated, mutation)
    check_contract(kind, _text(mutated), tmp_path / "fuzz.json")


@pytest.mark.parametrize("kind", sorted(BASES))
@settings(derandomize=True, max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_files_load_or_name_a_field(kind, data, tmp_path):
    _run_mutations(kind, data, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(BASES))
@settings(derandomize=True, max_examples=1500, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_files_load_or_name_a_field_many(kind, data, tmp_path):
    _run_mutations(kind, data, tmp_path)


def test_repeated_keys_are_rejected_not_silently_dropped(tmp_path):
    for kind, base in DICTS.items():
        key = next(k for k in base if k not in ("kind", "schema_version"))
        text = json.dumps(base)[:-1] + f", {json.dumps(key)}: {json.dumps(base[key])}}}"
        got = check_contract(kind, text, tmp_path / "twice.json")
        assert isinstance(got, InstanceError) and got.where == key
        assert "the key once" in got.expected


# -- regressions of the campaign -----------------------------------------------------------------


def load_text(tmp_path: Path, data: dict, **raw: str) -> Instance:
    text = json.dumps(data)
    for placeholder, value in raw.items():
        text = text.replace(json.dumps(placeholder), value)
    path = tmp_path / "case.json"
    path.write_text(text)
    return load_instance(path)


def test_duplicate_resource_names_no_longer_reach_the_worker_placement_model(tmp_path):
    # The campaign: resources ["gpu", "gpu", "gpu"] loaded, and the Pyomo model (indexed by name)
    # kept 6 capacity rows instead of 18, so the objective was wrong without a word.
    from clusteropt.models.worker_placement import build_worker_placement

    data = {**DICTS["worker-placement"], "resources": ["gpu", "gpu", "gpu"]}
    with pytest.raises(InstanceError, match=re.escape("resources[1] = 'gpu'; expected a name distinct from "
                                                      "resources[0]")):
        load_text(tmp_path, data)
    inst = BASES["worker-placement"]
    with pytest.raises(InstanceError, match=r"^resources\[2\] = 'gpu'"):
        WorkerPlacementInstance(inst.capacity, inst.per_worker, inst.max_workers, inst.utility,
                                ("gpu", "cpu", "gpu"))
    model = build_worker_placement(inst)  # distinct names: one capacity row per (server, resource)
    assert len(model.capacity) == inst.n_servers * len(inst.resources) == 6


REPEATED_RESOURCE = "resources[1] = 'gpu'; expected a name distinct from resources[0]"
REPEATED_ID = "ids[1] = 1; expected an id distinct from ids[0] (distinct coflow / job ids)"


@pytest.mark.parametrize(("kind", "field", "message"), [
    ("gpu-cluster", ("resources",), REPEATED_RESOURCE),
    ("gadget", ("cluster", "resources"), f"cluster.{REPEATED_RESOURCE}"),
    ("broker", ("resources",), REPEATED_RESOURCE),
    ("coflow", ("ids",), REPEATED_ID),
    ("concurrent-open-shop", ("ids",), REPEATED_ID),
    ("gpu-cluster", ("links",), "links[1] = [0, 4]; expected a link listed once (links[0] is the same)"),
])
def test_every_kind_with_names_rejects_a_repeat_naming_both_indices(kind, field, message, tmp_path):
    data = copy.deepcopy(DICTS[kind])
    names = _get(data, field)
    if kind in ("gpu-cluster", "gadget") and field[-1] == "resources":  # one resource: make it two, same name
        names.append(names[0])
        holder = _get(data, field[:-1])
        holder["capacity"] = [row * 2 for row in holder["capacity"]]
        if kind == "gadget":
            data["per_worker"] = [row * 2 for row in data["per_worker"]]
            data["limit"] = [row * 2 for row in data["limit"]]
    else:
        names[1] = names[0]
    with pytest.raises(InstanceError) as info:
        load_text(tmp_path, data)
    assert str(info.value) == message


def test_coflow_flow_repeat_names_both_rows():
    with pytest.raises(InstanceError, match=re.escape("(coflow, input, output)[2] = (0, 1, 1); expected a triple "
                                                      "listed once (add their units): row 0 has it already")):
        from clusteropt.instances import CoflowInstance
        CoflowInstance(2, 2, [0, 1, 0], [1, 0, 1], [1, 0, 1], [1, 1, 1], [1.0, 1.0], [0, 0])


def test_large_integer_ids_stay_exact(tmp_path):
    # Integer fields went through float64: ids 2**60 and 2**60 + 1 collapsed into one.
    data = {**DICTS["coflow"], "ids": [2**60, 2**60 + 1, 7]}
    inst = load_text(tmp_path, data)
    assert inst.ids.tolist() == [2**60, 2**60 + 1, 7]
    assert inst.ids.dtype == np.int64
    assert json.loads(inst.to_json())["ids"] == [2**60, 2**60 + 1, 7]


def test_integral_floats_are_taken_only_while_exact():
    assert as_number_array("a", [3.0, 2**53], dtype=np.int64).tolist() == [3, 2**53]
    with pytest.raises(InstanceError, match=r"^a\[0\] = 1\.8014398509481984e\+16; expected an integer \(a float "
                                            r"above 2\*\*53"):
        as_number_array("a", [2.0**54, 1], dtype=np.int64)
    with pytest.raises(InstanceError, match=r"^a\[1\] = 4611686018427387905; expected an integer of magnitude"):
        as_number_array("a", [1, 2**62 + 1], dtype=np.int64)
    with pytest.raises(InstanceError, match=r"^a\[1\] = 9223372036854775808; expected an integer of magnitude"):
        as_number_array("a", np.array([1, 2**63], dtype=np.uint64), dtype=np.int64)
    assert check_int("n", 4.0, floats=True) == 4
    with pytest.raises(InstanceError, match=r"^n = 4\.0; expected an integer$"):
        check_int("n", 4.0)


def test_gadget_budget_cannot_overflow(tmp_path):
    # limit 1e19 gave budget -2**63 through an unchecked int64 cast: the job never ran, "verified".
    # Fields stay within MAX_MAGNITUDE = 1e7 now, so the ratio overflows through a tiny per_worker.
    data = {**DICTS["gadget"], "limit": [[1e7]] * 3, "per_worker": [[1e-10]] * 3}
    message = ("limit[0, 0] = 10000000.0; expected a budget limit / per_worker <= 2**53 worker-slots "
               "(per_worker[0, 0] = 1e-10)")
    with pytest.raises(InstanceError, match=re.escape(message)):
        load_text(tmp_path, data)
    inst = BASES["gadget"]
    ok = GadgetInstance(inst.cluster, inst.horizon, inst.arrival, inst.max_workers,
                        np.full_like(inst.per_worker, 2.0**-30), np.full_like(inst.limit, 2.0**23),
                        inst.bandwidth, inst.zeta, inst.utility)
    assert (ok.budget == 2**53).all()


def test_gadget_worker_slot_product_is_range_checked():
    inst = BASES["gadget"]
    with pytest.raises(InstanceError, match=r"^max_workers\[0\] = 4611686018427387904; expected N_i \(T - a_i"):
        GadgetInstance(inst.cluster, inst.horizon, [1, 1, 1], [2**62, 1, 1], inst.per_worker, inst.limit,
                       inst.bandwidth, inst.zeta, inst.utility)


@pytest.mark.parametrize(("kind", "field", "raw", "message"), [
    # RecursionError from json.loads
    ("gadget", "arrival", "[" * 100_000 + "]" * 100_000,
     "arrival[0, 0, 0, 0, 0, 0, 0, 0, ...] = <deeper than Python's parser goes>; expected lists and objects "
     "nested at most 32 deep"),
    ("ring", "generated_by", '{"a": ' + "[" * 50_000 + "]" * 50_000 + "}",
     "generated_by.a[0, 0, 0, 0, 0, 0, 0, 0, ...] = <deeper than Python's parser goes>; expected lists and "
     "objects nested at most 32 deep"),
    # ValueError from Python's int-string conversion limit
    ("gadget", "horizon", "9" * 5000, "horizon = <an integer of 5000 digits>; " + HORIZON),
    ("coflow", "weight", "[1, " + "9" * 5000 + ", 1]", "weight[1] = <an integer of 5000 digits>; expected a "
     "finite number"),
    # ragged lists reaching numpy before validation
    ("gpu-cluster", "links", "[[0, 4], [4]]", "links[0] = (0, 4); expected a number (the nested lists must be "
     "rectangular)"),
    ("coflow", "weight", "[[1], [1, 2], [1]]", "weight[0] = (1,); expected a number (the array has 1 dimension)"),
    # TypeError: an unhashable utility
    ("gadget", "utility", "{}", "utility = {}; expected one of ['log', 'quadratic', 'sigmoid', 'sqrt']"),
    # OverflowError
    ("gadget", "horizon", str(10**30), "horizon = <an integer of 31 digits>; " + HORIZON),
    ("gpu-cluster", "n_switches", str(2**63), "n_switches = 9223372036854775808; expected an integer >= 0, of "
     "magnitude <= 2**62"),
    ("gpu-cluster", "n_switches", str(2**40), "n_switches = 1099511627776; expected <= 2147483644 (at most "
     "2**31 nodes, servers and switches)"),
    # strings and booleans are not numbers
    ("gadget", "horizon", '"5"', "horizon = '5'; " + HORIZON),
    ("gadget", "horizon", "true", "horizon = True; " + HORIZON),
    ("gpu-cluster", "n_switches", "true", "n_switches = True; expected an integer >= 0"),
    ("coflow", "n_inputs", "true", "n_inputs = True; expected a positive integer"),
    ("worker-placement", "utility", '[1, "5", 1]', "utility[1] = '5'; expected a number (not a string)"),
    ("worker-placement", "max_workers", "[1, true, 1]", "max_workers[1] = True; expected a number (true / false "
     "is not one)"),
    ("broker", "capacity", "[true, 1, 1]", "capacity[0] = True; expected a number (true / false is not one)"),
    ("realtime", "success", '[["0.5", 1, 1, 1], [1, 1, 1, 1]]', "success[0, 0] = '0.5'; expected a number (not "
     "a string)"),
    ("ring", "alpha", "true", "alpha = True; expected a finite number >= 0"),
    ("concurrent-open-shop", "processing", "[[1, 2, null]]", "processing[0, 2] = None; expected a number"),
    # string fields must be strings
    ("gadget", "name", "5", "name = 5; expected a string"),
    ("broker", "name", "[]", "name = (); expected a string"),
    # NaN literal
    ("broker", "traffic", "[NaN, 1, 1]", "traffic[0] = nan; expected a finite number"),
    # derived slot numbers: release plus the total work stays below 2**53
    ("coflow", "release", f"[0, 0, {2**62}]", f"release[2] = {2**62}; expected <= 2**53 - 17 (the total work: "
     "every slot number of a schedule stays exact)"),
])
def test_hostile_values_give_one_instance_error(kind, field, raw, message, tmp_path):
    data = {**DICTS[kind], field: "@@field@@"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InstanceError) as info:
            load_text(tmp_path, data, **{"@@field@@": raw})
    assert str(info.value) == message


def test_broker_required_workers_stay_exact(tmp_path):
    data = copy.deepcopy(DICTS["broker"])
    data["capacity"] = [1e-300, *data["capacity"][1:]]
    with pytest.raises(InstanceError, match=r"^capacity\[0\] = 1e-300; expected large enough that ceil"):
        load_text(tmp_path, data)


def test_constructors_raise_only_instance_errors():
    # Python callers get the same one-line errors as files (no TypeError, RuntimeError, OverflowError).
    deep: list = [1]
    for _ in range(200):
        deep = [deep]
    cluster = BASES["gpu-cluster"]
    cases = [
        lambda: Cluster(cluster.capacity, deep, cluster.bandwidth, cluster.n_switches),
        lambda: Cluster(cluster.capacity, cluster.links, cluster.bandwidth, 2**64),
        lambda: ConcurrentOpenShopInstance({"a": 1}, [1.0], [0]),
        lambda: ConcurrentOpenShopInstance([[1]], [1.0], [object()]),
        lambda: WorkerPlacementInstance([[1.0]], [[1.0]], [1], [1.0], ["gpu", b"cpu"]),
    ]
    for make in cases:
        with pytest.raises(InstanceError):
            make()
