"""The README's Python blocks run as written (in a temporary directory), one per system."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
#: The kinds the README shows a block for: the quick start's, then one per paper.
KINDS = ["worker-placement", "coflow", "realtime", "gadget", "broker", "ring"]


def test_the_readme_has_a_block_per_system():
    kinds = [re.search(r'co\.generate\("([\w-]+)"', code)[1] for code in BLOCKS]
    assert kinds == KINDS


@pytest.mark.parametrize("code", BLOCKS, ids=KINDS[:len(BLOCKS)])
def test_the_block_runs(code, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {})
    out = capsys.readouterr().out
    assert out.strip(), "every block prints what it computed"
    if "wp.lp" in code:
        assert (tmp_path / "wp.lp").is_file() and (tmp_path / "wp.mps").is_file()
        assert "capacity" in out
