"""Data files shipped with the package (read through :func:`sample_path`, so they work from an
installed wheel as from a checkout).

``coflow/small_benchmark.txt``
    A 6-port, 5-coflow trace in the coflow-benchmark format (Chowdhury's ``coflow-benchmark``
    text: a header line ``ports coflows``, then one line per coflow), written for the package's
    tests and the quick ``coflow-trace`` experiment; its hand-computed instance is documented in
    ``tests/instances/test_coflow_trace.py``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["PACKAGE_PREFIX", "resolve", "sample_path"]

#: A path written ``package:coflow/small_benchmark.txt`` in an experiment's grid names a shipped file.
PACKAGE_PREFIX = "package:"


def sample_path(name: str) -> Path:
    """The path of the shipped data file ``name`` (``"coflow/small_benchmark.txt"``).

    >>> sample_path("coflow/small_benchmark.txt").is_file()
    True
    """
    root = resources.files(__name__)
    path = Path(str(root.joinpath(*name.split("/"))))
    if not path.is_file():
        shipped = sorted(str(p.relative_to(Path(str(root)))) for p in Path(str(root)).rglob("*")
                         if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts)
        raise FileNotFoundError(f"no shipped data file {name!r}; the package ships {', '.join(shipped)}")
    return path


def resolve(path: str) -> str:
    """``package:NAME`` -> the shipped file's path; any other path as given."""
    return str(sample_path(path[len(PACKAGE_PREFIX):])) if path.startswith(PACKAGE_PREFIX) else path
