"""Execute every notebook here in quick mode (``CLUSTEROPT_QUICK=1``) and save it with its outputs.

``make notebooks`` runs this, so that the committed notebooks show their tables and figures on the
repository page.  Unset ``CLUSTEROPT_QUICK`` yourself (and run a notebook in Jupyter) for the full
mode.  Usage: ``python notebooks/execute.py [NAME.ipynb ...]`` (default: all).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbclient
import nbformat

HERE = Path(__file__).resolve().parent


def execute(path: Path) -> None:
    """Run ``path`` top to bottom in quick mode and write it back with its outputs."""
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=1200, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError (naming the cell) on the first failing cell
    nbformat.write(nb, path)


def main(argv: list[str]) -> int:
    """Execute the notebooks named in ``argv`` (default: all), each in quick mode."""
    os.environ["CLUSTEROPT_QUICK"] = "1"
    paths = [HERE / a for a in argv] if argv else sorted(HERE.glob("*.ipynb"))
    for path in paths:
        print(f"executing {path.name} (quick mode)", flush=True)  # noqa: T201 - a script's progress
        execute(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
