"""``clusteropt generate gadget``, ``run`` and ``build --model gvne`` on paper 000 instances."""

from __future__ import annotations

import dataclasses
import json

import pytest

from clusteropt.cli import main
from clusteropt.decisions.gadget import GadgetSchedule
from clusteropt.instances import load_instance
from clusteropt.verify import check_gadget_schedule


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small(tmp_path, capsys):
    path = tmp_path / "g.json"
    code, out, _ = run(capsys, "generate", "gadget", "--preset", "small", "--jobs", "8", "--utility", "log",
                       "--seed", "1", "-o", path)
    assert code == 0 and "8 jobs over T = 20" in out
    return path


@pytest.mark.parametrize("policy", ["gadget", "fifo", "drf", "las"])
def test_run_writes_a_checkable_schedule(small, tmp_path, capsys, policy):
    out_path = tmp_path / "out.json"
    code, out, _ = run(capsys, "run", small, "--policy", policy, "--json", out_path)
    assert code == 0 and "verified True" in out
    data = json.loads(out_path.read_text())
    inst = load_instance(small)
    # anyone can re-check the file: rebuild the schedule from the JSON alone and verify it
    schedule = GadgetSchedule.from_json_list(data["slots"], inst.n_jobs, inst.cluster.n_servers)
    check = check_gadget_schedule(inst, schedule)
    assert check.ok and data["verified"] is True
    assert data["total_utility"] == pytest.approx(check.total_utility)
    assert len(data["slots"]) == inst.horizon
    for slot in data["slots"]:
        for entry in slot["jobs"].values():
            if len(entry["workers"]) >= 2:
                ring = entry["ring"]
                assert sorted(ring["servers"]) == sorted(int(s) for s in entry["workers"])
                assert all(h[0] == s for h, s in zip(ring["hops"], ring["servers"], strict=True))


def test_exact_slot_solver_and_model_export(small, tmp_path, capsys):
    code, out, _ = run(capsys, "run", small, "--slot-solver", "exact")
    assert code == 0 and "gadget (exact)" in out and "verified True" in out
    lp = tmp_path / "slot.lp"
    code, out, _ = run(capsys, "build", small, "--model", "gvne", "--slot", "20", "--export", lp)
    assert code == 0 and "eq12" in out and lp.is_file()
    code, out, _ = run(capsys, "solve", small, "--model", "gvne", "--slot", "20")
    assert code == 0 and "optimal" in out


def test_job_ids_map_positions_back_to_the_instance(small, tmp_path, capsys):
    inst = load_instance(small)
    named = tmp_path / "named.json"
    ids = [f"trace-job-{i}" for i in reversed(range(inst.n_jobs))]
    dataclasses.replace(inst, job_ids=ids).to_json(named)
    assert load_instance(named).job_ids == tuple(ids)
    code, _, _ = run(capsys, "run", named, "--json", tmp_path / "out.json")
    data = json.loads((tmp_path / "out.json").read_text())
    assert code == 0 and data["job_ids"] == ids and set(data["worker_slots"]) == {str(i) for i in range(len(ids))}
    code, _, _ = run(capsys, "solve", named, "--model", "gvne", "--slot", "20", "--json", tmp_path / "s.json")
    data = json.loads((tmp_path / "s.json").read_text())
    assert code == 0 and data["job_ids"] == ids
    # the model's job index (first entry of every rho row) is a position into job_ids
    assert {row[0] for row in data["labelled_values"]["rho"]} <= set(range(len(ids)))


def test_bad_input_is_one_line(small, tmp_path, capsys):
    code, _, err = run(capsys, "run", small, "--policy", "srtf")
    assert code == 2 and "unknown --policy 'srtf'; gadget instances take gadget, fifo, drf, las" in err
    assert "Traceback" not in err
    code, _, err = run(capsys, "build", small, "--model", "gvne", "--slot", "99")
    assert code == 2 and "1 .. 20" in err
    code, _, err = run(capsys, "generate", "gadget", "--jobs", "0", "-o", tmp_path / "x.json")
    assert code == 2 and "n_jobs" in err


# -- issue 19: what out.json records, fill / rounding options --------------------------------------

PARAM_KEYS = {"slot_solver", "fill", "rounding", "form", "solver", "time_limit", "mip_gap", "rounds", "alpha",
              "epsilon", "samples", "passes", "warm", "builder", "embed_route", "select_algorithm",
              "select_classes", "select_route", "quotient", "route_requested"}


def _recount(instance_path, data) -> float:
    """Total utility from out.json's slots and the instance file's numbers alone (log utility:
    ``lambda_1 log(1 + zeta z)``), without the package's utility code."""
    import math

    raw = json.loads(instance_path.read_text())
    assert raw["utility"] == "log"
    z = [0] * len(raw["arrival"])
    for slot in data["slots"]:
        for job, entry in slot["jobs"].items():
            z[int(job)] += sum(int(n) for n in entry["workers"].values())
    assert {str(i): zi for i, zi in enumerate(z)} == data["worker_slots"]
    return sum(p[0] * math.log1p(zeta * zi) for p, zeta, zi in zip(raw["utility_params"], raw["zeta"], z,
                                                                     strict=True))


@pytest.mark.parametrize("slot_solver", ["greedy", "exact", "lp-rs-mde"])
def test_out_json_records_params_seed_and_every_slot(small, tmp_path, capsys, slot_solver):
    out_path = tmp_path / "out.json"
    code, out, _ = run(capsys, "run", small, "--slot-solver", slot_solver, "--seed", "3", "--json", out_path)
    assert code == 0 and "verified True" in out
    data = json.loads(out_path.read_text())
    inst = load_instance(small)
    assert data["policy"] == "gadget" and data["seed"] == 3 and set(data["params"]) == PARAM_KEYS
    assert data["params"]["slot_solver"] == slot_solver and data["params"]["fill"] == "greedy"
    assert data["capacity_violations"] == 0 and data["overloaded_slots"] == 0 and data["max_load_ratio"] <= 1
    assert data["total_utility"] == pytest.approx(_recount(small, data), rel=1e-12)
    z = [0] * inst.n_jobs
    for t, info in enumerate(data["slot_info"], start=1):
        assert info["slot"] == t
        # I[t] of Alg. 1 line 3, recomputed from the instance and the slots before t
        active = [i for i in range(inst.n_jobs) if inst.arrival[i] <= t and z[i] < inst.budget[i]]
        assert info["active"] == active
        assert info["gain"] >= info["fill_gain"] - 1e-9
        if slot_solver == "exact" and active:
            assert {"objective", "bound", "gap", "termination"} <= set(info)
            assert info["bound"] >= info["objective"] - 1e-6 * max(1.0, abs(info["objective"]))
        if slot_solver == "lp-rs-mde" and active:
            assert {"lp_value", "objective", "drawn_value", "augmented_value", "rounding"} <= set(info)
            assert info["objective"] <= info["lp_value"] + 1e-6 and info["rounding"] == "safe"
        for job, entry in data["slots"][t - 1]["jobs"].items():
            z[int(job)] += sum(entry["workers"].values())
    solver = data["provenance"].get("solver")
    if slot_solver == "greedy":
        assert solver is None and data["params"]["solver"] is None
    else:
        assert solver["name"] == "highs" and data["params"]["solver"] == "highs"


def test_fill_none_and_option_errors(small, tmp_path, capsys):
    out_path = tmp_path / "out.json"
    code, out, _ = run(capsys, "run", small, "--fill", "none", "--json", out_path)
    assert code == 0 and "gadget (greedy, no fill)" in out
    data = json.loads(out_path.read_text())
    assert data["params"]["fill"] == "none" and all(d["fill_gain"] == 0.0 for d in data["slot_info"])
    for args, text in ((["--rounding", "paper"], "--slot-solver lp-rs-mde"),
                       (["--rounding", "package"], "mlBroker"),
                       (["--policy", "fifo", "--fill", "none"], "--fill is a parameter of the gadget policy"),
                       (["--policy", "las", "--mip-gap", "0.1"], "--mip-gap")):
        code, _, err = run(capsys, "run", small, *args)
        assert code == 2 and text in err and "Traceback" not in err, (args, err)


@pytest.fixture
def tight(tmp_path):
    """A 5-server tree where GPUs and bandwidth both bind: the paper rounding overloads here."""
    from clusteropt.instances.gadget.instance import fat_tree_cluster, random_gadget

    cl = fat_tree_cluster(5, n_racks=2, gpus=(1, 2, 4), server_bw=(5, 10), rack_bw=(8, 14), seed=1)
    inst = random_gadget(6, workers=(2, 5), cluster=cl, horizon=3, arrivals="zero", bandwidth=(3, 7),
                         utility="sqrt", seed=1)
    path = tmp_path / "tight.json"
    inst.to_json(path)
    return path


def test_paper_rounding_reports_violations_and_exits_0(tight, tmp_path, capsys):
    out_path = tmp_path / "out.json"
    code, out, err = run(capsys, "run", tight, "--slot-solver", "lp-rs-mde", "--rounding", "paper",
                         "--fill", "none", "--json", out_path)
    assert code == 0, err
    assert "paper rounding" in out and "verified False" in out and "capacity violations" in out
    assert err.count("warning: --rounding paper") == 1 and "Traceback" not in err
    data = json.loads(out_path.read_text())
    inst = load_instance(tight)
    schedule = GadgetSchedule.from_json_list(data["slots"], inst.n_jobs, inst.cluster.n_servers)
    check = check_gadget_schedule(inst, schedule)
    assert data["verified"] is False and not check.ok
    assert data["capacity_violations"] == check.n_violations > 0
    assert data["capacity_violations"] == sum(d["capacity_violations"] for d in data["slot_info"])
    assert data["max_load_ratio"] > 1 and data["overloaded_slots"] >= 1
    assert f"capacity violations {data['capacity_violations']} in {data['overloaded_slots']} slots" in out
    assert data["params"]["rounding"] == "paper" and data["params"]["rounds"] == 100
    # the same instance with the default rounding: feasible, nothing to report
    code, out, err = run(capsys, "run", tight, "--slot-solver", "lp-rs-mde")
    assert code == 0 and "verified True" in out and "warning" not in err


def test_warm_lp_rs_mde_from_the_cli(small, tmp_path, capsys):
    out_path = tmp_path / "warm.json"
    code, out, _ = run(capsys, "run", small, "--slot-solver", "lp-rs-mde", "--warm", "--json", out_path)
    data = json.loads(out_path.read_text())
    assert code == 0 and "verified True" in out and data["params"]["warm"] is True
    assert any(info.get("select_warm") for info in data["slot_info"])
    code, _, err = run(capsys, "run", small, "--warm")
    assert code == 2 and "--warm" in err and "lp-rs-mde" in err
    code, _, err = run(capsys, "run", small, "--policy", "fifo", "--warm")
    assert code == 2 and "--warm is a parameter of the gadget policy" in err


def test_colgen_and_ipm_from_the_cli(small, tmp_path, capsys):
    out_path = tmp_path / "colgen.json"
    code, out, _ = run(capsys, "run", small, "--slot-solver", "lp-rs-mde", "--embed-route", "colgen",
                       "--select-lp", "ipm", "--json", out_path)
    data = json.loads(out_path.read_text())
    assert code == 0 and "verified True" in out
    assert data["params"]["embed_route"] == "colgen" and data["params"]["select_algorithm"] == "ipm"
    busy = [info for info in data["slot_info"] if info.get("lp_jobs")]
    assert busy and all(info["builder"] == "colgen" and info["colgen_rounds"] >= 1 for info in busy)
    assert all(info["colgen_bound"] >= info["augmented_value"] - 1e-6 for info in busy)
    for option, value in (("--embed-route", "colgen"), ("--select-lp", "ipm")):
        code, _, err = run(capsys, "run", small, option, value)
        assert code == 2 and option in err and "lp-rs-mde" in err
        code, _, err = run(capsys, "run", small, "--policy", "drf", option, value)
        assert code == 2 and f"{option} is a parameter of the gadget policy" in err
    code, _, err = run(capsys, "run", small, "--slot-solver", "lp-rs-mde", "--warm", "--select-lp", "ipm")
    assert code == 2 and "warm" in err
    classes_path = tmp_path / "classes.json"
    code, out, _ = run(capsys, "run", small, "--slot-solver", "lp-rs-mde", "--server-classes", "--json",
                       classes_path)
    data = json.loads(classes_path.read_text())
    assert code == 0 and "verified True" in out and data["params"]["select_classes"] is True
    code, _, err = run(capsys, "run", small, "--server-classes")
    assert code == 2 and "--server-classes" in err
    route_path = tmp_path / "route.json"
    code, out, _ = run(capsys, "run", small, "--slot-solver", "lp-rs-mde", "--select-route", "capacity", "--json",
                       route_path)
    data = json.loads(route_path.read_text())
    assert code == 0 and "verified True" in out and data["params"]["select_route"] == "capacity"
    assert all(isinstance(i["select_certified"], bool) for i in data["slot_info"] if i.get("lp_jobs"))


def test_fat_tree_instances_run_on_the_quotient_tree(tmp_path, capsys):
    path = tmp_path / "ft.json"
    code, out, _ = run(capsys, "generate", "gadget", "--preset", "small", "--jobs", "10", "--utility", "sqrt",
                       "--fat-tree", "4", "--horizon", "4", "--seed", "2", "-o", path)
    assert code == 0 and "16 servers" in out and "small-10-fat-tree-4" in out
    inst = load_instance(path)
    assert not inst.cluster.is_tree() and inst.cluster.n_switches == 20
    for solver in ("greedy", "lp-rs-mde"):
        out_path = tmp_path / f"{solver}.json"
        code, out, _ = run(capsys, "run", path, "--slot-solver", solver, "--quotient-tree", "--json", out_path)
        assert code == 0 and "verified True" in out
        data = json.loads(out_path.read_text())
        assert data["params"]["quotient"] is True and data["verified"] is True
        assert all("lift_dropped" in i and "lift_method" in i for i in data["slot_info"])
        # the rings are on the fat-tree's own links: re-checked from the file alone
        schedule = GadgetSchedule.from_json_list(data["slots"], inst.n_jobs, inst.cluster.n_servers)
        assert check_gadget_schedule(inst, schedule).ok
    code, _, err = run(capsys, "run", path, "--policy", "fifo", "--quotient-tree")
    assert code == 2 and "--quotient-tree is a parameter of the gadget policy" in err
    code, _, err = run(capsys, "generate", "gadget", "--fat-tree", "5", "-o", tmp_path / "bad.json")
    assert code == 2 and "--fat-tree 5; expected an even K" in err
    assert not (tmp_path / "bad.json").exists()
    code, _, err = run(capsys, "run", path, "--slot-solver", "lp-rs-mde", "--rounding", "paper", "--quotient-tree")
    assert code == 2 and "hide" in err
    # the quotient's tree-form model, built and exported for an outside solver
    code, out, _ = run(capsys, "build", path, "--model", "gvne", "--slot", "1", "--quotient-tree", "--export",
                       tmp_path / "q.lp")
    assert code == 0 and (tmp_path / "q.lp").is_file()
    tree_vars = int(out.split(" variables,")[0].split()[-1])
    code, out, _ = run(capsys, "build", path, "--model", "gvne", "--slot", "1")
    assert code == 0 and int(out.split(" variables,")[0].split()[-1]) > tree_vars  # the flow form on the fat-tree
    code, _, _ = run(capsys, "export", path, tmp_path / "q.mps", "--model", "gvne", "--slot", "1",
                     "--quotient-tree")
    assert code == 0 and (tmp_path / "q.mps").is_file()
