"""The README's quick start runs as written (in a temporary directory)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_quick_start_runs(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no python quick start"
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, str(README), "exec"), {})
    assert (tmp_path / "wp.lp").is_file() and (tmp_path / "wp.mps").is_file()
    assert "capacity" in capsys.readouterr().out
