"""Every notebook in notebooks/ runs top to bottom in quick mode (CLUSTEROPT_QUICK=1)."""

from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))

SLOW = {"gadget", "realtime", "ring"}
"""Notebooks of 20-30 s each even in quick mode: run with ``make test-slow`` (keeps ``make test``
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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_notebooks_are_executed(path):
    # `make notebooks` runs them in quick mode and saves them with their outputs, so that the
    # tables and figures show on the repository page without running anything
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert code and all(c.get("execution_count") for c in code), f"{path.name}: run `make notebooks`"
    counts = [c.execution_count for c in code]
    assert counts == sorted(counts), f"{path.name}: cells were run out of order"
    assert not any(o.get("output_type") == "error" for c in code for o in c.get("outputs", []))
