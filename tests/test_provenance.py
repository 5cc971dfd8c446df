"""Every --json output says how it was made: command, input hash, versions, solver (issue 19)."""

from __future__ import annotations

import hashlib
import json

import pytest

from clusteropt.cli import main
from clusteropt.experiments.spec import code_version as experiment_code_version
from clusteropt.provenance import code_version, provenance, solver_block


def test_the_block_is_deterministic_and_matches_the_experiment_store_version():
    assert provenance() == provenance()  # no time stamp, no host: outputs compare byte for byte
    assert code_version() == experiment_code_version()


def test_solver_block_names_the_package_version_and_drops_unset_options():
    block = solver_block("highs", {"time_limit": 5.0, "mip_gap": None})
    assert block["name"] == "highs" and block["version"] and block["options"] == {"time_limit": 5.0}
    assert solver_block("cbc")["version"] is None  # an executable: not known to Python


@pytest.mark.parametrize("kind", ["ring", "realtime", "gadget", "broker"])
def test_every_run_output_carries_the_command_and_the_instance_hash(tmp_path, capsys, kind):
    inst = tmp_path / f"{kind}.json"
    generate = {"ring": ["generate", "ring", "--n", "8", "--servers", "2", "--requests", "40"],
                "realtime": ["generate", "realtime"],
                "gadget": ["generate", "gadget", "--preset", "tiny"],
                "broker": ["generate", "broker", "--preset", "tiny"]}[kind]
    assert main([*generate, "-o", str(inst)]) == 0
    argv = ["run", str(inst), "--json", str(tmp_path / "out.json")]
    assert main(argv) == 0
    capsys.readouterr()
    block = json.loads((tmp_path / "out.json").read_text())["provenance"]
    assert block["command"] == ["clusteropt", *argv]
    assert block["inputs"]["instance"]["sha256"] == hashlib.sha256(inst.read_bytes()).hexdigest()
    assert block["code_version"] == code_version()


def test_solve_output_names_the_solver_with_its_options(tmp_path, capsys):
    inst = tmp_path / "g.json"
    assert main(["generate", "gadget", "--preset", "tiny", "-o", str(inst)]) == 0
    out_path = tmp_path / "r.json"
    assert main(["solve", str(inst), "--model", "gvne", "--time-limit", "30", "--json", str(out_path)]) == 0
    capsys.readouterr()
    out = json.loads((tmp_path / "r.json").read_text())
    assert out["provenance"]["solver"]["name"] == out["solver"] == "highs"
    assert out["provenance"]["solver"]["options"] == {"time_limit": 30.0}
