"""The exact dynamic OPT of paper 004 as a model: ``ring-dynamic-dp`` (an ExactModel).

The labelling DP against an outside enumeration of every schedule, its checkpointed backtrack
against the stored-table one at every memory budget, the time limit, and the model through the
verbs and the command line (build, solve, verify; export, solvers and relaxation refused).
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusteropt import build, solve
from clusteropt.algorithms.ring.offline import dynamic_dp_plan, dynamic_opt_dp
from clusteropt.instances.ring import RingInstance, random_ring
from clusteropt.models import ExactModel, get_model, model_summary
from clusteropt.solvers import NotOptimalError, Termination, UnsuitableSolverError, write_model
from clusteropt.verify.ring import check_ring_run

TOL = 1e-9


def _enumerate_opt(inst: RingInstance) -> float:
    """OPT_dyn by trying every sequence of capacity-k labellings, one per request (no compression,
    no DP): the cost is counted here from the definition (Sec. 1).
    """
    n, ns, k = inst.n, inst.servers, inst.k
    labellings = [p for p in itertools.product(range(ns), repeat=n) if max(p.count(c) for c in range(ns)) <= k]
    best = float("inf")
    for seq in itertools.product(labellings, repeat=inst.n_requests):
        prev, cost = tuple(int(c) for c in inst.initial), 0.0
        for p, e in zip(seq, inst.requests.tolist(), strict=True):
            cost += inst.alpha * sum(a != b for a, b in zip(prev, p, strict=True))
            cost += p[e] != p[(e + 1) % n]
            prev = p
        best = min(best, cost)
    return best


CASES = [(4, 2, 4, s, a) for s in range(3) for a in (0.5, 1.0, 2.0)] + [(4, 2, 6, 3, 1.0), (6, 3, 2, 0, 1.0)]


@pytest.mark.parametrize(("n", "ns", "T", "seed", "alpha"), CASES)
def test_dp_equals_enumeration(n, ns, T, seed, alpha):
    inst = random_ring(n, ns, T, "uniform", seed=seed, alpha=alpha)
    want = _enumerate_opt(inst)
    for method in ("matrix", "transform"):
        sol = dynamic_opt_dp(inst, method=method)
        assert sol.value == pytest.approx(want, abs=TOL)
        chk = check_ring_run(inst, sol)
        assert chk.feasible and chk.value == pytest.approx(want, abs=TOL)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_ns=st.sampled_from([(6, 2), (6, 3), (8, 2), (8, 4)]), T=st.integers(1, 60), seed=st.integers(0, 10**6),
       alpha=st.sampled_from([0.5, 1.0, 3.0]), rows=st.integers(3, 12), extra=st.integers(0, 2))
def test_checkpointed_backtrack_is_optimal_at_every_budget(n_ns, T, seed, alpha, rows, extra):
    n, ns = n_ns
    inst = random_ring(n, ns, T, "uniform", seed=seed, alpha=alpha)
    cap = inst.k + min(extra, n - inst.k)
    count = dynamic_dp_plan(inst, cap, method="transform").labellings
    full = dynamic_opt_dp(inst, cap, method="transform")
    tight = dynamic_opt_dp(inst, cap, method="transform", max_memory=rows * 8 * count)
    assert tight.value == pytest.approx(full.value, abs=TOL)
    assert tight.placements.shape == full.placements.shape
    chk = check_ring_run(inst, tight, augmentation=cap / inst.k)
    assert chk.feasible, chk.violations
    assert chk.value == pytest.approx(full.value, abs=TOL)


def test_dp_reaches_the_grid_limit_shapes():
    # l^n = 2^24 is the limit: n = 24 on 2 servers plans, 26 does not
    assert dynamic_dp_plan(RingInstance(n=24, servers=2, requests=[0])).method == "transform"
    assert dynamic_dp_plan(RingInstance(n=12, servers=4, requests=[0])).grid == 4 ** 12
    with pytest.raises(ValueError, match="too large"):
        dynamic_dp_plan(RingInstance(n=26, servers=2, requests=[0]))
    with pytest.raises(ValueError, match="at least 3"):
        dynamic_opt_dp(random_ring(8, 2, 5, seed=0), method="transform", max_memory=100)


def test_time_limit_stops_the_dp_and_the_solve_reports_it():
    inst = random_ring(16, 2, 400, "uniform", seed=0)
    with pytest.raises(TimeoutError, match="time limit"):
        dynamic_opt_dp(inst, time_limit=1e-9)
    model = build("ring-dynamic-dp", inst)
    res = solve(model, time_limit=1e-9, raise_on_nonoptimal=False)
    assert res.termination is Termination.TIME_LIMIT and not res.has_solution and model.solution is None
    with pytest.raises(NotOptimalError):
        solve(model, time_limit=1e-9)


def test_model_through_the_verbs():
    inst = random_ring(8, 2, 30, "hotspot", seed=3, alpha=2.0)
    model = build("ring-dynamic-dp", inst)
    assert isinstance(model, ExactModel) and get_model("ring-dynamic-dp").backend == "exact"
    rows = {r["component"]: r for r in model_summary(model)}
    assert rows["placement"]["type"] == "variable" and rows["S"]["size"] == 70
    res = solve(model)
    milp = solve(build("ring-dynamic-opt", inst))
    assert res.termination is Termination.OPTIMAL and res.gap == 0 and res.bound == res.objective
    assert res.objective == pytest.approx(milp.objective, abs=1e-6)
    out = model.solution.output
    chk = check_ring_run(inst, out)
    assert chk.feasible and chk.value == pytest.approx(res.objective, abs=TOL)
    # the labelled values key the placement by (compressed request, process)
    assert res.labelled("placement")[(1, 0)] == res.values["placement"][0, 0]
    # an augmented capacity: the optimum can only fall
    aug = solve(build("ring-dynamic-dp", inst, capacity=5))
    assert aug.objective <= res.objective + TOL
    assert build("ring-dynamic-dp", inst, capacity=5).components[0]["size"] > 70


def test_refusals_name_the_solver_model(tmp_path):
    inst = random_ring(6, 2, 10, seed=0)
    model = build("ring-dynamic-dp", inst)
    with pytest.raises(UnsuitableSolverError, match="ring-dynamic-opt"):
        solve(model, "highs")
    with pytest.raises(ValueError, match="LP/MPS"):
        write_model(model, tmp_path / "m.lp")
    with pytest.raises(ValueError, match="relaxation"):
        build("ring-dynamic-dp", inst, relax=True)
    with pytest.raises(ValueError, match="one thread"):
        solve(model, threads=2)
    with pytest.raises(ValueError, match="native options"):
        solve(model, options={"presolve": "off"})
    assert solve(model, "labelling-dp", threads=1, mip_gap=0.1).objective == dynamic_opt_dp(inst).value


def test_empty_sequence():
    res = solve(build("ring-dynamic-dp", RingInstance(n=4, servers=2, requests=[])))
    assert res.objective == 0 and res.values["placement"].shape == (0, 4)


def test_cli_solve_then_verify(tmp_path, capsys):
    from clusteropt.cli import main

    path = tmp_path / "ring.json"
    inst = random_ring(10, 2, 500, "moving-hotspot", seed=2)
    inst.to_json(path)
    out = tmp_path / "out.json"
    assert main(["solve", str(path), "--model", "ring-dynamic-dp", "--json", str(out)]) == 0
    assert "labelling-dp/exact: optimal" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["objective"] == pytest.approx(dynamic_opt_dp(inst).value)
    assert data["system"] == "ring" and data["augmentation"] == 1.0
    assert np.asarray(data["values"]["placement"]).shape[1] == 10
    assert data["provenance"]["solver"]["name"] == "labelling-dp"
    assert main(["verify", str(path), str(out)]) == 0
    assert "verified True" in capsys.readouterr().out
    # a tampered schedule is caught by the verifier, not by the DP
    data["migrations"][0][2] = 1 - data["migrations"][0][2]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    assert main(["verify", str(path), str(bad)]) == 4
    capsys.readouterr()
    assert main(["build", str(path), "--model", "ring-dynamic-dp"]) == 0
    assert "labellings" in capsys.readouterr().out
    assert main(["export", str(path), str(tmp_path / "x.lp"), "--model", "ring-dynamic-dp"]) == 2
    assert "ring-dynamic-opt" in capsys.readouterr().err
    # past the time limit: no solution, and an earlier result file stays as it was
    before = out.read_text()
    big = tmp_path / "big.json"
    random_ring(20, 2, 300, seed=0).to_json(big)
    assert main(["solve", str(big), "--model", "ring-dynamic-dp", "--time-limit", "0.01", "--json", str(out)]) != 0
    assert out.read_text() == before
