"""Synthetic trace-like coflow workloads (clusteropt.instances.coflow.generate.random_coflows)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from clusteropt.instances.coflow.generate import random_coflows
from clusteropt.instances.coflow.instance import CoflowInstance


def side_widths(inst: CoflowInstance) -> tuple[np.ndarray, np.ndarray]:
    """Distinct mappers and reducers per coflow."""
    ptr = inst.coflow_ptr
    m = np.array([np.unique(inst.input[a:b]).size for a, b in pairwise(ptr)])
    r = np.array([np.unique(inst.output[a:b]).size for a, b in pairwise(ptr)])
    return m, r


def bottleneck(inst: CoflowInstance) -> int:
    return int(inst.loads().sum(axis=0).max())


def test_seed_determinism_and_generator_argument():
    assert random_coflows(seed=3) == random_coflows(seed=3)
    assert random_coflows(seed=np.random.default_rng(3)) == random_coflows(seed=3)
    assert random_coflows(seed=3) != random_coflows(seed=4)
    for kw in ({"arrival": "bursty"}, {"width": "uniform", "size": "uniform", "weights": "random"}):
        assert random_coflows(30, 10, seed=5, **kw) == random_coflows(30, 10, seed=5, **kw)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kw", [
    {},
    {"width": "narrow", "arrival": "bursty"},
    {"width": "uniform", "size": "uniform", "weights": "random"},
    {"size": "unit", "release": False},
])
def test_valid_instances(seed, kw):
    inst = random_coflows(40, 12, seed=seed, **kw)
    assert isinstance(inst, CoflowInstance)
    assert (inst.n_coflows, inst.n_inputs, inst.n_outputs) == (40, 12, 12)
    assert inst.ids.tolist() == list(range(1, 41))
    assert inst.units.dtype == np.int64 and inst.units.min() >= 1 and inst.units.max() <= 1000
    assert inst.release.min() == 0 and np.all(np.diff(inst.release) >= 0)  # arrival order
    assert np.bincount(inst.coflow, minlength=40).min() >= 1  # every coflow has a flow
    # one flow per (mapper, reducer) pair: the flows of a coflow are a full product
    m, r = side_widths(inst)
    assert np.array_equal(np.bincount(inst.coflow, minlength=40), m * r)


def test_heavy_width_mix():
    inst = random_coflows(2000, 50, size="unit", seed=0)
    m, r = side_widths(inst)
    narrow = (m == 1) | (r == 1)
    # 70 % narrow by construction, plus wide coflows whose log-uniform draws give a side of 1
    assert 0.72 < narrow.mean() < 0.88
    assert (np.maximum(m, r) > 25).mean() > 0.05  # a few span most ports
    assert np.median(m * r) <= 10


def test_narrow_and_uniform_widths():
    m, r = side_widths(random_coflows(300, 30, width="narrow", size="unit", seed=1))
    assert np.all((m == 1) | (r == 1))
    m, r = side_widths(random_coflows(300, 30, width="uniform", size="unit", seed=1))
    assert abs(m.mean() - 15.5) < 2 and abs(r.mean() - 15.5) < 2


def test_release_false_gives_zeros_with_the_same_flows_and_weights():
    on = random_coflows(60, 10, weights="random", seed=7)
    off = random_coflows(60, 10, weights="random", release=False, seed=7)
    assert off.release.tolist() == [0] * 60 and on.release.max() > 0
    for name in ("coflow", "input", "output", "units", "weight"):
        assert np.array_equal(getattr(on, name), getattr(off, name))


@pytest.mark.parametrize("arrival", ["poisson", "bursty"])
def test_load_sets_the_arrival_spread(arrival):
    n = 400
    insts = {load: random_coflows(n, 20, arrival=arrival, load=load, seed=11) for load in (0.3, 0.9)}
    # load only rescales the arrival times: the same flows, 3x the mean interarrival at a third of the load
    assert np.array_equal(insts[0.3].units, insts[0.9].units)
    gaps = {load: inst.release[-1] / (n - 1) for load, inst in insts.items()}
    assert 2.8 < gaps[0.3] / gaps[0.9] < 3.2
    # the busiest port is offered about `load` units per slot while the coflows arrive
    for load, inst in insts.items():
        assert 0.6 * load < bottleneck(inst) / inst.release[-1] < 1.6 * load


def test_bursty_arrivals_come_in_batches():
    poisson = random_coflows(500, 20, seed=2)
    bursty = random_coflows(500, 20, arrival="bursty", seed=2)
    assert np.unique(poisson.release).size > 450
    assert 50 < np.unique(bursty.release).size < 160  # batches of mean size 5


def test_heavy_tailed_sizes():
    ratios, total_ratios = [], []
    for seed in range(10):
        inst = random_coflows(seed=seed)
        ratios.append(inst.units.max() / np.median(inst.units))
        totals = inst.total_units()
        total_ratios.append(totals.max() / np.median(totals))
    assert min(ratios) >= 8 and np.median(ratios) >= 20
    assert np.median(total_ratios) >= 20
    uniform = random_coflows(size="uniform", seed=0)
    assert set(np.unique(uniform.units)) <= set(range(1, 11))
    assert uniform.units.max() / np.median(uniform.units) <= 10


def test_units_scale_and_cap():
    assert set(random_coflows(20, 5, size="unit", seed=0).units.tolist()) == {1}
    assert set(random_coflows(20, 5, size="unit", units_scale=3, seed=0).units.tolist()) == {3}
    big = random_coflows(200, 10, units_scale=100, max_units=None, seed=0)
    assert big.units.max() > 1000
    assert random_coflows(200, 10, units_scale=100, max_units=50, seed=0).units.max() == 50


@pytest.mark.parametrize("seed", range(10))
def test_tiny_instances_for_exact_milps(seed):
    inst = random_coflows(4, 3, max_units=3, seed=seed)
    assert inst.n_coflows == 4 and inst.n_flows <= 4 * 9
    assert inst.units.max() <= 3 and inst.total_units().sum() <= 4 * 9 * 3
    assert inst.release.max() <= 100


@pytest.mark.parametrize(("kw", "message"), [
    ({"n_coflows": 0}, "n_coflows = 0; expected an integer >= 1"),
    ({"n_coflows": 2.5}, "n_coflows = 2.5; expected an integer >= 1"),
    ({"n_ports": -1}, "n_ports = -1; expected an integer >= 1"),
    ({"n_ports": True}, "n_ports = True; expected an integer >= 1"),
    ({"width": "wide"}, "width = 'wide'; expected one of 'heavy', 'narrow', 'uniform'"),
    ({"size": "pareto"}, "size = 'pareto'; expected one of 'heavy', 'uniform', 'unit'"),
    ({"arrival": "batch"}, "arrival = 'batch'; expected one of 'poisson', 'bursty'"),
    ({"weights": None}, "weights = None; expected one of 'unit', 'random'"),
    ({"load": 0}, "load = 0; expected a positive finite number"),
    ({"load": float("inf")}, "load = inf; expected a positive finite number"),
    ({"load": "0.9"}, "load = '0.9'; expected a positive finite number"),
    ({"release": 1}, "release = 1; expected True or False"),
    ({"units_scale": -2.0}, "units_scale = -2.0; expected a positive finite number"),
    ({"max_units": 0}, "max_units = 0; expected an integer >= 1"),
])
def test_bad_parameters_name_themselves(kw, message):
    with pytest.raises(ValueError) as info:
        random_coflows(**kw)
    assert str(info.value) == message


def test_trace_scale_generates():
    inst = random_coflows(526, 150, seed=0)
    assert inst.n_coflows == 526 and inst.n_flows > 10_000


@pytest.mark.parametrize(("kw", "match"), [
    # BUG (issue 18): a load this small made the arrival times infinite; floor(inf) cast to int64 gave
    # release -2**63 (with a RuntimeWarning) and a message about release instead of load.
    ({"load": 1e-300}, r"^load = 1e-300 spreads the arrivals over .* slots; expected at most 2\*\*53 minus"),
    # units beyond 2**53 in all: slot numbers and the float-summed totals would no longer be exact
    ({"units_scale": 1e300, "max_units": None}, r"^units_scale = 1e\+300 gives .* units in all; expected at most "
     r"2\*\*53"),
    # an n_coflows x n_ports table of 2**42 cells: a MemoryError, not a message
    ({"n_coflows": 4, "n_ports": 2**40}, r"^n_coflows \* n_ports = 4 \* 1099511627776; expected at most 2\*\*27"),
])
def test_draws_out_of_the_instance_range_name_the_parameter(kw, match):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=match):
            random_coflows(**{"n_coflows": 5, "n_ports": 3, "seed": 0, **kw})


def _loads_by_hand(inst: CoflowInstance) -> np.ndarray:
    out = np.zeros((inst.n_coflows, inst.n_ports), dtype=np.int64)
    for j, i, o, u in zip(inst.coflow.tolist(), inst.input.tolist(), inst.output.tolist(), inst.units.tolist(),
                          strict=True):
        out[j, i] += u
        out[j, inst.n_inputs + o] += u
    return out


@pytest.mark.parametrize("seed", range(4))
def test_loads_are_the_flows_summed(seed):
    inst = random_coflows(30, 8, seed=seed)
    np.testing.assert_array_equal(inst.loads(), _loads_by_hand(inst))
    assert inst.loads().dtype == np.int64


def test_loads_are_exact_up_to_the_largest_total():
    big = 2**53 - 3  # the total may reach 2**53 (validated): float64 partial sums stay exact
    inst = CoflowInstance(2, 2, [0, 0], [0, 0], [0, 1], [big, 3], [1.0], [0])
    assert inst.loads().tolist() == [[big + 3, 0, big, 3]]
