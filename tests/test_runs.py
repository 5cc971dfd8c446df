"""The verbs: ``clusteropt.generate / build / run / check / list_*`` for every system, and the CLI
commands that say the same (``policies``, ``verify``, ``solve-file``, the size guards)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

import clusteropt
from clusteropt.runs import RUNNERS, OptionError, get_runner
from tests.test_cli_realtime import run as cli

#: One small instance per kind with a runner, and options that keep its run short.
SMALL = {
    "coflow": (dict(n_coflows=8, n_ports=4, seed=1), {}),
    "realtime": (dict(preset="fig5", n=3), {"frames": 300}),
    "gadget": (dict(preset="tiny", jobs=4, seed=2), {}),
    "broker": (dict(preset="tiny", seed=3), {}),
    "ring": (dict(n=8, servers=2, requests=120, seed=4), {}),
}


@pytest.fixture(scope="module")
def runs():
    out = {}
    for kind, (params, options) in SMALL.items():
        inst = clusteropt.generate(kind, **params)
        out[kind] = clusteropt.run(inst, seed=5, **options)
    return out


def test_every_runner_has_a_small_case():
    clusteropt.list_policies()  # loads every runner
    assert set(SMALL) == set(RUNNERS)


@pytest.mark.parametrize("kind", sorted(SMALL))
def test_run_is_verified_and_rechecked_from_its_json(runs, kind, tmp_path):
    r = runs[kind]
    assert r.kind == kind and r.ok and r.failure is None
    assert r.policy == get_runner(kind).default
    assert r.out["system"] == kind and r.summary and r.costs
    assert r.verify().ok
    path = r.to_json(tmp_path / "out.json")
    data = json.loads(path.read_text())
    assert data["provenance"]["version"] == clusteropt.__version__
    assert clusteropt.check(r.instance, path).ok
    assert clusteropt.check(r.instance, data).ok


def _tamper(kind: str, data: dict) -> dict:
    """A decision the instance does not allow, written into an output as an outside editor would."""
    bad = copy.deepcopy(data)
    if kind == "ring":
        bad["migrations"] = [[0, 0, 1], [0, 1, 1], [0, 2, 1], [0, 3, 1], [0, 4, 1]]  # 5 + 4 > c * k = 8
        bad["augmentation"] = 1
    elif kind == "gadget":
        bad["slots"][0]["jobs"] = {"0": {"workers": {"0": 99}}}
    elif kind == "broker":
        for rec in bad["schedule"]["slots"]:
            rec["y"] = (np.asarray(rec["y"]) * 0).tolist()  # no job gets a worker
    elif kind == "coflow":
        bad["blocks"] = bad["blocks"][1:]  # a block's flows never sent
    elif kind == "realtime":
        bad["completed"] = [list(range(3)) for _ in bad["completed"]]  # every job completes every frame
    return bad


@pytest.mark.parametrize("kind", sorted(SMALL))
def test_a_tampered_output_fails_the_check(runs, kind):
    r = runs[kind]
    data = json.loads(json.dumps(r.to_dict()))
    verdict = clusteropt.check(r.instance, _tamper(kind, data))
    assert not verdict.ok and verdict.violations


#: Policies of a system's own table that ``run`` does not offer, and why.
NOT_RUN = {"broker": {"afractional"}}  # mlBroker's fractional decisions: a bound, not a schedule


@pytest.mark.parametrize("kind", sorted(SMALL))
def test_the_runner_lists_the_systems_own_policies(kind):
    import importlib

    module = {"coflow": "clusteropt.algorithms.coflow.pipeline", "realtime": "clusteropt.online.realtime.policies",
              "broker": "clusteropt.online.broker", "ring": "clusteropt.online.ring",
              "gadget": "clusteropt.online.gadget"}[kind]
    table = set(importlib.import_module(module).POLICIES)
    listed = [row["policy"] for row in clusteropt.list_policies(kind)]
    assert listed[0] == get_runner(kind).default
    assert set(listed) == table - NOT_RUN.get(kind, set())


def test_options_are_named_in_both_spellings():
    inst = clusteropt.generate("broker", preset="tiny", seed=0)
    with pytest.raises(OptionError, match=r"^epsilon is a parameter of mlbroker, not of local$") as err:
        clusteropt.run(inst, "local", epsilon=0.2)
    assert err.value.options == ["epsilon"]
    assert err.value.render(lambda o: "--" + o).startswith("--epsilon is a parameter")
    with pytest.raises(OptionError, match="frames is not an option of broker runs"):
        clusteropt.run(inst, frames=10)
    with pytest.raises(OptionError, match="unknown policy 'fifo'; broker instances take mlbroker"):
        clusteropt.run(inst, "fifo")
    with pytest.raises(OptionError, match="seed = -1"):
        clusteropt.run(inst, seed=-1)


def test_a_kind_without_runner_says_which_have_one():
    inst = clusteropt.generate("worker-placement", n_jobs=4, n_servers=2, seed=0)
    kinds = "coflow, concurrent-open-shop, realtime, gadget, broker, ring"
    with pytest.raises(ValueError, match=f"'worker-placement' have no runner; runs take {kinds} instances"):
        clusteropt.run(inst)


def test_check_refuses_another_systems_output(runs):
    with pytest.raises(ValueError, match="a ring run; the instance is a gadget instance"):
        clusteropt.check(runs["gadget"].instance, runs["ring"].to_dict())
    with pytest.raises(ValueError, match=r"no 'slots'; a gadget run's out\.json holds it"):
        clusteropt.check(runs["gadget"].instance, {"policy": "gadget"})


def test_the_same_seed_makes_the_same_run(runs):
    inst = runs["ring"].instance
    again = clusteropt.run(inst, seed=5)
    assert again.out["migrations"] == runs["ring"].out["migrations"]


def test_generate_and_build_by_name():
    with pytest.raises(ValueError, match="kind = 'nope'; expected one of coflow"):
        clusteropt.generate("nope")
    with pytest.raises(ValueError, match=r"generate\('ring'\).*colour"):
        clusteropt.generate("ring", n=8, servers=2, requests=10, colour=3)
    inst = clusteropt.generate("gadget", preset="tiny", jobs=3, seed=0)
    model = clusteropt.build("gvne", inst, slot=2)
    assert clusteropt.solve(model, "highs").termination.name == "OPTIMAL"
    with pytest.raises(ValueError, match="takes instances of kind 'ring'"):
        clusteropt.build("ring-static-opt", inst)
    names = {m["name"] for m in clusteropt.list_models()}
    assert {"gvne", "coflow-lp", "broker-milp", "ring-static-opt", "realtime-region"} <= names
    assert all(m["kind"] == "gadget" for m in clusteropt.list_models("gadget"))
    highs = next(s for s in clusteropt.list_solvers() if s["name"] == "highs")
    assert isinstance(highs["capabilities"], list) and "pyomo" in highs["available"]


# --- the CLI -----------------------------------------------------------------------------------


def test_cli_policies_listing(capsys):
    code, out, _ = cli(capsys, "policies", "--json")
    rows = json.loads(out)
    assert code == 0 and isinstance(rows, list)
    assert {r["kind"] for r in rows} == set(RUNNERS) and sum(r["default"] for r in rows) == len(RUNNERS)
    code, out, _ = cli(capsys, "policies", "--kind", "ring")
    assert code == 0 and "dynamic-mix" in out and "sqrt-greedy" not in out
    code, _, err = cli(capsys, "policies", "--kind", "nope")
    assert code == 2 and "--kind" in err
    code, out, _ = cli(capsys, "solvers", "--json")
    assert all(isinstance(s["available"], list) and isinstance(s["backends"], list) for s in json.loads(out))


@pytest.mark.parametrize("kind", ["gadget", "ring"])
def test_cli_verify_exits_0_then_4_on_a_tampered_output(runs, kind, tmp_path, capsys):
    r = runs[kind]
    inst_path = clusteropt.save(r.instance, tmp_path / "inst.json")
    out_path = r.to_json(tmp_path / "out.json")
    code, out, _ = cli(capsys, "verify", inst_path, out_path, "--json", tmp_path / "v.json")
    assert code == 0 and "verified True" in out
    assert json.loads((tmp_path / "v.json").read_text())["verified"] is True
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_tamper(kind, json.loads(out_path.read_text()))))
    code, _, err = cli(capsys, "verify", inst_path, bad)
    assert code == 4 and "not verified" in err and "violated" in err
    code, _, err = cli(capsys, "verify", inst_path, tmp_path / "missing.json")
    assert code == 2 and "no such output file" in err


def test_cli_run_refuses_a_flag_of_another_kind(runs, tmp_path, capsys):
    inst_path = clusteropt.save(runs["ring"].instance, tmp_path / "ring.json")
    code, _, err = cli(capsys, "run", inst_path, "--kappa", "0.3")
    assert code == 2 and "--kappa is not an option of ring runs; they take --epsilon, --rate" in err
    gadget = clusteropt.save(runs["gadget"].instance, tmp_path / "g.json")
    code, _, err = cli(capsys, "run", gadget, "--policy", "fifo", "--select-lp", "ipm")
    assert code == 2 and "--select-lp is a parameter of the gadget policy, not of fifo" in err


@pytest.mark.parametrize("suffix", [".lp", ".mps"])
def test_cli_solve_file_matches_solve(runs, tmp_path, capsys, suffix):
    inst_path = clusteropt.save(runs["gadget"].instance, tmp_path / "g.json")
    code, _, _ = cli(capsys, "solve", inst_path, "--model", "ddljs", "--json", tmp_path / "s.json")
    assert code == 0
    direct = json.loads((tmp_path / "s.json").read_text())["objective"]
    model_file = tmp_path / f"g{suffix}"
    assert cli(capsys, "export", inst_path, model_file, "--model", "ddljs")[0] == 0
    for solver in ("highs", "scip"):
        pytest.importorskip({"highs": "highspy", "scip": "pyscipopt"}[solver])
        out_json = tmp_path / f"f-{solver}.json"
        code, _, err = cli(capsys, "solve-file", model_file, "--solver", solver, "--json", out_json)
        assert code == 0, err
        data = json.loads(out_json.read_text())
        assert data["objective"] == pytest.approx(direct, rel=1e-6, abs=1e-6)
        assert data["solver"] == solver and data["values"] and data["provenance"]["inputs"]["file"]["sha256"]
    code, _, err = cli(capsys, "solve-file", tmp_path / "nope.lp")
    assert code == 2 and "no such model file" in err


def test_cli_size_guards_and_empty_models(tmp_path, capsys):
    ring = clusteropt.save(clusteropt.generate("ring", n=8, servers=2, requests=60, seed=0), tmp_path / "r.json")
    code, _, err = cli(capsys, "build", ring, "--model", "ring-dynamic-opt", "--max-steps", "5")
    assert code == 2 and "max_steps = 5" in err and "--max-steps" in err
    assert cli(capsys, "build", ring, "--model", "ring-dynamic-opt", "--max-steps", "1000")[0] == 0
    code, _, err = cli(capsys, "build", ring, "--model", "ring-static-opt", "--max-states", "5")
    assert code == 2 and "--max-states is not a limit of model 'ring-static-opt'" in err
    coflow = clusteropt.save(clusteropt.generate("coflow", n_coflows=6, n_ports=3, seed=0), tmp_path / "c.json")
    code, _, err = cli(capsys, "build", coflow, "--model", "coflow-milp", "--max-variables", "10")
    assert code == 2 and "above the limit of 10" in err and "--max-variables" in err
    import os

    from clusteropt.models.size import ENV_MAX_VARIABLES

    assert ENV_MAX_VARIABLES not in os.environ  # the option holds for its command only
    rt = tmp_path / "rt.json"
    assert cli(capsys, "generate", "realtime", "--preset", "fig3", "-o", rt)[0] == 0
    code, _, err = cli(capsys, "export", rt, tmp_path / "rt.lp", "--model", "realtime-max-weight")
    assert code == 2 and "has no variables" in err and not (tmp_path / "rt.lp").exists()
    code, _, err = cli(capsys, "build", rt, "--model", "realtime-max-weight")
    assert code == 0 and "warning: model realtime-max-weight" in err


def test_cli_generate_worker_placement(tmp_path, capsys):
    path = tmp_path / "wp.json"
    code, out, _ = cli(capsys, "generate", "worker-placement", "--jobs", "5", "--servers", "3", "--seed", "2",
                       "-o", path)
    assert code == 0 and "5 jobs x 3 servers (seed 2)" in out
    inst = clusteropt.load(path)
    assert (inst.kind, inst.n_jobs, inst.n_servers) == ("worker-placement", 5, 3)
    again = clusteropt.generate("worker-placement", n_jobs=5, n_servers=3, seed=2)
    assert inst.to_json() == again.to_json()
