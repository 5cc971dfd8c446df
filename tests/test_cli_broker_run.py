"""``clusteropt run`` on paper 003 (mlBroker) instances: the four policies, the JSON, bad input.

The checker below recomputes out.json from the instance file and out.json alone, with numpy and the
instance JSON's fields, none of the package's cost, rounding or verification code.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from clusteropt.cli import main
from clusteropt.decisions.broker import BrokerSchedule
from clusteropt.instances import load_instance
from clusteropt.verify import check_broker_schedule


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small(tmp_path, capsys):
    path = tmp_path / "b.json"
    code, out, _ = run(capsys, "generate", "broker", "--preset", "small", "--seed", "1", "-o", path)
    assert code == 0 and "8 jobs over T = 10" in out
    return path


@pytest.mark.parametrize("policy", ["mlbroker", "mlbroker-plus", "local", "central", "oasis"])
def test_run_writes_a_checkable_run(small, tmp_path, capsys, policy):
    out_path = tmp_path / "out.json"
    code, out, _ = run(capsys, "run", small, "--policy", policy, "--json", out_path)
    assert code == 0 and "verified True" in out and out.startswith(policy)
    data = json.loads(out_path.read_text())
    inst = load_instance(small)
    # anyone can re-check the file: the instance file and the schedule in the JSON are enough
    check = check_broker_schedule(inst, BrokerSchedule.from_dict(data["schedule"]))
    assert check.ok and data["verified"] is True and data["violations"] == []
    assert data["total_cost"] == pytest.approx(check.total_cost, rel=1e-12)
    assert data["costs"] == pytest.approx(check.cost_totals(), rel=1e-12)
    assert data["policy"] == policy and len(data["slots"]) == inst.horizon
    assert sum(s["costs"]["total"] for s in data["slots"]) == pytest.approx(check.total_cost, rel=1e-9)
    for slot in data["slots"]:
        assert set(slot["jobs"]) == {str(i) for i in inst.active(slot["slot"])}
        for entry in slot["jobs"].values():
            assert set(entry) == {"workers", "ps", "data_moved", "connections"}
            assert sum(n for _, _, n in entry["connections"]) == sum(entry["workers"].values())


def test_epsilon_and_price_form_reach_mlbroker(small, tmp_path, capsys):
    costs = {}
    for form in ("tight", "bigm"):
        out_path = tmp_path / f"{form}.json"
        code, out, _ = run(capsys, "run", small, "--epsilon", "0.5", "--price-form", form, "--json", out_path)
        assert code == 0 and "verified True" in out
        costs[form] = json.loads(out_path.read_text())["total_cost"]
    assert costs["tight"] != costs["bigm"]


def test_bad_input_is_one_line(small, capsys):
    code, _, err = run(capsys, "run", small, "--policy", "local", "--epsilon", "0.2")
    assert code == 2 and "--epsilon is a parameter of mlbroker" in err and "Traceback" not in err
    code, _, err = run(capsys, "run", small, "--policy", "gadget")
    assert code == 2 and "broker instances take mlbroker, mlbroker-plus, local, central, oasis" in err
    code, _, err = run(capsys, "run", small, "--epsilon", "-1")
    assert code == 2 and "epsilon" in err and "Traceback" not in err
    code, _, err = run(capsys, "run", small, "--policy", "central", "--mip-gap", "0.01")
    assert code == 2 and "--mip-gap is a parameter of mlbroker-plus's slot MILP" in err
    code, _, err = run(capsys, "run", small, "--mip-gap", "0.01")  # the default policy is mlbroker
    assert code == 2 and "not of mlbroker" in err
    code, _, err = run(capsys, "run", small, "--policy", "mlbroker-plus", "--mip-gap", "2")
    assert code == 2 and "--mip-gap = 2; expected a relative gap in [0, 1)" in err and "Traceback" not in err
    code, _, err = run(capsys, "run", small, "--policy", "mlbroker-plus", "--rounding", "paper")
    assert code == 2 and "rounding_variant = 'paper' is not available" in err


def test_mlbroker_plus_records_its_slot_milp(small, tmp_path, capsys):
    out_path = tmp_path / "plus.json"
    code, out, _ = run(capsys, "run", small, "--policy", "mlbroker-plus", "--mip-gap", "0", "--json", out_path)
    assert code == 0 and "verified True" in out
    data = json.loads(out_path.read_text())
    assert data["params"]["rounding"] == "slot-milp" and data["params"]["slot_gap"] == 0.0
    assert data["params"]["slot_solver"] == "highs" and "fractional_costs" in data
    for info, slot in zip(data["slot_info"], data["slots"], strict=True):
        assert info["slot_milp_chosen"] in ("milp", "a_round")
        assert slot["costs"]["total"] <= info["slot_milp_a_round_cost"] + 1e-9


def test_a_slot_milp_out_of_time_is_a_counted_fallback(small, tmp_path, capsys):
    """A slot MILP that hits its time limit without a solution keeps A_round's decision: the line
    qualifies the policy's name and out.json counts the slots (issue 42).
    """
    out_path = tmp_path / "plus.json"
    code, out, _ = run(capsys, "run", small, "--policy", "mlbroker-plus", "--time-limit", "1e-9",
                       "--json", out_path)
    data = json.loads(out_path.read_text())
    fallbacks = data["fallbacks"]
    assert code == 0 and fallbacks["count"] > 0  # measured: HiGHS finds no point in 1e-9 s on this instance
    assert out.startswith(f"mlbroker-plus (fallback in {fallbacks['count']} of 10 slots: A_round kept (the slot "
                          "MILP hit its time limit without a solution)")
    for t, info in enumerate(data["slot_info"], start=1):
        fell = t in fallbacks["slots"]
        assert bool(info.get("fallback")) == fell
        assert (info["slot_milp_status"] == "TIME_LIMIT" and info["slot_milp_chosen"] == "a_round") or not fell
    assert sum(fallbacks["reasons"].values()) == fallbacks["count"] == len(fallbacks["slots"])


def test_a_slot_milp_solver_error_fails_the_run_naming_slot_solver_and_status(small, tmp_path, capsys,
                                                                               monkeypatch):
    """No documented fallback covers a solver error: exit 3, the slot, the solver and its status."""
    import dataclasses

    from clusteropt.solvers import direct
    from clusteropt.solvers.result import Termination

    real = direct.solve_highs_direct

    def broken(model, **kw):
        res = real(model, **kw)
        return dataclasses.replace(res, termination=Termination.ERROR, has_solution=False, objective=None,
                                   raw={**res.raw, "status": "kError"})

    monkeypatch.setattr(direct, "solve_highs_direct", broken)
    out_path = tmp_path / "plus.json"
    code, out, err = run(capsys, "run", small, "--policy", "mlbroker-plus", "--json", out_path)
    assert code == 3 and not out_path.exists() and "verified" not in out
    assert re.fullmatch(r"error: slot \d+: the slot MILP \(8\) ended ERROR without a solution "
                        r"\(highs/\w+: kError\)\n", err)


# -- an independent checker: the instance JSON, out.json, numpy; nothing of clusteropt --------------------------

COSTS = ("C1", "C2", "C3", "C4")


class Inst:
    """The instance file's fields as arrays (the JSON keys of BrokerInstance.to_json)."""

    def __init__(self, path):
        d = json.loads(Path(path).read_text())
        self.a, self.b, self.l = (np.array(d[k], dtype=float) for k in ("price_a", "price_b", "threshold"))
        self.d = np.array(d["transfer_cost"], dtype=float)
        self.arrival, self.last = np.array(d["arrival"]), np.array(d["last_slot"])
        self.data = np.array(d["data"], dtype=float)  # (I, T, R)
        self.P, self.B, self.c = (np.array(d[k], dtype=float) for k in ("capacity", "traffic", "deploy_cost"))
        self.n, self.m = np.array(d["worker_demand"], dtype=float), np.array(d["ps_demand"], dtype=float)
        self.T, self.resources = int(d["horizon"]), list(d["resources"])
        self.I, _, self.R = self.data.shape

    def active(self, t):
        return (self.arrival <= t) & (t <= self.last)

    def D(self, t):
        return self.data[:, t - 1, :]

    def N(self, t):  # ceil(sum_r D / P), a quotient within 1e-9 above an integer being that integer
        return np.ceil(self.D(t).sum(axis=1) / self.P - 1e-9).clip(min=0)

    def F(self, h):  # Eq. (2) / (7)
        return np.minimum(self.a * h, self.b * h + (self.a - self.b) * self.l)

    def h(self, y, s):  # Eq. (3), (R, K)
        return y.T @ self.n + s.T @ self.m


def _close(x, y, rel=1e-9, abs_=1e-9):
    return abs(x - y) <= abs_ + rel * max(abs(x), abs(y))


def _dense(entries, shape):
    out = np.zeros(shape)
    for *idx, value in entries:
        out[tuple(idx)] = value
    return out


def _slot_costs(inst, t, q, g, v, prev_v, price):
    act = inst.active(t)
    c1 = float(np.einsum("irq,rq->", q[act], inst.d))
    c3 = float((np.maximum(v[act] - prev_v[act], 0.0) * inst.c[act, None]).sum())
    c4 = float(np.einsum("irq,rq,i->", g[act], inst.d, inst.B[act]))
    return np.array([c1, price, c3, c4])


def recheck_costs(inst, out):
    """Every integral cost of out.json, from its schedule: C1..C4 per slot (Eqs. (1), (3), (5), (6)) and totals."""
    bad, sched = [], out["schedule"]
    jr, jrr = (inst.I, inst.R), (inst.I, inst.R, inst.R)
    prev_v, totals = np.zeros(jr), np.zeros(4)
    for t, rec in enumerate(sched["slots"], start=1):
        y, s, v = (_dense(rec.get(k, []), jr) for k in ("y", "s", "v"))
        q, g = (_dense(rec.get(k, []), jrr) for k in ("q", "g"))
        act = inst.active(t)[:, None]
        costs = _slot_costs(inst, t, q, g, v, prev_v, float(inst.F(inst.h(y * act, s * act)).sum()))
        totals += costs
        for k, name in enumerate(COSTS):
            for where, value in (("slots", out["slots"][t - 1]["costs"][name]),
                                 ("slot_info", out["slot_info"][t - 1][name])):
                if not _close(value, costs[k]):
                    bad.append(f"slot {t} {where} {name} = {value}; recomputed {costs[k]}")
        if not _close(out["slots"][t - 1]["costs"]["total"], costs.sum()):
            bad.append(f"slot {t} total = {out['slots'][t - 1]['costs']['total']}; recomputed {costs.sum()}")
        prev_v = np.where(act, v, 0.0)
    for k, name in enumerate(COSTS):
        if not _close(out["costs"][name], totals[k]):
            bad.append(f"costs.{name} = {out['costs'][name]}; recomputed {totals[k]}")
    for key, value in (("costs.total", out["costs"]["total"]), ("total_cost", out["total_cost"])):
        if not _close(value, totals.sum()):
            bad.append(f"{key} = {value}; recomputed {totals.sum()}")
    return bad


def _fractional_slot(inst, rec):
    n_jobs, n_dcs, n_res = inst.I, inst.R, len(inst.resources)
    arr = {k: np.zeros((n_jobs, n_dcs)) for k in ("y", "s", "v")}
    arr |= {k: np.zeros((n_jobs, n_dcs, n_dcs)) for k in ("q", "g")}
    for i, job in rec["jobs"].items():
        for k in ("y", "s", "v"):
            for r, value in job[k].items():
                arr[k][int(i), int(r)] = value
        for k in ("q", "g"):
            for r, r2, value in job[k]:
                arr[k][int(i), r, r2] = value
    for k in ("x", "u1", "u2"):
        arr[k] = np.zeros((n_dcs, n_res))
    for r, per in rec["dcs"].items():
        for k, values in per.items():
            arr.setdefault(k, np.zeros((n_dcs, n_res)))
            for res, value in values.items():
                arr[k][int(r), inst.resources.index(res)] = value
    return arr


def recheck_fractional(inst, out, feas_tol=1e-5):
    """A_fractional's costs of (9) and objective of (10) from the trace, and the trace point against (8a)-(8j)
    with the recorded M and U.
    """
    bad, params = [], out["params"]
    eps, sigma = params["epsilon"], params["sigma"]
    M = np.array([[out["big_m"]["M"][str(r)][k] for k in inst.resources] for r in range(inst.R)])
    U = out["big_m"]["U"]
    e = (inst.a - inst.b) * inst.l
    prev_v, totals = np.zeros((inst.I, inst.R)), np.zeros(4)
    for t, rec in enumerate(out["fractional"]["slots"], start=1):
        f = _fractional_slot(inst, rec)
        act = inst.active(t)
        costs = _slot_costs(inst, t, f["q"], f["g"], f["v"], prev_v, float(f["x"].sum()))
        totals += costs
        info = out["slot_info"][t - 1]
        for k, name in enumerate(COSTS):
            if not _close(info[f"fractional_{name}"], costs[k]):
                bad.append(f"slot {t} fractional_{name} = {info[f'fractional_{name}']}; recomputed {costs[k]}")
        va, vp = f["v"][act], prev_v[act]
        reg = float((inst.c[act, None] / sigma * ((va + eps) * np.log((va + eps) / (vp + eps)) - va)).sum())
        objective = costs[0] + costs[1] + costs[3] + reg  # Eq. (10)
        if not _close(info["objective"], objective, rel=1e-6, abs_=1e-6):
            bad.append(f"slot {t} objective of (10) = {info['objective']}; recomputed {objective}")
        # P_f's rows (8a)-(8j) at the point; the price rows (8c)-(8e) with the recorded M hold for both price forms
        y, s, v, q, g = (f[k][act] for k in ("y", "s", "v", "q", "g"))
        h = inst.h(f["y"], f["s"])
        D, N = inst.D(t)[act], inst.N(t)[act]
        rows = {"8a": inst.P[act, None] * y - q.sum(axis=1), "8b": -np.abs(q.sum(axis=2) - D),
                "8c": f["x"] - (inst.a * h - M * f["u1"]), "8d": f["x"] - (inst.b * h + e - M * f["u2"]),
                "8e": -np.abs(f["u1"] + f["u2"] - 1), "8f": -np.abs(s.sum(axis=1) - 1), "8g": U * v - y - s,
                "8i": -np.abs(g.sum(axis=2) - y), "8j": g.sum(axis=1) - s * N[:, None]}
        scale = 1.0 + max(float(D.max(initial=0.0)), float(np.abs(inst.a * h).max(initial=0.0)))
        for name, slack in rows.items():
            if slack.size and slack.min() < -feas_tol * scale:
                bad.append(f"slot {t} ({name}) violated by {-slack.min():.3g} at the fractional point")
        prev_v = np.where(act[:, None], f["v"], 0.0)
    frac = out["fractional_costs"]
    for k, name in enumerate(COSTS):
        if not _close(frac[name], totals[k]):
            bad.append(f"fractional_costs.{name} = {frac[name]}; recomputed {totals[k]}")
    if not _close(frac["total"], totals.sum()):
        bad.append(f"fractional_costs.total = {frac['total']}; recomputed {totals.sum()}")
    return bad


def recheck_rounding(inst, out):
    """A_round per slot from the trace: candidates floor / ceil of y~, (P2) weight preservation with the final
    round-up (Lemma 1), Round2_y's ceiling, ybar = the candidates' maximum (plus the repair's workers), the
    paper's ybar >= y~ sums, the PS drawn where s~ > 0; and (P1) over the whole run.

    Returns ``(problems, stats)``; stats: per candidate kind, ``(entries, ups - sum p, sum p (1 - p), groups)``.
    """
    bad, tol = [], out["params"]["rounding_tol"]
    paper = out["params"]["rounding_variant"] == "paper"
    names = out["fractional"]["candidates"]
    K = len(inst.resources)
    assert names == [f"Round1_y:{r}" for r in inst.resources] + ["Round2_y"]
    stats = {name: [0, 0.0, 0.0, 0] for name in names}
    sched = out["schedule"]["slots"]
    for t, rec in enumerate(out["fractional"]["slots"], start=1):
        f = _fractional_slot(inst, rec)
        act = np.flatnonzero(inst.active(t))
        yt = f["y"][act]  # y~ (J, R)
        near = np.rint(yt)
        integral = np.abs(yt - near) <= tol
        lo = np.where(integral, near, np.floor(yt))
        hi = np.where(integral, near, np.floor(yt) + 1)
        cand = np.zeros((K + 1, act.size, inst.R))
        added, ps = np.zeros(act.size), np.zeros(act.size, dtype=int)
        for j, i in enumerate(act):
            entry = rec["rounding"]["jobs"][str(i)]
            for r, values in entry["candidates"].items():
                cand[:, j, int(r)] = values
            added[j], ps[j] = entry["workers_added"], entry["ps"]
        ybar = _dense(sched[t - 1].get("y", []), (inst.I, inst.R))[act]
        sbar = _dense(sched[t - 1].get("s", []), (inst.I, inst.R))[act]
        if ((cand < lo) | (cand > hi)).any():
            bad.append(f"slot {t}: a candidate is not floor or ceil of y~")
        for k in range(K):  # Round1_y per DC, weights n_{i,k}: 0 <= sum w c - sum w y~ < max w (+ snapping)
            w = inst.n[act, k]
            diff = w @ cand[k] - w @ yt
            slack = 2 * tol * w.sum() + 1e-9
            if (diff < -slack).any() or (diff >= w.max(initial=0.0) + slack).any():
                bad.append(f"slot {t}: Round1_y for {inst.resources[k]} breaks weight preservation: {diff}")
        diff2 = cand[K].sum(axis=1) - yt.sum(axis=1)  # Round2_y: sum_r c = ceil(sum_r y~)
        if (diff2 < -2 * inst.R * tol).any() or (diff2 >= 1 + 2 * inst.R * tol).any():
            bad.append(f"slot {t}: Round2_y's row sums are not the ceilings of sum_r y~: {diff2.tolist()}")
        top = cand.max(axis=0)
        if (ybar < top).any() or not np.array_equal((ybar - top).sum(axis=1), added):
            bad.append(f"slot {t}: ybar is not the candidates' maximum plus the repair's workers")
        if paper and added.any():
            bad.append(f"slot {t}: the paper's A_round added workers")
        # where the paper states ybar >= y~: the weighted sums of Lemma 1 and the job's capacity, (8a) + (8b)
        if ((inst.n[act].T @ ybar) < (inst.n[act].T @ yt) - 2 * tol * inst.n[act].sum(axis=0)[:, None]).any():
            bad.append(f"slot {t}: sum_i n_ik ybar_i^r < sum_i n_ik y~_i^r")
        if (ybar.sum(axis=1) < yt.sum(axis=1) - 2 * inst.R * tol).any():
            bad.append(f"slot {t}: sum_r ybar_i^r < sum_r y~_i^r")
        if (inst.P[act] * ybar.sum(axis=1) < inst.D(t)[act].sum(axis=1) * (1 - 1e-9)).any():
            bad.append(f"slot {t}: a job's workers cannot process its data")
        if not (sbar[np.arange(act.size), ps] == 1).all() or (f["s"][act][np.arange(act.size), ps] <= 0).any():
            bad.append(f"slot {t}: a PS is not the drawn DC or was drawn where s~ = 0")
        p = yt - lo
        frac = ~integral
        for k, name in enumerate(names):
            keep = frac if k == K else frac & (inst.n[act, k] > 0)[:, None]
            st = stats[name]
            st[0] += int(keep.sum())
            st[1] += float((cand[k] - lo - p)[keep].sum())
            st[2] += float((p * (1 - p))[keep].sum())
            st[3] += int(keep.any(axis=0).sum()) if k < K else int(keep.any(axis=1).sum())
    for name, (entries, excess, var, groups) in stats.items():
        # (P1): E[c] = y~ before the final round-up, which adds under 1 per group; the variance is at most
        # independent rounding's (pairwise rounding is negatively correlated) plus the round-ups' own
        sd = math.sqrt(var + groups / 4)
        if not (-4 * sd - 1e-9 <= excess <= groups + 4 * sd + 1e-9):
            bad.append(f"{name}: sum over {entries} fractional entries of (c - y~) = {excess:.3f}, outside "
                       f"[-4 sd, groups + 4 sd] = [{-4 * sd:.3f}, {groups + 4 * sd:.3f}]")
    return bad, stats


# -- out.json recomputed from the instance and itself -----------------------------------------------------------


def _mlbroker_json(small, tmp_path, capsys, *extra):
    out_path = tmp_path / "out.json"
    code, out, err = run(capsys, "run", small, "--trace-fractional", "--seed", "4", *extra, "--json", out_path)
    assert code == 0 and "verified True" in out, err
    return json.loads(out_path.read_text())


@pytest.mark.parametrize(("form", "rounding"), [("tight", "package"), ("bigm", "paper")])
def test_an_independent_checker_recomputes_out_json(small, tmp_path, capsys, form, rounding):
    data = _mlbroker_json(small, tmp_path, capsys, "--price-form", form, "--rounding", rounding)
    assert (data["policy"], data["seed"]) == ("mlbroker", 4)
    params = data["params"]
    assert (params["price_form"], params["rounding"], params["rounding_variant"]) == (form, "a_round", rounding)
    assert params["epsilon"] == 0.1 and params["sigma"] == pytest.approx(math.log(11.0))
    assert params["solver"] == data["provenance"]["solver"] and params["solver"]["name"] == "clarabel"
    assert params["lp_solver"]["name"] == "highs" and data["big_m"]["M_used"] == (form == "bigm")
    inst = Inst(small)
    assert recheck_costs(inst, data) == []
    assert recheck_fractional(inst, data) == []
    problems, stats = recheck_rounding(inst, data)
    assert problems == []
    if form == "bigm":  # the big-M relaxation leaves many y~ fractional: (P1) is tested on over a hundred entries
        assert all(entries >= 100 for entries, *_ in stats.values()), stats


def test_the_checker_catches_what_does_not_add_up(small, tmp_path, capsys):
    data = _mlbroker_json(small, tmp_path, capsys, "--price-form", "bigm")
    inst = Inst(small)

    def tampered(change):
        copy = json.loads(json.dumps(data))
        change(copy)
        return copy

    assert recheck_costs(inst, tampered(lambda d: d["slots"][2]["costs"].update(C2=1.0)))
    assert recheck_costs(inst, tampered(lambda d: d.update(total_cost=d["total_cost"] * (1 + 1e-6))))
    assert recheck_fractional(inst, tampered(lambda d: d["params"].update(epsilon=0.2)))  # the objective of (10)
    assert recheck_fractional(inst, tampered(lambda d: d["fractional_costs"].update(C4=1.0)))

    def smaller_m(d):
        for per in d["big_m"]["M"].values():
            for k in per:
                per[k] /= 10
    assert any("(8c)" in p or "(8d)" in p for p in recheck_fractional(inst, tampered(smaller_m)))
    slot = next(s for s in data["fractional"]["slots"] if s["rounding"]["jobs"])
    t, job = slot["slot"], next(iter(slot["rounding"]["jobs"]))
    dc = next(iter(slot["rounding"]["jobs"][job]["candidates"]))

    def bump(d):  # one candidate one worker higher: off its floor / ceil or off the weighted sum
        cands = d["fractional"]["slots"][t - 1]["rounding"]["jobs"][job]["candidates"][dc]
        cands[0] += 1
    assert recheck_rounding(inst, tampered(bump))[0]


def test_paper_and_package_rounding_agree_where_no_repair_fires(small, tmp_path, capsys):
    a = _mlbroker_json(small, tmp_path, capsys, "--rounding", "package")
    b = _mlbroker_json(small, tmp_path, capsys, "--rounding", "paper")
    assert all(d["workers_added"] == 0 for d in a["slot_info"])
    assert a["schedule"] == b["schedule"] and a["total_cost"] == b["total_cost"]


@pytest.mark.parametrize("policy", ["local", "central", "oasis"])
def test_baseline_outputs_record_policy_seed_params(small, tmp_path, capsys, policy):
    out_path = tmp_path / "out.json"
    assert run(capsys, "run", small, "--policy", policy, "--seed", "2", "--json", out_path)[0] == 0
    data = json.loads(out_path.read_text())
    assert (data["policy"], data["seed"]) == (policy, 2)
    assert data["params"] == ({"time_limit": 10.0} if policy == "oasis" else {})
    assert "fractional" not in data and "big_m" not in data and data["provenance"]["solver"]["name"] == "highs"
    assert recheck_costs(Inst(small), data) == []


def test_trace_and_rounding_options_are_mlbrokers(small, tmp_path, capsys):
    code, _, err = run(capsys, "run", small, "--trace-fractional")
    assert code == 2 and "--trace-fractional writes into the --json output" in err
    for option in (["--trace-fractional"], ["--rounding", "paper"]):
        code, _, err = run(capsys, "run", small, "--policy", "central", *option, "--json", tmp_path / "o.json")
        assert code == 2 and f"{option[0]} is a parameter of mlbroker, not of central" in err
    code, _, err = run(capsys, "run", small, "--rounding", "safe")
    assert code == 2 and "--rounding safe is GADGET's; mlBroker takes package (default) or paper" in err
