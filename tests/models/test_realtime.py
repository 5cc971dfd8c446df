"""Paper 002 models: the max-weight ILP (Eq. (2)) and the exact-region LP over stationary policies."""

from __future__ import annotations

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest

from clusteropt.algorithms.realtime import frame_masks, max_weight_packing
from clusteropt.instances import RealtimeInstance, random_realtime, realtime_preset
from clusteropt.models import get_model
from clusteropt.models.realtime import (
    PersistentMaxWeight,
    build_max_weight_ilp,
    build_region_lp,
    maximal_packings,
    region_data,
)
from clusteropt.solvers import solve, solve_file, write_model


def test_ilp_equals_the_search_on_random_frames():
    rng = np.random.default_rng(5)
    for _ in range(40):
        n, m = int(rng.integers(1, 8)), int(rng.integers(1, 6))
        jobs = rng.random((n, m)) < 0.5
        q = rng.exponential(1.0, n)
        p = rng.uniform(0.5, 1.0, (n, m))
        model = build_max_weight_ilp(q, jobs, p)
        weights = q * np.where(jobs, p, 1.0).prod(axis=1) * jobs.any(axis=1)
        value, _ = max_weight_packing(weights, frame_masks(jobs).tolist())
        if len(model.A) == 0:
            assert value == 0
            continue
        res = solve(model, "highs")
        assert res.objective == pytest.approx(value, rel=1e-7, abs=1e-9)
        x = res.values["x"].reshape(-1).round().astype(bool)
        apps = np.array(list(model.A))
        assert (jobs[apps[x]].sum(axis=0) <= 1).all()  # interference-free


def test_ilp_components_read_like_the_paper_and_export_round_trips(tmp_path):
    m = build_max_weight_ilp([0.48, 0.5], [[1, 1, 0, 0], [0, 1, 1, 1]], [[0.8] * 4, [0.9] * 4])
    assert "Eq. (2)" in m.eq2.doc and "interference-free" in m.one_task.doc
    assert list(m.one_task) == [1]  # only worker W_2 is shared
    for suffix in (".lp", ".mps"):
        path = write_model(m, tmp_path / f"mw{suffix}")
        assert solve_file(path, "highs").objective == pytest.approx(0.3645)


def test_registered_models_build_from_an_instance():
    inst = realtime_preset("paper")
    mw = get_model("realtime-max-weight").build(inst)
    assert solve(mw, "highs").objective == pytest.approx(0.3645)  # Example 6, frame 1
    relaxed = get_model("realtime-max-weight").build(inst, relax=True)
    assert all(v.domain is not pyo.Binary for v in relaxed.x.values())
    region = get_model("realtime-region").build(inst)  # direction r = (0.48, 0.5)
    assert solve(region, "highs").objective > 0


def test_maximal_packings_against_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(200):
        masks = [int(x) for x in rng.integers(0, 16, size=int(rng.integers(1, 7)))]
        got = maximal_packings(masks)
        items = [i for i, mk in enumerate(masks) if mk]
        packs = []
        for k in range(len(items) + 1):
            for sub in itertools.combinations(items, k):
                used, ok = 0, True
                for i in sub:
                    ok &= not masks[i] & used
                    used |= masks[i]
                if ok:
                    packs.append(set(sub))
        want = sorted(tuple(sorted(p)) for p in packs if not any(p < q for q in packs))
        assert got == want


def test_region_lp_known_values():
    # one pattern (Example 6): theta along (1, 1) mixes J_1 (0.64) and J_2 (0.729)
    inst = realtime_preset("paper")
    assert solve(build_region_lp(inst, [1, 1]), "highs").objective == pytest.approx(0.64 * 0.729 / 1.369)
    assert solve(build_region_lp(inst, [1, 0]), "highs").objective == pytest.approx(0.64)
    # one application, one worker: theta = P[job] * P
    single = RealtimeInstance(success=[[0.8]], generation=[[0.3]])
    assert solve(build_region_lp(single, [1]), "highs").objective == pytest.approx(0.24)
    # two applications on disjoint workers never interfere: each gets its own rate
    apart = RealtimeInstance(success=[[0.9, 0.0], [0.0, 0.5]], generation=[[0.4, 0.0], [0.0, 0.6]])
    assert solve(build_region_lp(apart, [0.36, 0.3]), "highs").objective == pytest.approx(1.0)
    # slack relaxes every rate row by that much
    lp = build_region_lp(inst, [1, 0], slack=0.01)
    assert solve(lp, "highs").objective == pytest.approx(0.65)


def test_region_data_states_and_service():
    inst = realtime_preset("fig5", n=3)
    data = region_data(inst)
    assert data.prob.size == 2**9 and data.prob.sum() == pytest.approx(1.0)
    # every column's set is interference-free within its state; service = p_s * completion
    for k, (s, j) in enumerate(data.columns.tolist()):
        pack = data.sets[s][j]
        assert (data.masks[s][list(pack)].sum(axis=0) <= 1).all()
        expect = np.zeros(3)
        expect[list(pack)] = data.prob[s] * data.completion[s, list(pack)]
        assert np.allclose(data.service[k], expect)


@pytest.mark.parametrize(("direction", "match"), [
    ([1, 1, 1], "one per application"), ([1, -1], r"direction\[1\] = -1.0"), ([0, 0], "all zero"),
    ([1, float("nan")], r"direction\[1\] = nan"),
])
def test_region_lp_rejects_bad_directions(direction, match):
    with pytest.raises(ValueError, match=match):
        build_region_lp(realtime_preset("fig3"), direction)


def test_region_lp_refuses_too_many_states():
    with pytest.raises(ValueError, match=r"2\^100\) exceed max_states"):
        build_region_lp(realtime_preset("fig5", n=10))
    with pytest.raises(ValueError, match="slack"):
        build_region_lp(realtime_preset("fig3"), slack=-1)


@pytest.mark.parametrize(("n", "m", "density"), [(6, 4, 0.5), (10, 10, 0.3), (3, 7, 0.8), (1, 1, 0.5)])
def test_one_live_model_equals_the_pyomo_ilp_and_the_search_frame_after_frame(n, m, density):
    # issue 22: the persistent model, changed in place over a sequence of frames, against a fresh
    # Pyomo model and the exact search on every frame (shared workers, lone workers, empty frames)
    rng = np.random.default_rng(n * 100 + m)
    p = rng.uniform(0.5, 1.0, (n, m))
    live = PersistentMaxWeight(n, m)
    changed = 0
    for frame in range(30):
        jobs = rng.random((n, m)) < (0.0 if frame == 7 else density)
        q = rng.exponential(1.0, n) * (rng.random(n) < 0.9)  # some zero queues
        d = live.solve(q, jobs, p)
        changed += d.changes
        weights = q * np.where(jobs, p, 1.0).prod(axis=1) * jobs.any(axis=1)
        value, _ = max_weight_packing(weights, frame_masks(jobs).tolist())
        assert d.value == pytest.approx(value, rel=1e-7, abs=1e-9)
        assert d.value == pytest.approx(float(weights[d.chosen].sum()), rel=1e-12, abs=1e-12)
        assert (jobs[d.chosen].sum(axis=0) <= 1).all()  # interference-free
        assert all(jobs[i].any() for i in d.chosen)  # only applications with a job run
        model = build_max_weight_ilp(q, jobs, p)
        if len(model.A):
            assert solve(model, "highs").objective == pytest.approx(d.value, rel=1e-7, abs=1e-9)
    assert changed > 0


def test_live_model_refuses_other_shapes_and_bad_queues():
    live = PersistentMaxWeight(2, 3)
    with pytest.raises(ValueError, match=r"jobs: shape \(3, 3\); expected \(2, 3\)"):
        live.solve([1.0] * 3, np.ones((3, 3)), np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"queues\[1\] = -2.0"):
        live.solve([1.0, -2.0], np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="n_apps = 0"):
        PersistentMaxWeight(0, 3)


def test_ilp_rejects_bad_shapes():
    with pytest.raises(ValueError, match="shapes"):
        build_max_weight_ilp([1.0], [[1, 0]], [[0.5]])
    with pytest.raises(ValueError, match=r"queues\[0\] = -1.0"):
        build_max_weight_ilp([-1.0], [[1]], [[0.5]])


def test_random_instances_lp_is_at_least_any_single_app_mix():
    # theta along e_i is app i alone: P[job i] * E[prod P | job] (no competitor is ever run)
    inst = random_realtime(2, 2, seed=4)
    masks, prob = inst.states()
    comp = inst.completion_probability(masks)
    for i in range(2):
        d = np.eye(2)[i]
        assert solve(build_region_lp(inst, d), "highs").objective == pytest.approx(float(prob @ comp[:, i]))
