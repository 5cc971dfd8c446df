"""The benchmarks stay runnable: each one's quick mode finishes and checks its own answers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from benchmarks import persistent_resolve, run_all


def test_run_all_finds_the_benchmarks():
    assert "persistent_resolve" in run_all.benchmark_modules()
    assert "run_all" not in run_all.benchmark_modules()


def test_the_benchmarks_readme_describes_every_benchmark():
    from pathlib import Path

    readme = (Path(run_all.__file__).parent / "README.md").read_text()
    missing = [m for m in run_all.benchmark_modules() if f"`{m}.py`" not in readme]
    assert not missing, f"benchmarks/README.md does not describe {missing}"


@pytest.mark.slow  # a benchmark's quick mode of 10-20 s: `make test-slow`
def test_persistent_resolve_quick(tmp_path, capsys):
    code = persistent_resolve.main(["--quick", "--slots", "2", "--variants", "lp", "--out", str(tmp_path)])
    assert code == 0
    report = json.loads((tmp_path / "persistent_resolve.json").read_text())
    methods = report["variants"]["lp"]["methods"]
    assert set(methods) == set(persistent_resolve.METHODS)
    for m in methods.values():
        assert len(m["slots"]) == 3
        assert set(m["median"]) == set(persistent_resolve.FIELDS)
    assert "| pyomo-persistent |" in (tmp_path / "persistent_resolve.md").read_text()
    assert "all four methods" in capsys.readouterr().out.lower()


@pytest.mark.slow  # a benchmark's quick mode of 10-20 s: `make test-slow`
def test_sweep_overhead_quick(tmp_path):
    from benchmarks import sweep_overhead

    assert sweep_overhead.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "sweep_overhead.json").read_text())
    assert 0 < report["cell_process"]["round_trip_s"] < report["cell_process"]["cell_process_start_s"]
    assert set(report["sweeps"]["worker-placement-gap --quick"]) == {"serial", "joblib-2"}


def test_solve_routes_quick(tmp_path, capsys):
    from benchmarks import solve_routes

    assert solve_routes.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "solve_routes.json").read_text())
    assert [r["route"] for r in report["routes"]] == [c["route"] for c in solve_routes.QUICK]
    for row in report["routes"]:
        assert row["agree"] and row["package"]["backend"] == "matrix"  # the array form, same optimum
        assert row["overhead_cpu_s"] is not None and row["package"]["solver_cpu_s"] > 0
        assert row["model_route"]["objective"] == pytest.approx(row["bare"]["objective"], rel=1e-8)
    assert "| route |" in capsys.readouterr().out


def test_coflow_scale_quick(tmp_path):
    from benchmarks import coflow_scale

    assert coflow_scale.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "coflow_scale.json").read_text())
    assert [case["release"] for case in report["cases"]] == [True, False]
    for case in report["cases"]:
        seed = case["seeds"][0]
        assert seed["lp"]["converged"]
        assert len(seed["runs"]) == 2 * len(coflow_scale.POLICIES)
        assert all(r["ratio"] >= 1 - 1e-9 for r in seed["runs"].values())
    assert "## all released at 0" in (tmp_path / "coflow_scale.md").read_text()


@pytest.mark.slow  # a benchmark's quick mode of 10-20 s: `make test-slow`
def test_realtime_speed_quick(tmp_path):
    from benchmarks import realtime_speed

    assert realtime_speed.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "realtime_speed.json").read_text())
    case = report["speed"][0]
    assert set(case["runs"]) == {*realtime_speed.POLICIES, "max-weight (ilp)"}
    assert case["ilp_vs_search"]["max_rel_diff"] <= 1e-7
    assert report["exact"][0]["states"] == 512 and report["exact"][0]["theta"] > 0
    assert all(0.5 < r["area_ratio"] <= r["area_ratio_strict"] < 1.5 for r in report["quality"])
    assert "## (c) region quality" in (tmp_path / "realtime_speed.md").read_text()


def test_gadget_slot_quick(tmp_path):
    from benchmarks import gadget_slot

    assert gadget_slot.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "gadget_slot.json").read_text())
    case = report["cases"][0]
    assert set(case["forms"]) == {"tree", "flow", "tree-arrays"}
    forms = case["forms"]
    # the array route builds the tree form: the same size, and the same optimum when both prove it
    assert forms["tree-arrays"]["variables"] == forms["tree"]["variables"]
    if forms["tree"]["termination"] == forms["tree-arrays"]["termination"] == "OPTIMAL":
        assert abs(forms["tree"]["objective"] - forms["tree-arrays"]["objective"]) <= 1e-6 * max(
            1.0, abs(forms["tree"]["objective"]))
    assert all(f["overhead_over_solve"] >= 0 for f in forms.values())
    assert case["greedy"]["objective"] <= case["bound"] + 1e-6
    assert "greedy / best bound" in (tmp_path / "gadget_slot.md").read_text()


def test_gadget_online_quick(tmp_path):
    from benchmarks import gadget_online

    assert gadget_online.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "gadget_online.json").read_text())["cases"][0]
    runs = {r["policy"]: r for r in report["runs"]}
    assert set(runs) == {"gadget (lp-rs-mde)", "gadget (greedy)", "fifo", "drf", "las"}
    assert all(r["total_utility"] <= report["alone_bound"] + 1e-6 for r in runs.values())
    assert runs["gadget (lp-rs-mde)"]["slot_times"]["slots"] > 0
    assert "median HiGHS solve s" in (tmp_path / "gadget_online.md").read_text()


@pytest.mark.slow  # a benchmark's quick mode of 10-20 s: `make test-slow`
def test_broker_quick(tmp_path):
    from benchmarks import broker

    assert broker.main(["--quick", "--out", str(tmp_path)]) == 0
    seed = json.loads((tmp_path / "broker.json").read_text())["cases"][0]["seeds"][0]
    assert set(seed["runs"]) == {label for label, _, _ in broker.POLICIES}
    assert seed["milp"]["optimal"]
    assert all(r["total_cost"] >= seed["milp"]["value"] - 1e-6 for r in seed["runs"].values())
    assert seed["lp"]["tight"]["value"] <= seed["milp"]["value"] + 1e-6
    assert seed["runs"]["mlbroker"]["slot_times"]["slots"] > 0 and seed["scs"]
    assert all(a["rel_diff_vs_mlbroker_fractional"] < 1e-6 for a in seed["afractional_standalone"].values())
    assert "## (a) problem (10) per slot" in (tmp_path / "broker.md").read_text()


@pytest.mark.slow  # a benchmark's quick mode of 10-20 s: `make test-slow`
def test_broker_retries_quick(tmp_path):
    from benchmarks import broker_retries

    assert broker_retries.main(["--quick", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "broker_retries.json").read_text())["summary"]
    assert summary["slot_problems"] == 19 and summary["unsolved_by_every_setting"] == 0
    # the ladder solves every slot problem; the settings agree on the optimum
    assert "none" not in summary["ladder_attempts"]
    assert sum(summary["ladder_attempts"].values()) == summary["slot_problems"]
    assert summary["max_rel_objective_spread"] < 1e-5
    assert "| defaults |" in (tmp_path / "broker_retries.md").read_text()


def test_broker_integral_step_quick(tmp_path):
    from benchmarks import broker_integral_step

    assert broker_integral_step.main(["--quick", "--out", str(tmp_path)]) == 0
    rec = json.loads((tmp_path / "broker_integral_step.json").read_text())["instances"][0]
    rows = {r["policy"]: r for r in rec["rows"]}
    assert set(rows) == {"A_fractional", "mlbroker", "mlbroker-plus (fix ps, gap 0.005)", "central", "oasis"}
    assert all(r["verified"] for name, r in rows.items() if name != "A_fractional")
    assert all(r["total"] >= rec["P_f"] * (1 - 1e-6) for name, r in rows.items() if name != "A_fractional")
    plus = rows["mlbroker-plus (fix ps, gap 0.005)"]
    assert plus["slots"] == 6 and plus["milp_solve_median_s"] >= 0
    assert "| A_fractional |" in (tmp_path / "broker_integral_step.md").read_text()


def test_ring_online_quick(tmp_path):
    from benchmarks import ring_online

    assert ring_online.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "ring_online.json").read_text())
    assert set(report["speed"]) == set(ring_online.POLICIES)
    for row in report["speed"].values():
        assert row["max_load_over_k"] <= row["augmentation"] + 1e-9 and row["wall_s"] > 0 and row["cpu_s"] > 0
    assert set(report["growth_exponent"]) == set(ring_online.POLICIES)


def test_ring_mix_quick(tmp_path):
    """The combined MTS next to the paper's: every run verified inside the benchmark, the paper's policies
    reproduce the record's costs (it raises otherwise), and the reported ratios are the runs' own."""
    from benchmarks import ring_mix
    from clusteropt.algorithms.ring.mts.mix import DEFAULT_RATE

    assert ring_mix.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "ring_mix.json").read_text())
    rows = report["instances"]
    assert {r["experiment"] for r in rows} == set(ring_mix.EXPERIMENTS)
    mix = f"dynamic-mix@{DEFAULT_RATE:g}"
    for r in rows:
        assert all(r[f"{p} load"] <= 3.0 + 1e-9 for p in ("dynamic", "dynamic-wfa", mix))  # c = 2 + eps, eps = 1
    # on the sequences built against dynamic-wfa the combination pays far less than dynamic-wfa
    htc = [r for r in rows if r["experiment"] == "ring-hit-the-cut"]
    assert htc and all(r[mix] < 0.5 * r["dynamic-wfa"] for r in htc)
    gm = {s["rate"]: s["gm_over_best"] for s in report["rates"]}
    assert set(gm) == set(ring_mix.QUICK_RATES)
    for rate, value in gm.items():  # the summary is the runs' own: recomputed from the instances
        q = [r[f"dynamic-mix@{rate:g}"] / min(r["dynamic"], r["dynamic-wfa"]) for r in rows]
        assert value == pytest.approx(float(np.exp(np.mean(np.log(q)))), rel=1e-12)
    assert "| rate | gm / best |" in (tmp_path / "ring_mix.md").read_text()
    assert ring_mix.factor(0.5, 10**9) == pytest.approx(1.5 * 0.5 / (1 - np.exp(-0.5)), rel=1e-6)


def test_model_memory_quick(tmp_path):
    from benchmarks import model_memory

    assert model_memory.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "model_memory.json").read_text())
    (row,) = report["results"]["coflow_milp"]
    assert row["variables"] > 0 and row["bytes_per_variable"] > 100
    (cell,) = report["results"]["realtime_environment"]
    assert cell["bytes_per_frame_cell"] > 2  # two boolean arrays per cell at least


def test_gadget_warm_quick(tmp_path):
    from benchmarks import gadget_warm

    assert gadget_warm.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "gadget_warm.json").read_text())
    assert report["lp_values_equal"] and report["runs"]["warm"]["select_warm_slots"] > 0
    assert report["runs"]["cold"]["select_warm_slots"] == 0
    assert "warm slots" in (tmp_path / "gadget_warm.md").read_text()
    assert gadget_warm.main(["--quick", "--case", "fig4-1000", "--out", str(tmp_path)]) == 0
    fig4 = json.loads((tmp_path / "gadget_warm_fig4-1000.json").read_text())
    assert fig4["parameters"]["options"] == {"embed_route": "colgen", "select_route": "capacity"}
    assert fig4["lp_values_equal"] and fig4["code_version"].startswith("0.1.0+")


def test_gadget_servers_quick(tmp_path):
    from benchmarks import gadget_servers

    assert gadget_servers.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "gadget_servers.json").read_text())
    assert report["lp_values_equal"] and {r["route"] for r in report["rows"]} == set(gadget_servers.ROUTES)
    assert all(r["verified"] for r in report["rows"])
    assert all(min(r["colgen_rounds"]) >= 1 for r in report["rows"] if r["route"] != "paper")
    assert "colgen-ipm" in (tmp_path / "gadget_servers.md").read_text()
    assert gadget_servers.main(["--quick", "--cluster", "racks", "--out", str(tmp_path)]) == 0
    racks = json.loads((tmp_path / "gadget_servers_racks.json").read_text())
    assert racks["lp_values_equal"] and {r["route"] for r in racks["rows"]} == set(gadget_servers.RACK_ROUTES)
    assert all(r["params"]["select_classes"] for r in racks["rows"] if r["route"].startswith("classes"))


@pytest.mark.slow  # about 100 s of one worker: `make test-slow`
def test_session_benchmarks_quick(tmp_path):
    """The quick modes of the benchmarks that compare two routes or bound an optimum: they run, write
    their files, and check their own agreement (each raises when its routes disagree)."""
    from benchmarks import (
        broker_arrays,
        broker_integrality_gap,
        coflow_lp_routes,
        colgen_master,
        realtime_ilp,
        ring_cut_lp,
        ring_dynamic_bracket,
        ring_phases,
    )

    for module in (broker_arrays, coflow_lp_routes, realtime_ilp, ring_phases, broker_integrality_gap,
                   colgen_master):
        assert module.main(["--quick", "--out", str(tmp_path)]) == 0
        assert (tmp_path / f"{module.NAME}.md").is_file()
    coflow = json.loads((tmp_path / "coflow_lp_routes.json").read_text())["cases"][0]["routes"]
    assert coflow["pyomo"]["rounds"] == coflow["matrix"]["rounds"]
    broker = json.loads((tmp_path / "broker_arrays.json").read_text())["cases"]
    assert all(c["routes"]["arrays"]["overhead_over_solve"] >= 0 for c in broker)
    gap = json.loads((tmp_path / "broker_integrality_gap.json").read_text())
    assert all(r["opt_over_pf_mean"] >= 1 - 1e-9 for r in gap["sizes"])
    assert ring_dynamic_bracket.main(["--quick", "--out", str(tmp_path)]) == 0
    bracket = json.loads((tmp_path / "ring_dynamic_bracket.json").read_text())
    assert all(b["lb"] <= b["ub"] + 1e-9 for b in bracket["instances"])
    assert all(b["swap"] <= b["arc"] + 1e-9 and b["ub"] == min(b["swap"], b["opt_static"] or np.inf)
               and not b["cut_reused"] and not b["lp_reused"] for b in bracket["instances"])
    assert any(b["swap"] < b["arc"] - 1e-9 for b in bracket["instances"])
    # --reuse: the LP bounds of n <= 6 come from the first run, n = 9 is solved now; other LP options refused
    first = tmp_path / "first.json"
    first.write_text((tmp_path / "ring_dynamic_bracket.json").read_text())
    again = tmp_path / "again"
    assert ring_dynamic_bracket.main(["--quick", "--reuse", str(first), "--lp-max-n", "9", "--out", str(again)]) \
        == 0
    reran = json.loads((again / "ring_dynamic_bracket.json").read_text())
    assert reran["reused"]["file"] == str(first) and reran["reused"]["created"] == bracket["created"]
    for a, b in zip(bracket["instances"], reran["instances"], strict=True):
        assert b["cut_reused"] == (a["cut"] is not None) and b["cut"] == a["cut"]
        assert b["lp_reused"] == (a["lp"] is not None)
        assert b["lp"] == a["lp"] if b["lp_reused"] else (b["lp"] is None) == (b["n"] > 9)
    assert any(b["lp"] is not None and not b["lp_reused"] for b in reran["instances"])  # n = 8, 9: solved now
    assert "taken from" in (again / "ring_dynamic_bracket.md").read_text()
    with pytest.raises(SystemExit, match="parameter lp_chunk = 500 there, 3 here"):
        ring_dynamic_bracket.main(["--quick", "--reuse", str(first), "--lp-chunk", "3", "--out", str(again)])
    # these sequences fit one default piece, whose duals give the LP optimum; pieces of 3 compressed
    # requests give other multipliers, so (weak duality) never more, and here less somewhere
    short_args = ["--quick", "--lp-chunk", "3", "--lp-overlap", "1", "--out", str(tmp_path)]
    assert ring_dynamic_bracket.main(short_args) == 0
    short = json.loads((tmp_path / "ring_dynamic_bracket.json").read_text())
    assert short["parameters"]["lp_chunk"] == 3 and short["parameters"]["lp_overlap"] == 1
    lps = [(a["lp"], b["lp"]) for a, b in zip(bracket["instances"], short["instances"], strict=True) if a["lp"]]
    assert lps and all(s <= d * (1 + 1e-4) + 1e-6 for d, s in lps) and any(s < d - 1e-3 for d, s in lps)
    assert ring_cut_lp.main(["--quick", "--out", str(tmp_path)]) == 0
    cut_lp = json.loads((tmp_path / "ring_cut_lp.json").read_text())["instances"]
    assert len(cut_lp) == 1 and cut_lp[0]["lp0"] <= cut_lp[0]["lp"] + 1e-6 <= cut_lp[0]["opt_dynamic"] + 2e-6
    assert all(b["lb"] == max(b["window"], b["cut"] if b["n"] <= 12 else 0.0, b["lp"] if b["n"] <= 6 else 0.0,
                              b["move_lp"] if b["n"] <= 6 else 0.0)
               for b in bracket["instances"])
    assert all((b["move_lp"] is None) == (b["n"] > 6) for b in bracket["instances"])
    # the move LP relaxes OPT_dyn (the DP's, where it runs) and is at least the cut-set LP without min-move rows
    assert all(b["move_lp"] is None or b["opt_dynamic"] is None or b["move_lp"] <= b["opt_dynamic"] + 1e-6
               for b in bracket["instances"])
    assert all(b["move_lp"] is None or b["lp"] is None or b["lp"] <= b["move_lp"] * (1 + 1e-6) + 1e-5
               for b in bracket["instances"])
    # the second swap start is taken only when strictly better, and never above the static optimum's cost
    assert all(b["swap"] <= b["swap_arc"] + 1e-9 and (b["swap_start"] == "arc") == (b["swap"] == b["swap_arc"])
               for b in bracket["instances"])
    assert all((b["lp"] is None) == (b["n"] > 6) for b in bracket["instances"])
    assert all(b["lp"] is None or b["lp"] <= b["cut"] + 1e-9 for b in bracket["instances"])
    assert all(b["opt_dynamic"] is None or b["lb"] <= b["opt_dynamic"] + 1e-9 <= b["arc"] + 2e-9
               for b in bracket["instances"])


def test_ring_bound_quality_quick(tmp_path):
    from benchmarks import ring_bound_quality

    assert ring_bound_quality.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "ring_bound_quality.json").read_text())
    rows = report["instances"]
    assert len(rows) == 4 and {(r["n"], r["servers"]) for r in rows} == {(8, 4), (8, 2)}
    for r in rows:  # every lower bound below OPT_dyn, the swap search between it and the arc bound
        assert max(r["window"], r["cut"], r["lp"]) <= r["opt_dynamic"] + 1e-9 <= r["swap"] + 2e-9
        assert r["swap"] <= r["arc"] + 1e-9
    assert "| 8 | 4 | 2 | 16 | moving-hotspot |" in (tmp_path / "ring_bound_quality.md").read_text()
    with pytest.raises(SystemExit, match="--shapes"):
        ring_bound_quality.main(["--quick", "--shapes", "8x4"])
    with pytest.raises(SystemExit, match="--patterns"):
        ring_bound_quality.main(["--quick", "--patterns", "spiral"])


@pytest.mark.slow  # a benchmark's quick mode of 10-20 s: `make test-slow`
def test_gadget_fattree_quick(tmp_path):
    from benchmarks import gadget_fattree

    assert gadget_fattree.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "gadget_fattree.json").read_text())
    assert [r["k"] for r in report["rows"]] == gadget_fattree.QUICK["k"]
    assert all(r["verified"] and r["params"]["quotient"] for r in report["rows"])
    assert all(r["host_max_load"] <= 1 + 1e-9 and r["fabric_max_load"] <= 1 + 1e-9 for r in report["rows"])
    # the paper's route on the fat-tree and the quotient's solve the same selection LP
    assert report["compare_lp_equal"]
    assert {r["route"] for r in report["compare"]} == set(gadget_fattree.COMPARE_ROUTES)
    assert "| quotient-colgen |" in (tmp_path / "gadget_fattree.md").read_text()
    assert gadget_fattree.main(["--quick", "--setting", "oversubscribed", "--out", str(tmp_path)]) == 0
    over = json.loads((tmp_path / "gadget_fattree_oversubscribed.json").read_text())
    assert over["parameters"]["fabric_bw"] == 25.0 and over["compare_lp_equal"]
    assert all(r["verified"] and r["fabric_max_load"] <= 1 + 1e-9 for r in over["rows"])


def test_gadget_alibaba_quick_and_skip(tmp_path, capsys):
    """The trace benchmark on its own sample in the trace's format: every policy verified, counts
    read from the file; without the trace's files the full mode says it skipped and writes nothing."""
    from benchmarks import gadget_alibaba

    assert gadget_alibaba.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "gadget_alibaba.json").read_text())
    assert [r["policy"] for r in report["runs"]] == ["gadget (greedy)", "fifo", "drf", "las"]
    assert all(r["verified"] and r["total_utility"] <= report["alone_bound"] * (1 + 1e-12) for r in report["runs"])
    tr = report["trace"]
    assert tr["pods"] == tr["gpu_pods"] + tr["cpu_only_pods"] == 40 and tr["jobs"] == tr["gpu_pods"]
    assert len(report["inputs"]["pods"]["sha256"]) == 64
    argv = ["--quick", "--node-stride", "3", "--policies", "gadget,fifo", "--utility", "sqrt",
            "--topology", "fat-tree", "--out", str(tmp_path)]
    assert gadget_alibaba.main(argv) == 0
    small = json.loads((tmp_path / "gadget_alibaba_gadget+fifo_sqrt_fattree_stride3.json").read_text())
    assert small["parameters"]["node_stride"] == 3 and small["trace"]["servers"] == 4  # 12 nodes, every 3rd
    assert small["parameters"]["utility"] == "sqrt" and report["parameters"]["utility"] == "sigmoid"
    # 4 servers on a 4-ary fat-tree: 2 edge switches, pod 0's 2 aggregation switches, 4 core switches
    assert small["parameters"]["topology"] == "fat-tree" and small["trace"]["switches"] == 8
    assert [r["policy"] for r in small["runs"]] == ["gadget (greedy) on the quotient tree", "fifo"]
    assert small["runs"][0]["params"]["quotient"]
    assert all(r["verified"] for r in small["runs"])
    argv = ["--quick", "--last-days", "0.1", "--slots", "5", "--policies", "gadget", "--out", str(tmp_path)]
    assert gadget_alibaba.main(argv) == 0
    part = json.loads((tmp_path / "gadget_alibaba_gadget_last0.1d_first5.json").read_text())
    assert part["trace"]["pods"] < 40 and part["parameters"]["slots"] == 5 and part["runs"][0]["verified"]
    out = tmp_path / "full"
    assert gadget_alibaba.main(["--out", str(out)]) == 0
    assert "skipped" in capsys.readouterr().out and not out.exists()


def test_record_check_quick_matches_the_record(tmp_path):
    """The recorded ring cells re-run at this code make the recorded numbers (the quick slices)."""
    from benchmarks import record_check

    assert record_check.main(["--quick", "--out", str(tmp_path)]) == 0
    checks = json.loads((tmp_path / "record_check.json").read_text())["checks"]
    assert [c["experiment"] for c in checks] == ["ring-cost-split", "ring-ratio-exact"]
    assert all(c["matched"] == c["rerun"] > 0 and c["identical"] == c["matched"] for c in checks)


def test_record_check_compare_finds_what_differs():
    from benchmarks.record_check import compare

    rec = pd.DataFrame({"experiment": ["e"] * 3, "code_version": ["a"] * 3, "n": [1, 1, 2], "seed": [0, 1, 0],
                        "cell_seed": [7, 8, 9], "policy": ["p"] * 3, "status": ["ok"] * 3,
                        "cost": [1.0, 2.0, np.nan], "note": ["x", "y", None]})
    now = rec.assign(code_version="b")
    assert compare(rec, now)["identical"] == 3  # another code version, the same numbers
    now.loc[1, "cost"] = 2.0 + 1e-6
    now.loc[2, "note"] = "z"
    out = compare(rec, now.iloc[1:])  # the first cell not re-run
    assert (out["matched"], out["identical"], out["different"]) == (2, 0, 2)
    assert out["columns_differing"] == {"cost": 1, "note": 1}
    assert out["largest_relative"] == {"cost": pytest.approx(5e-7)}  # numbers only: note is text
    assert out["different_cells"] == ["n=1, seed=1, policy=p", "n=2, seed=0, policy=p"]
    gone = compare(rec, rec.drop(columns="note"))  # a recorded metric the code no longer makes
    assert gone["different"] == 2 and gone["columns_differing"] == {"note (absent now)": 2}  # not the empty one
    with pytest.raises(ValueError, match="no column n: the experiment's grid changed"):
        compare(rec, now.drop(columns="n"))


def test_record_check_reports_a_version_change_as_such():
    """The environment columns are not compared as numbers; versions are compared with the record's
    (or the lock's) and a change is named (issue 42).
    """
    from benchmarks.record_check import compare, lock_versions, parse_versions, reference_versions, version_changes
    from clusteropt.provenance import environment, environment_text

    rec = pd.DataFrame({"experiment": ["e"], "code_version": ["a"], "n": [1], "seed": [0], "cell_seed": [7],
                        "policy": ["p"], "status": ["ok"], "cost": [1.0], "environment": ["x1"],
                        "versions": ["python 3.11.7, highspy 1.15.1"], "git_commit": ["abc"]})
    now = rec.assign(environment="x2", versions="python 3.11.7, highspy 1.16.0", git_commit="def")
    assert compare(rec, now)["identical"] == 1  # other versions and commit, the same numbers
    ref, source = reference_versions(rec)
    assert source == "record" and ref == {"python": "3.11.7", "highspy": "1.15.1"}
    assert version_changes(ref, parse_versions(now.versions[0])) == ["highspy 1.15.1 -> 1.16.0"]
    ref, source = reference_versions(rec.drop(columns=["environment", "versions", "git_commit"]))
    assert source == "lock" and ref == lock_versions() and ref["highspy"]
    here = environment()
    assert parse_versions(environment_text(here)) == here
    with pytest.raises(ValueError, match="mixes 2 library environments"):
        reference_versions(pd.concat([rec, now]))


def test_record_check_explains_only_tolerance_and_declared_columns_under_changed_versions():
    from benchmarks.record_check import SOLVER_TOLERANCE, compare

    rec = pd.DataFrame({"experiment": ["e"] * 3, "code_version": ["a"] * 3, "n": [1, 1, 1], "seed": [0, 1, 2],
                        "cell_seed": [7, 8, 9], "policy": ["lp", "lp", "exact"], "status": ["ok"] * 3,
                        "cost": [1.0, 2.0, 3.0], "draws": [5.0, 5.0, 5.0]})
    now = rec.copy()
    now.loc[0, "cost"] = 1.0 * (1 + SOLVER_TOLERANCE / 2)  # the solvers' tolerance
    now.loc[1, "draws"] = 6.0  # a declared column of policy lp
    now.loc[2, "draws"] = 6.0  # the same column of another policy: not declared for it
    sensitive = ((("lp",), ("draws",), "vertex"),)
    same = compare(rec, now, sensitive=sensitive)  # the record's versions: every difference counts
    assert same["different"] == same["unexplained"] == 3
    changed = compare(rec, now, versions_changed=True, sensitive=sensitive)
    assert changed["different"] == 3 and changed["unexplained"] == 1
    assert changed["columns_unexplained"] == {"draws": 1}


def test_record_check_slices_are_grid_values():
    """Every slice names values of its experiment's grid (so it keeps the recorded cell seeds)."""
    from benchmarks.record_check import SLICES, _grid_values
    from clusteropt.experiments import EXPERIMENTS, get_experiment

    assert set(SLICES) == set(EXPERIMENTS) - {n for n in EXPERIMENTS if n.startswith("test-")}
    for name, wanted in SLICES.items():
        assert _grid_values(get_experiment(name), wanted).keys() == wanted.keys()
    with pytest.raises(ValueError, match=r"n = \[5\] not all in its grid"):
        _grid_values(get_experiment("ring-ratio-exact"), {"n": [5]})


@pytest.mark.slow  # a benchmark's quick mode of 10-20 s: `make test-slow`
def test_ring_follow_quick(tmp_path):
    """Which policy: every run verified inside the benchmark, one row per (instance, policy), and the
    tables are the rows' own ratios to the better baseline."""
    from benchmarks import ring_follow

    assert ring_follow.main(["--quick", "--out", str(tmp_path)]) == 0
    rows = pd.DataFrame(json.loads((tmp_path / "ring_follow.json").read_text())["rows"])
    assert len(rows) == len(ring_follow.cases(True)) * (len(ring_follow.POLICIES) + 2)
    setting, summary = ring_follow.tables(rows)
    base = setting[["never", "greedy"]].min(axis=1)
    assert (base >= 1 - 1e-9).all()   # a mean of minima is at most each mean
    assert set(summary.variant) == {"follow@0.5", "follow-diameter@0.5"}
    assert "## By pattern" in (tmp_path / "ring_follow.md").read_text()


def test_ring_dynamic_milp_quick(tmp_path):
    from benchmarks import ring_dynamic_milp

    assert ring_dynamic_milp.main(["--quick", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "ring_dynamic_milp.json").read_text())
    assert len(report["cases"]) == len(ring_dynamic_milp.QUICK)
    for case in report["cases"]:  # small enough to be proved, and the proof is the DP's value
        assert case["proven"] and case["objective"] == pytest.approx(case["dp"], abs=1e-6)
        assert case["binaries"] == case["steps"] * case["n"] * case["servers"]
    assert [r["method"] for r in report["dp"]] == [c[4] for c in ring_dynamic_milp.QUICK_DP]
    assert all(r["ms_per_step"] > 0 for r in report["dp"])


def test_gadget_lp_methods_quick(tmp_path):
    from benchmarks import gadget_lp_methods

    assert gadget_lp_methods.main(["--quick", "--out", str(tmp_path)]) == 0
    rows = pd.DataFrame(json.loads((tmp_path / "gadget_lp_methods.json").read_text())["rows"])
    assert set(rows.lp) == {"select", "embed"}
    for _, group in rows.groupby(["slot", "lp"]):
        assert group.package_default.sum() == 1  # the package's choice is one of the algorithms timed
        assert group.objective.max() - group.objective.min() <= 1e-6 * max(1.0, group.objective.abs().max())


def test_file_check_quick(tmp_path):
    """The structural check's cost on files the package writes: every file accepted, HiGHS reads it."""
    from benchmarks import file_check

    assert file_check.main(["--quick", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "file_check.json").read_text())["rows"]
    assert {(r["model"], r["format"]) for r in rows} == {(m, f) for m in ("broker-milp", "broker-lp")
                                                         for f in ("lp", "mps")}
    assert all(r["mib"] > 0 and r["check_cpu_s"] > 0 for r in rows)


def test_coflow_speed_times_a_trace_in_the_benchmark_format(tmp_path):
    """`python -m benchmarks.coflow_speed --trace FILE`: the trace part on the package's small sample
    of the Facebook file's format (the real trace is not in the repository)."""
    import hashlib

    from benchmarks import coflow_speed
    from clusteropt.data import sample_path

    path = sample_path("coflow/small_benchmark.txt")
    row = coflow_speed._trace(path, tmp_path)
    assert row["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest() and row["bytes"] == path.stat().st_size
    assert row["online"]["same"] and row["flows"] > 0
    assert row["import"]["cpu_s"] > 0 and row["cli_online"]["cpu_s"] > 0
    assert (tmp_path / "fb-out.json").exists()
    report = {"machine": {"platform": "p", "cpu_count": 2}, "created": "c", "code_version": "v", "config": {},
              "compile": {"empty_cache": {"cpu_s": 1.0}, "filled_cache": {"cpu_s": 0.1}}, "seeds": [],
              "trace": row}
    text = coflow_speed._markdown(report)
    assert "small_benchmark.txt" in text and "`clusteropt run --online` (CLI process)" in text
