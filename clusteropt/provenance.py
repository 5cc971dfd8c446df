"""How an output was made: what every ``--json`` file and recorded result carries to be re-created.

:func:`provenance` returns the block the command line writes under ``"provenance"`` in every JSON
output (``run``, ``solve``, ``region``): the package version and the hash of its sources
(:func:`code_version`, the same one the experiment store keys its rows by), the versions of the
libraries that shape a result (numpy draws, the solvers), the command line, the input file with
its SHA-256 (so a checker knows it holds the same instance), and the solver with its version and
options where one ran.  Policies and their parameters are written by each system's output next
to this block (``"policy"``, ``"params"``, ``"seed"``).

The source hash says which code ran; the *environment* says with which libraries.  Two installs of
one commit can differ there (``pip install .`` takes the newest versions ``pyproject.toml``
allows, ``make`` the lock), and a solver's version can move a result (another optimal vertex of a
degenerate LP, another incumbent).  :func:`environment` is the versions of Python and of
:data:`PACKAGES`, :func:`environment_id` a short hash of them: the experiment store keys every cell
by it besides the code version (a cell made under other versions is never reused), every exported
row carries both, and ``benchmarks/record_check.py`` reports a version change as such.
:func:`git_commit` names the commit the sources came from, where they sit in a git checkout
(``+dirty`` when the package's files differ from it; the source hash is the exact reference).

Nothing here is a time stamp or a host name: two runs of the same command on the same input
write the same block, so outputs can be compared byte for byte.

>>> block = provenance(command=["clusteropt", "run", "x.json"])
>>> sorted(block)
['code_version', 'command', 'environment_id', 'git_commit', 'packages', 'python', 'version']
>>> block["code_version"].startswith(block["version"] + "+")
True
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["PACKAGES", "SOLVER_PACKAGES", "code_version", "environment", "environment_id", "environment_text",
           "file_sha256", "git_commit", "provenance", "solver_block"]

PACKAGES = ("numpy", "scipy", "pyomo", "cvxpy", "highspy", "pyscipopt", "clarabel", "scs", "networkx")
"""Libraries whose versions can change a result (random draws, solver answers)."""

SOLVER_PACKAGES = {"highs": "highspy", "scip": "pyscipopt", "clarabel": "clarabel", "scs": "scs",
                   "gurobi": "gurobipy", "cplex": "cplex", "xpress": "xpress", "copt": "coptpy"}
"""Registry solver name -> the Python package whose version is the solver's (CBC and GLPK are
executables: their version is not known to Python and is written as None)."""


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def tree_digest(package_dir: str | Path, extra: str | Path | None = None) -> str:
    """First 12 hex digits of SHA-256 over every ``*.py`` under ``package_dir`` (relative names and
    contents, sorted), plus the file ``extra`` when it lies outside.
    """
    digest = hashlib.sha256()
    root = Path(package_dir)
    files = sorted(root.rglob("*.py"))
    if extra is not None and Path(extra).is_file() and Path(extra) not in files:
        files.append(Path(extra))
    for path in files:
        digest.update(str(path.relative_to(root) if path.is_relative_to(root) else path.name).encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:12]


def code_version(extra: str | Path | None = None) -> str:
    """``<package version>+<hash>``: the hash of the package's Python sources (and of ``extra``),
    so any edit gives a new version; it needs no git checkout.
    """
    import clusteropt

    return f"{clusteropt.__version__}+{tree_digest(Path(clusteropt.__file__).parent, extra)}"


def environment() -> dict[str, str | None]:
    """Versions of Python and of every package of :data:`PACKAGES` (None: not installed here).

    >>> env = environment()
    >>> list(env)[:3], env["python"] == platform.python_version()
    (['python', 'numpy', 'scipy'], True)
    """
    return {"python": platform.python_version(), **{p: _version(p) for p in PACKAGES}}


def environment_id(env: Mapping[str, str | None] | None = None) -> str:
    """First 12 hex digits of SHA-256 of :func:`environment` (or ``env``) as canonical JSON.

    >>> environment_id({"python": "3.11.7", "highspy": "1.15.1"}) == environment_id({"highspy": "1.15.1",
    ...                                                                                "python": "3.11.7"})
    True
    """
    env = environment() if env is None else env
    text = json.dumps(dict(env), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def environment_text(env: Mapping[str, str | None]) -> str:
    """``env`` as one line, ``name version`` pairs (``-`` for a package not installed).

    >>> environment_text({"python": "3.11.7", "highspy": "1.15.1", "gurobipy": None})
    'python 3.11.7, highspy 1.15.1, gurobipy -'
    """
    return ", ".join(f"{k} {v or '-'}" for k, v in env.items())


@functools.cache
def git_commit() -> str | None:
    """The commit of the git checkout the package's sources sit in, ``+dirty`` when they differ from it.

    None where the package is not in a git checkout (an installed wheel) or git is not on PATH.
    Only the package's own files decide ``+dirty`` (they are what :func:`code_version` hashes).
    """
    import subprocess

    root = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=False)
        if head.returncode != 0:
            return None
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "."], capture_output=True,
                                text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()
    return commit + ("+dirty" if status.returncode == 0 and status.stdout.strip() else "")


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def solver_block(name: str | None, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``{"name", "version", "options"}`` of a registry solver (``name`` None: HiGHS, the default).

    >>> solver_block("highs", {"time_limit": 5})["options"]
    {'time_limit': 5}
    """
    name = "highs" if name is None else str(name)
    package = SOLVER_PACKAGES.get(name)
    return {"name": name, "version": _version(package) if package else None,
            "options": {k: v for k, v in (options or {}).items() if v is not None}}


def provenance(*, command: Sequence[str] | None = None, inputs: Mapping[str, str | Path] | None = None,
               solver: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The provenance block (module docstring).

    Parameters
    ----------
    command : sequence of str, optional
        The command line (``sys.argv``-like) that made the output.
    inputs : mapping, optional
        Role -> path of each input file (``{"instance": "g.json"}``); written with its SHA-256.
    solver : mapping, optional
        :func:`solver_block` of the solver that ran, if any.
    """
    import clusteropt

    out: dict[str, Any] = {
        "version": clusteropt.__version__,
        "code_version": code_version(),
        "git_commit": git_commit(),
        "python": platform.python_version(),
        "packages": {p: _version(p) for p in PACKAGES},
        "environment_id": environment_id(),
    }
    if command is not None:
        out["command"] = [str(c) for c in command]
    if inputs:
        out["inputs"] = {role: {"path": str(p), "sha256": file_sha256(p)} for role, p in inputs.items()
                         if p is not None and Path(p).is_file()}
    if solver is not None:
        out["solver"] = dict(solver)
    return out
