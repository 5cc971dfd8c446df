"""Every notebook in notebooks/ runs top to bottom in quick mode (CLUSTEROPT_QUICK=1)."""

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))

SLOW = {"gadget", "realtime"}
"""Notebooks of about 20 s each even in quick mode: run with ``pytest -m slow`` (keeps ``make test``
under its 10 minutes; the other notebooks run in every ``make test``)."""


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.stem in SLOW else p
                                  for p in NOTEBOOKS], ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("CLUSTEROPT_QUICK", "1")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
