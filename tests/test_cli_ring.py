"""``clusteropt generate ring``, ``run`` and ``solve`` on paper 004 (ring partitioning) instances."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from clusteropt.cli import _RING_PATTERN_OPTIONS
from clusteropt.instances import load_instance
from clusteropt.instances.ring import PATTERNS
from clusteropt.online.ring import POLICIES
from clusteropt.verify.ring import check_ring_run
from tests.test_cli_realtime import one_line_error, run


@pytest.fixture
def small(tmp_path, capsys):
    path = tmp_path / "ring.json"
    code, out, _ = run(capsys, "generate", "ring", "--n", 12, "--servers", 3, "--requests", 400,
                       "--pattern", "moving-hotspot", "--step", 25, "--seed", 5, "-o", path)
    assert code == 0 and "12 processes, 3 servers (k = 4), 400 requests" in out
    return path


def test_the_cli_knows_every_pattern():
    assert set(_RING_PATTERN_OPTIONS) == {*PATTERNS, "hit-the-cut"}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_generate_each_pattern(tmp_path, capsys, pattern):
    path = tmp_path / f"{pattern}.json"
    code, _, err = run(capsys, "generate", "ring", "--n", 16, "--servers", 4, "--requests", 300,
                       "--pattern", pattern, "--alpha", 2, "--seed", 3, "-o", path)
    assert code == 0, err
    inst = load_instance(path)
    assert inst.kind == "ring" and (inst.n, inst.servers, inst.n_requests, inst.alpha) == (16, 4, 300, 2.0)
    assert inst.generated_by["pattern"] == pattern and inst.generated_by["seed"] == 3
    assert not list(tmp_path.glob("*.npy"))
    # the same seed writes the same requests
    again = tmp_path / "again.json"
    run(capsys, "generate", "ring", "--n", 16, "--servers", 4, "--requests", 300, "--pattern", pattern,
        "--alpha", 2, "--seed", 3, "-o", again)
    np.testing.assert_array_equal(load_instance(again).requests, inst.requests)


def test_generate_passes_the_pattern_options(tmp_path, capsys):
    path = tmp_path / "h.json"
    assert run(capsys, "generate", "ring", "--n", 16, "--servers", 4, "--requests", 50, "--pattern", "hotspot",
               "--width", 3, "--hot", 0.5, "-o", path)[0] == 0
    gen = load_instance(path).generated_by
    assert (gen["width"], gen["hot"]) == (3, 0.5)
    assert run(capsys, "generate", "ring", "--n", 16, "--servers", 4, "--requests", 50, "--pattern", "phases",
               "--phase", 7, "-o", path)[0] == 0
    assert load_instance(path).generated_by["phase"] == 7
    assert run(capsys, "generate", "ring", "--n", 16, "--servers", 4, "--requests", 50, "--pattern", "zipf",
               "--zipf", 2.5, "-o", path)[0] == 0
    assert load_instance(path).generated_by["zipf"] == 2.5


def test_generate_long_sequences_go_to_npy(tmp_path, capsys):
    path = tmp_path / "long.json"
    code, out, _ = run(capsys, "generate", "ring", "--n", 64, "--servers", 8, "--requests", 12_000,
                       "--pattern", "uniform", "-o", path)
    assert code == 0 and ".npy" in out
    assert (tmp_path / "long.requests.npy").is_file()
    assert json.loads(path.read_text())["requests"]["count"] == 12_000
    assert load_instance(path).n_requests == 12_000


def test_generate_hit_the_cut(tmp_path, capsys):
    path = tmp_path / "hit.json"
    code, out, err = run(capsys, "generate", "ring", "--n", 16, "--servers", 4, "--requests", 120,
                         "--pattern", "hit-the-cut", "--against", "greedy", "--epsilon", 1.0, "--seed", 7,
                         "-o", path)
    assert "ring-hit-the-cut-greedy" in out
    assert code == 0, err
    inst = load_instance(path)
    gen = inst.generated_by
    assert (gen["generator"], gen["against"], gen["seed"], gen["params"]) == ("hit_the_cut", "greedy", 7,
                                                                                {"epsilon": 1.0})
    out_path = tmp_path / "out.json"
    code, _, err = run(capsys, "run", path, "--policy", "greedy", "--epsilon", 1.0, "--seed", 7,
                       "--json", out_path)
    assert code == 0, err
    data = json.loads(out_path.read_text())
    assert data["communication_cost"] == 120  # the replay with the same seed pays every request
    # the default adversary is dynamic-wfa
    pytest.importorskip(POLICIES["dynamic-wfa"][0])
    assert run(capsys, "generate", "ring", "--n", 8, "--servers", 2, "--requests", 10, "--pattern", "hit-the-cut",
               "-o", path)[0] == 0
    assert load_instance(path).generated_by["against"] == "dynamic-wfa"


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_run_each_policy_writes_a_verifiable_json(tmp_path, capsys, small, policy):
    pytest.importorskip(POLICIES[policy][0])
    out_path = tmp_path / "out.json"
    code, out, err = run(capsys, "run", small, "--policy", policy, "--seed", 3, "--json", out_path)
    assert code == 0, err
    assert policy in out and "verified" in out and "True" in out
    data = json.loads(out_path.read_text())
    for key in ("policy", "seed", "params", "augmentation", "initial", "migrations", "max_load",
                "communication_cost", "migration_cost", "total_cost", "verified"):
        assert key in data, key
    assert data["policy"] == policy and data["seed"] == 3 and data["verified"] is True
    for name, value in data["params"].items():  # every scalar parameter also at the top level
        if isinstance(value, int | float | str | bool | None):
            assert data[name] == value
    inst = load_instance(small)
    assert data["max_load"] <= data["augmentation"] * inst.k
    # re-verify from the JSON alone
    check = check_ring_run(inst, data)
    assert check.feasible
    assert check.value == pytest.approx(data["total_cost"])
    assert check.communication_cost == data["communication_cost"]
    assert check.migration_cost == pytest.approx(data["migration_cost"])


def test_run_passes_epsilon(tmp_path, capsys, small):
    out_path = tmp_path / "out.json"
    assert run(capsys, "run", small, "--policy", "greedy", "--epsilon", 0.5, "--json", out_path)[0] == 0
    data = json.loads(out_path.read_text())
    assert data["epsilon"] == 0.5 and data["augmentation"] == 1.5


def test_run_passes_the_combined_mts_rate(tmp_path, capsys, small):
    out_path = tmp_path / "mix.json"
    code = run(capsys, "run", small, "--policy", "dynamic-mix", "--rate", 0.25, "--seed", 2, "--json", out_path)[0]
    assert code == 0
    data = json.loads(out_path.read_text())
    assert data["policy"] == "dynamic-mix" and data["rate"] == 0.25 and data["params"]["mts"] == "mix"
    assert data["verified"] and data["max_load_over_k"] <= data["augmentation"] + 1e-9
    default = tmp_path / "default.json"
    assert run(capsys, "run", small, "--policy", "dynamic-mix", "--json", default)[0] == 0
    from clusteropt.algorithms.ring.mts.mix import DEFAULT_RATE

    assert json.loads(default.read_text())["rate"] == DEFAULT_RATE


def test_the_ring_models_are_registered_by_the_package():
    pytest.importorskip("clusteropt.models.ring.offline")
    # a fresh interpreter: what `clusteropt solve` sees (other tests may have imported models.ring here)
    code = "import clusteropt.models as m; print(sorted(n for n in m.register_all() if n.startswith('ring')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    want = ["ring-dynamic-cut-lp", "ring-dynamic-dp", "ring-dynamic-move-lp", "ring-dynamic-opt",
            "ring-static-opt"]
    assert out.strip() == str(want)


def test_solve_the_five_models(tmp_path, capsys):
    pytest.importorskip("clusteropt.models.ring.offline")
    path = tmp_path / "tiny.json"
    assert run(capsys, "generate", "ring", "--n", 6, "--servers", 2, "--requests", 12, "--pattern", "hotspot",
               "--seed", 1, "-o", path)[0] == 0
    values = {}
    models = ("ring-static-opt", "ring-dynamic-opt", "ring-dynamic-dp", "ring-dynamic-cut-lp",
              "ring-dynamic-move-lp")
    for model in models:
        out_path = tmp_path / f"{model}.json"
        code, _, err = run(capsys, "solve", path, "--model", model, "--json", out_path)
        assert code == 0, err
        values[model] = json.loads(out_path.read_text())["objective"]
    assert values["ring-dynamic-dp"] == pytest.approx(values["ring-dynamic-opt"], abs=1e-6)
    assert values["ring-dynamic-cut-lp"] <= values["ring-dynamic-opt"] + 1e-6 <= values["ring-static-opt"] + 2e-6
    assert values["ring-dynamic-move-lp"] <= values["ring-dynamic-opt"] + 1e-6
    # the never-migrate run is a feasible static solution: the static optimum is no worse
    out_path = tmp_path / "never.json"
    assert run(capsys, "run", path, "--policy", "never", "--json", out_path)[0] == 0
    assert values["ring-static-opt"] <= json.loads(out_path.read_text())["total_cost"] + 1e-6


GEN = ["generate", "ring", "--n", "16", "--servers", "4", "--requests", "10", "-o", "{d}/x.json"]


@pytest.mark.parametrize(("args", "match"), [
    (["generate", "ring", "--n", "15", "--servers", "4", "--requests", "10", "-o", "{d}/x.json"],
     "n = 15; expected a multiple of servers = 4"),
    ([*GEN, "--pattern", "spiral"], "'spiral' is not one of"),
    ([*GEN, "--pattern", "hit-the-cut", "--against", "mlbroker"], "--against 'mlbroker'; expected a ring policy"),
    ([*GEN, "--pattern", "hit-the-cut", "--against", "static-best"], "needs an online policy"),
    ([*GEN, "--pattern", "hit-the-cut", "--against", "never", "--epsilon", "0.1"], "has no parameter 'epsilon'"),
    (["generate", "ring", "--n", "16", "--servers", "4", "--requests", "-3", "-o", "{d}/x.json"],
     "requests = -3; expected an integer in 0..100000000"),
    (["generate", "ring", "--n", "16", "--servers", "4", "--requests", "-3", "--pattern", "hit-the-cut",
      "--against", "never", "-o", "{d}/x.json"], "requests = -3; expected >= 0"),
    ([*GEN, "--step", "3"], "--step is for --pattern moving-hotspot, not uniform"),
    ([*GEN, "--against", "greedy"], "--against is for --pattern hit-the-cut, not uniform"),
    ([*GEN, "--pattern", "hotspot", "--hot", "1.5"], "hot = 1.5"),
    ([*GEN, "--alpha", "-1"], "alpha = -1"),
    (["generate", "ring", "--n", "16", "--servers", "4", "--requests", "10", "-o", "{d}/no/such/dir/x.json"],
     "cannot write"),
    (["run", "{f}", "--policy", "mlbroker"], "--policy 'mlbroker'; ring instances take static"),
    (["run", "{f}", "--policy", "never", "--epsilon", "0.1"], "has no parameter 'epsilon'"),
    (["run", "{f}", "--policy", "greedy", "--epsilon", "-0.1"], "epsilon = -0.1"),
    (["run", "{d}/missing.json", "--policy", "never"], "no such instance file"),
    (["run", "{f}", "--policy", "dynamic", "--rate", "1"], "rate = 1.0 is a parameter of mts='mix'"),
    (["run", "{f}", "--policy", "dynamic-mix", "--rate", "0"], "--rate = 0; expected a finite number > 0"),
    (["run", "{f}", "--policy", "never", "--rate", "1"], "has no parameter 'rate'"),
])
def test_bad_input_is_one_line(tmp_path, capsys, small, args, match):
    code, _, err = run(capsys, *[a.format(f=small, d=tmp_path) for a in args])
    assert re.search(re.escape(match), one_line_error(code, err)), err


def test_run_exits_3_when_verification_fails(tmp_path, capsys, small, monkeypatch):
    import clusteropt.algorithms.ring.baselines as baselines

    def overfill(self, e):  # an algorithm that breaks capacity: put two processes of server 1 on server 0
        if self.state_.now == 0:
            self.state_.assign([4, 5], 0)

    monkeypatch.setattr(baselines.NeverMigrate, "serve", overfill)
    monkeypatch.setattr(baselines.NeverMigrate, "serve_block", lambda self, start, requests: False)  # by overfill
    out_path = tmp_path / "bad.json"
    code, _, err = run(capsys, "run", small, "--policy", "never", "--json", out_path)
    assert code == 3 and "failed verification" in err and "capacity" in err
    assert json.loads(out_path.read_text())["verified"] is False


def test_help_mentions_ring(capsys):
    assert " ".join(run(capsys, "--help")[1].split()).count("ring partitioning") == 1
    assert "A paper 004 instance" in run(capsys, "generate", "--help")[1]
    helptext = " ".join(run(capsys, "run", "--help")[1].split())
    assert "Ring: dynamic (default)" in helptext and "Ring instances" in helptext


def test_rate_is_refused_on_other_instances(tmp_path, capsys):
    path = tmp_path / "rt.json"
    assert run(capsys, "generate", "realtime", "--preset", "fig5", "--n", "6", "-o", path)[0] == 0
    code, _, err = run(capsys, "run", path, "--rate", "1")
    assert "--rate is the ring policy dynamic-mix's" in one_line_error(code, err)
