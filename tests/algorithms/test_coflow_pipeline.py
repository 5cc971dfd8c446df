"""run_coflow and the `clusteropt import coflow-benchmark` / `clusteropt run` commands."""

import dataclasses
import json

import numpy as np
import pytest

from clusteropt.algorithms.coflow.pipeline import POLICIES, run_coflow
from clusteropt.cli import main
from clusteropt.data import sample_path
from clusteropt.decisions.coflow import CoflowSchedule
from clusteropt.instances import ConcurrentOpenShopInstance, load_instance, random_coflows
from clusteropt.verify import check_coflow_schedule

SAMPLE = sample_path("coflow/small_benchmark.txt")


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("scheduler", ["greedy", "paper"])
def test_every_policy_and_scheduler_gives_a_verified_schedule(policy, scheduler):
    inst = random_coflows(12, 5, max_units=8, weights="random", seed=11)
    run = run_coflow(inst, policy, scheduler)
    assert run.verified, run.violations
    assert sorted(run.order.tolist()) == list(range(12))
    assert run.total_weighted_cct == pytest.approx(float(inst.weight @ run.completion))
    if policy == "lp-order":
        assert run.lower_bound is not None and run.lower_bound <= run.total_weighted_cct + 1e-6


def test_completion_counted_from_release():
    inst = random_coflows(20, 6, max_units=8, weights="random", seed=4)
    run = run_coflow(inst, "sebf", "greedy", lower_bound=True)
    late = run.from_release(inst)
    expected = float(inst.weight @ (run.completion - inst.release))
    assert late["total"] == pytest.approx(expected)
    assert late["offset"] == pytest.approx(float(inst.weight @ inst.release))
    assert late["mean"] == pytest.approx(float((run.completion - inst.release).mean()))
    assert late["lower_bound"] == pytest.approx(run.lower_bound - late["offset"])
    assert late["lower_bound"] <= late["total"] + 1e-6 and late["ratio"] >= run.ratio - 1e-12
    assert run.to_json_dict(inst)["from_release"] == late
    assert late["mean_seconds"] is None  # synthetic coflows have no slot length
    timed = dataclasses.replace(inst, slot_seconds=0.008)
    assert run.from_release(timed)["mean_seconds"] == pytest.approx(0.008 * late["mean"])


@pytest.mark.parametrize("seed", range(12))
def test_primal_dual_schedules_within_the_proven_ratios_of_the_lp_bound(seed):
    release = seed % 2 == 1
    inst = random_coflows(10, 4, max_units=6, release=release, weights="random", seed=seed)
    run = run_coflow(inst, "primal-dual", "greedy", lower_bound=True)
    assert run.verified and run.bound_converged
    assert run.total_weighted_cct <= (5 if release else 4) * run.lower_bound + 1e-6
    if not release:
        paper = run_coflow(inst, "primal-dual", "paper", bound=(run.lower_bound, None, True), lower_bound=True)
        assert paper.verified and paper.total_weighted_cct <= 4 * run.lower_bound + 1e-6


@pytest.mark.parametrize("seed", range(12))
def test_concurrent_open_shop_within_2_and_3_of_the_lp_bound(seed):
    rng = np.random.default_rng(seed)
    release = seed % 2 == 1
    cos = ConcurrentOpenShopInstance(rng.integers(0, 5, (3, 8)), rng.integers(1, 5, 8).astype(float),
                                     rng.integers(0, 10, 8) if release else np.zeros(8, int))
    run = run_coflow(cos, "primal-dual", "greedy", lower_bound=True)
    assert run.verified
    # a diagonal instance: each machine is one port pair, so the greedy is a permutation schedule
    assert run.total_weighted_cct <= (3 if release else 2) * run.lower_bound + 1e-6


def test_json_blocks_round_trip_through_the_verifier():
    inst = random_coflows(8, 4, max_units=5, seed=2)
    run = run_coflow(inst, "sebf", "paper")
    data = json.loads(json.dumps(run.to_json_dict(inst)))
    again = CoflowSchedule.from_json_blocks(data["blocks"], inst.ids)
    check = check_coflow_schedule(inst, again)
    assert check.feasible and check.value == data["total_weighted_cct"]
    assert {int(k): v for k, v in data["completion"].items()} == dict(
        zip(inst.ids.tolist(), check.completion.tolist(), strict=True))


def test_bad_policy_and_scheduler():
    inst = random_coflows(3, 3, max_units=2, seed=0)
    with pytest.raises(ValueError, match="policy = 'lifo'"):
        run_coflow(inst, "lifo")
    with pytest.raises(ValueError, match="scheduler = 'x'"):
        run_coflow(inst, "fifo", "x")


def test_cli_import_and_run(tmp_path, capsys):
    inst_path, out_path = tmp_path / "inst.json", tmp_path / "out.json"
    assert main(["import", "coflow-benchmark", str(SAMPLE), "--unit-mb", "0.5", "--slot-ms", "500",
                 "-o", str(inst_path)]) == 0
    inst = load_instance(inst_path)
    assert inst.kind == "coflow" and inst.n_coflows == 5
    code = main(["run", str(inst_path), "--policy", "primal-dual", "--schedule", "paper", "--lower-bound",
                 "--json", str(out_path)])
    assert code == 0, capsys.readouterr().err
    data = json.loads(out_path.read_text())
    assert set(data) >= {"order", "completion", "total_weighted_cct", "lower_bound", "blocks"}
    assert sorted(data["order"]) == sorted(inst.ids.tolist())
    assert data["lower_bound"] <= data["total_weighted_cct"]
    check = check_coflow_schedule(inst, CoflowSchedule.from_json_blocks(data["blocks"], inst.ids))
    assert check.feasible and check.value == data["total_weighted_cct"]
    for block in data["blocks"]:
        flows = block["flows"]
        assert len({f[1] for f in flows}) == len(flows) and len({f[2] for f in flows}) == len(flows)


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("4 1\n1 0 1 9 1 2:1.0\n")
    assert main(["import", "coflow-benchmark", str(bad), "-o", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and f"{bad}:2" in err and len(err.splitlines()) == 1
    inst_path = tmp_path / "inst.json"
    random_coflows(3, 3, max_units=2, seed=0).to_json(inst_path)
    assert main(["run", str(inst_path), "--policy", "lifo"]) == 2
    assert "unknown --policy 'lifo'; coflow instances take primal-dual" in capsys.readouterr().err


def test_online_runs_record_how_they_were_made():
    inst = random_coflows(30, 6, max_units=10, load=1.2, seed=7)
    run = run_coflow(inst, "primal-dual", "greedy", online=True)
    data = run.to_json_dict(inst)
    assert run.verified and run.online and data["online"] is True and data["replanned"] is True
    assert data["replan_slots"] == np.unique(inst.release).size and data["epoch"] is None
    assert sorted(run.order.tolist()) == list(range(30))
    every = run_coflow(inst, "sebf", "greedy", online=True, epoch=5)
    assert every.verified and every.to_json_dict(inst)["epoch"] == 5
    # offline: clairvoyant orderings are not online, self-contained ones with the greedy are
    assert not run_coflow(inst, "sincronia", "greedy").online
    assert run_coflow(inst, "sebf", "greedy").online and not run_coflow(inst, "sebf", "paper").online
    with pytest.raises(ValueError, match="scheduler = 'paper'"):
        run_coflow(inst, "sebf", "paper", online=True)
    with pytest.raises(ValueError, match="pass online=True"):
        run_coflow(inst, "sebf", "greedy", epoch=5)


def test_online_lp_order_replans_with_the_residual_lp():
    inst = random_coflows(10, 4, max_units=6, load=1.5, seed=3)
    run = run_coflow(inst, "lp-order", "greedy", online=True, lower_bound=True)
    assert run.verified and run.lower_bound <= run.total_weighted_cct + 1e-6
