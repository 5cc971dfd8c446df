"""``clusteropt generate gadget``, ``run`` and ``build --model gvne`` on paper 000 instances."""

from __future__ import annotations

import json

import pytest

from clusteropt.algorithms.gadget.allocation import GadgetSchedule
from clusteropt.cli import main
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


def test_bad_input_is_one_line(small, tmp_path, capsys):
    code, _, err = run(capsys, "run", small, "--policy", "srtf")
    assert code == 2 and "unknown policy" in err and "Traceback" not in err
    code, _, err = run(capsys, "build", small, "--model", "gvne", "--slot", "99")
    assert code == 2 and "1 .. 20" in err
    code, _, err = run(capsys, "generate", "gadget", "--jobs", "0", "-o", tmp_path / "x.json")
    assert code == 2 and "n_jobs" in err
