"""The solver registry: one table of :class:`SolverSpec`, probed for availability without imports.

Each spec lists, per backend, the native name and what must be installed for that route:

* ``pyomo``: a Pyomo ``ConcreteModel`` handed to a Pyomo solver interface;
* ``cvxpy``: a ``cvxpy.Problem`` solved through ``Problem.solve(solver=...)``;
* ``file``:  an LP / MPS file read by the solver itself (:func:`clusteropt.solvers.solve_file`).

Availability is probed with :func:`importlib.util.find_spec` and :func:`shutil.which`, so listing
solvers never imports a solver package.  Nothing in the package dispatches on solver names with
if/elif chains: the backends look the route up here.
"""

from __future__ import annotations

import enum
import importlib.util
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from clusteropt.solvers.result import SolverUnavailableError, UnknownSolverError

__all__ = [
    "SOLVERS",
    "Capability",
    "Route",
    "SolverSpec",
    "available_solvers",
    "get_spec",
    "solver_table",
]

BACKENDS = ("pyomo", "cvxpy", "file")


class Capability(enum.Enum):
    """Problem classes a solver can take."""

    LP = "LP"
    MILP = "MILP"
    QP = "QP"
    SOC = "SOC"
    EXP_CONE = "EXP_CONE"
    PSD = "PSD"


OptionMap = Mapping[str, Callable[[Any], dict[str, Any]]]


#: How to install what a route needs (a Python module or an executable), for the error that names it.
INSTALL_HINTS: dict[str, str] = {
    "highspy": "pip install highspy",
    "pyscipopt": "pip install 'clusteropt[scip]'",
    "gurobipy": "pip install gurobipy (or 'clusteropt[solvers]'); its bundled licence is size-limited",
    "cplex": "pip install cplex (or 'clusteropt[solvers]'); its Community Edition is size-limited",
    "xpress": "pip install xpress (or 'clusteropt[solvers]'); its community licence is size-limited",
    "coptpy": "pip install coptpy (or 'clusteropt[solvers]'); without a licence file it is size-limited",
    "clarabel": "pip install clarabel",
    "scs": "pip install scs",
    "cvxpy": "pip install cvxpy",
    "cylp": "pip install cylp (needs the CBC libraries)",
    "cvxopt": "pip install cvxopt",
    "cbc": "the COIN-OR CBC executable on PATH, e.g. apt install coinor-cbc",
    "glpsol": "the GLPK executable on PATH, e.g. apt install glpk-utils",
}


@dataclass(frozen=True)
class Route:
    """How one backend reaches a solver: its native name, what must be installed, and how the
    common options (``time_limit``, ``mip_gap``, ``threads``) are spelled natively.

    ``options`` maps a common option name to a function returning a (possibly nested) dict of
    native keyword arguments; an option missing from it is refused with a clear error.
    """

    native: str
    modules: tuple[str, ...] = ()
    executables: tuple[str, ...] = ()
    options: OptionMap = field(default_factory=dict)
    persistent: str | None = None
    """Native name of the persistent interface (Pyomo routes), used by ``PersistentSolver``."""
    reports_bound: bool = True
    """Whether a MILP stopped at a limit comes back with its dual bound through this route."""
    linear_only: bool = False
    """Pyomo routes: whether the ``native`` interface takes linear objectives only; a quadratic one
    then goes through the ``persistent`` interface."""

    def missing(self) -> list[str]:
        """Names of the modules / executables that are not installed here."""
        gone = [m for m in self.modules if importlib.util.find_spec(m) is None]
        gone += [e for e in self.executables if shutil.which(e) is None]
        return gone


@dataclass(frozen=True)
class SolverSpec:
    """One solver: name, capabilities, and its routes per backend."""

    name: str
    description: str
    capabilities: frozenset[Capability]
    routes: Mapping[str, Route] = field(default_factory=dict)
    threads: bool = True
    """Whether the solver honours a thread count (``threads=1`` is always accepted)."""
    prepare: Callable[[int | None], None] | None = None
    """Called right before every solve with the thread count it sets (None: none), e.g. HiGHS's
    :func:`clusteropt.solvers.highs.prepare` (its process-wide thread pool and banner)."""
    errors: tuple[str, ...] = ()
    """Dotted names of the exception classes the solver's library raises through Pyomo's and CVXPY's
    interfaces and its own reader (a size-limited licence's refusal above all: "Model too large for
    size-limited license", "CPLEX Error 1016", "?120 Error: Problem has too many rows and
    columns"); the routes report them as ``ERROR`` with their message (:func:`library_errors`)."""
    stdout_notices: bool = False
    """Whether the solver's library prints notices (its licence's) on the C-level standard output,
    whatever its options say; its solves then run with that output sent to standard error
    (:func:`clusteropt.solvers.core.notices_to_stderr`), so that ``--json -`` stays JSON."""

    def available(self, backend: str | None = None) -> bool:
        """Whether the solver can be used here, through ``backend`` or through any backend."""
        if backend is None:
            return any(not r.missing() for r in self.routes.values())
        route = self.routes.get(backend)
        return route is not None and not route.missing()

    def route(self, backend: str) -> Route:
        """The route for ``backend``; raises if the solver has none or it is not installed."""
        route = self.routes.get(backend)
        if route is None:
            others = ", ".join(available_solvers(backend)) or "none"
            raise SolverUnavailableError(
                f"solver '{self.name}' has no {backend} route; "
                f"solvers for {backend} models here: {others}"
            )
        gone = route.missing()
        if gone:
            others = ", ".join(available_solvers(backend)) or "none"
            hints = "; ".join(INSTALL_HINTS.get(g, f"install {g}") for g in gone)
            raise SolverUnavailableError(
                f"solver '{self.name}' for {backend} needs {', '.join(gone)}, which is not "
                f"installed ({hints}); available here: {others}"
            )
        return route


def _nest(*keys: str, cast: Callable[[Any], Any] = float) -> Callable[[Any], dict[str, Any]]:
    """Option translator: ``_nest("config", "time_limit")(5) == {"config": {"time_limit": 5.0}}``."""

    def put(value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {keys[-1]: cast(value)}
        for k in reversed(keys[:-1]):
            out = {k: out}
        return out

    return put


# the three common options through Pyomo's contrib.solver config (HiGHS, SCIP, Gurobi)
_CONTRIB: OptionMap = {
    "time_limit": _nest("config", "time_limit"),
    "mip_gap": _nest("config", "rel_gap"),
    "threads": _nest("config", "threads", cast=int),
}


# gurobipy parameters (CVXPY passes its keyword arguments on as such)
_GUROBI: OptionMap = {
    "time_limit": _nest("TimeLimit"),
    "mip_gap": _nest("MIPGap"),
    "threads": _nest("Threads", cast=int),
}

# CPLEX parameter paths (cplex.Cplex().parameters.mip.tolerances.mipgap)
_CPLEX_PATHS: OptionMap = {
    "time_limit": _nest("timelimit"),
    "mip_gap": _nest("mip.tolerances.mipgap"),
    "threads": _nest("threads", cast=int),
}

# Xpress controls (CVXPY sets every keyword that names a control)
_XPRESS: OptionMap = {
    "time_limit": _nest("timelimit"),
    "mip_gap": _nest("miprelstop"),
    "threads": _nest("threads", cast=int),
}

# COPT parameters (CVXPY passes its keyword arguments on as such)
_COPT: OptionMap = {
    "time_limit": _nest("TimeLimit"),
    "mip_gap": _nest("RelGap"),
    "threads": _nest("Threads", cast=int),
}


def _prepare_highs(threads: int | None) -> None:
    from clusteropt.solvers.highs import prepare

    prepare(threads)


def _caps(*names: str) -> frozenset[Capability]:
    return frozenset(Capability[n] for n in names)


SOLVERS: Mapping[str, SolverSpec] = {
    spec.name: spec
    for spec in (
        SolverSpec(
            "highs",
            "HiGHS: dual/primal simplex, interior point, branch-and-cut (default for LP/MILP)",
            _caps("LP", "MILP", "QP"),
            {
                "pyomo": Route("highs", ("highspy",), (), _CONTRIB, persistent="highs"),
                "cvxpy": Route(
                    "HIGHS",
                    ("highspy", "cvxpy"),
                    (),
                    {
                        "time_limit": _nest("time_limit"),
                        "mip_gap": _nest("mip_rel_gap"),
                        "threads": _nest("threads", cast=int),
                    },
                ),
                "file": Route(
                    "highspy",
                    ("highspy",),
                    (),
                    {
                        "time_limit": _nest("time_limit"),
                        "mip_gap": _nest("mip_rel_gap"),
                        "threads": _nest("threads", cast=int),
                    },
                ),
            },
            prepare=_prepare_highs,
        ),
        SolverSpec(
            "scip",
            "SCIP through PySCIPOpt: branch-cut-and-price (single-threaded)",
            _caps("LP", "MILP", "SOC"),
            {
                "pyomo": Route("scip_direct", ("pyscipopt",), (), _CONTRIB, persistent="scip_persistent"),
                "cvxpy": Route(
                    "SCIP",
                    ("pyscipopt", "cvxpy"),
                    (),
                    {
                        "time_limit": _nest("scip_params", "limits/time"),
                        "mip_gap": _nest("scip_params", "limits/gap"),
                    },
                ),
                "file": Route(
                    "pyscipopt",
                    ("pyscipopt",),
                    (),
                    {"time_limit": _nest("limits/time"), "mip_gap": _nest("limits/gap")},
                ),
            },
            threads=False,
        ),
        SolverSpec(
            "clarabel",
            "Clarabel: interior point for conic programs (default for conic CVXPY problems)",
            _caps("LP", "QP", "SOC", "EXP_CONE", "PSD"),
            {
                "cvxpy": Route(
                    "CLARABEL",
                    ("clarabel", "cvxpy"),
                    (),
                    {"time_limit": _nest("time_limit"), "threads": _nest("max_threads", cast=int)},
                )
            },
        ),
        SolverSpec(
            "scs",
            "SCS: first-order splitting conic solver (low accuracy, large scale)",
            _caps("LP", "QP", "SOC", "EXP_CONE", "PSD"),
            {"cvxpy": Route("SCS", ("scs", "cvxpy"), (), {"time_limit": _nest("time_limit_secs")})},
            threads=False,
        ),
        SolverSpec(
            "cbc",
            "COIN-OR CBC (executable `cbc`; cylp for CVXPY)",
            _caps("LP", "MILP"),
            {
                "pyomo": Route(
                    "cbc",
                    (),
                    ("cbc",),
                    {
                        "time_limit": _nest("solver_options", "sec"),
                        "mip_gap": _nest("solver_options", "ratioGap"),
                        "threads": _nest("solver_options", "threads", cast=int),
                    },
                ),
                "cvxpy": Route(
                    "CBC",
                    ("cylp", "cvxpy"),
                    (),
                    {
                        "time_limit": _nest("maximumSeconds", cast=int),
                        "mip_gap": _nest("allowableFractionGap"),
                        "threads": _nest("numberThreads", cast=int),
                    },
                ),
            },
        ),
        SolverSpec(
            "glpk",
            "GNU GLPK (executable `glpsol`; cvxopt for CVXPY), single-threaded",
            _caps("LP", "MILP"),
            {
                "pyomo": Route(
                    "glpk",
                    (),
                    ("glpsol",),
                    {
                        "time_limit": _nest("solver_options", "tmlim", cast=lambda t: max(1, round(t))),
                        "mip_gap": _nest("solver_options", "mipgap"),
                    },
                ),
                "cvxpy": Route(
                    "GLPK_MI",
                    ("cvxopt", "cvxpy"),
                    (),
                    {"time_limit": _nest("tm_lim", cast=lambda t: int(1000 * t))},
                    reports_bound=False,  # cvxopt's glpk.ilp returns no bound
                ),
            },
            threads=False,
        ),
        SolverSpec(
            "gurobi",
            "Gurobi through gurobipy (the pip edition's licence: 2,000 variables and constraints)",
            _caps("LP", "MILP", "QP", "SOC"),
            {
                # gurobi_direct: Pyomo's standard-form compiler, one hand-off; linear models only
                "pyomo": Route("gurobi_direct", ("gurobipy",), (), _CONTRIB, persistent="gurobi_persistent",
                               linear_only=True),
                "cvxpy": Route("GUROBI", ("gurobipy", "cvxpy"), (), _GUROBI),
                "file": Route("gurobipy", ("gurobipy",), (), _GUROBI),
            },
            errors=("gurobipy.GurobiError",),
            stdout_notices=True,  # "Restricted license - for non-production use only", once a process
        ),
        SolverSpec(
            "cplex",
            "IBM CPLEX through its Python API (the Community Edition: 1,000 variables and constraints)",
            _caps("LP", "MILP", "QP", "SOC"),
            {
                # Pyomo's direct interface: the CPLEX parameter path with "_" for "."
                "pyomo": Route(
                    "cplex_direct",
                    ("cplex",),
                    (),
                    {
                        "time_limit": _nest("solver_options", "timelimit"),
                        "mip_gap": _nest("solver_options", "mip_tolerances_mipgap"),
                        "threads": _nest("solver_options", "threads", cast=int),
                    },
                ),
                "cvxpy": Route(
                    "CPLEX",
                    ("cplex", "cvxpy"),
                    (),
                    {
                        "time_limit": _nest("cplex_params", "timelimit"),
                        "mip_gap": _nest("cplex_params", "mip.tolerances.mipgap"),
                        "threads": _nest("cplex_params", "threads", cast=int),
                    },
                    reports_bound=False,  # CVXPY 1.9 hands over no CPLEX statistics
                ),
                "file": Route("cplex", ("cplex",), (), _CPLEX_PATHS),
            },
            errors=("cplex.exceptions.CplexError",),
        ),
        SolverSpec(
            "xpress",
            "FICO Xpress through its Python API (the community licence: 5,000 variables and constraints)",
            _caps("LP", "MILP", "QP", "SOC"),
            {
                "pyomo": Route(
                    "xpress_direct",
                    ("xpress",),
                    (),
                    {
                        "time_limit": _nest("solver_options", "timelimit"),
                        "mip_gap": _nest("solver_options", "miprelstop"),
                        "threads": _nest("solver_options", "threads", cast=int),
                    },
                ),
                "cvxpy": Route("XPRESS", ("xpress", "cvxpy"), (), _XPRESS,
                               reports_bound=False),  # CVXPY 1.9 hands over no Xpress statistics
                "file": Route("xpress", ("xpress",), (), _XPRESS),
            },
            errors=("xpress.SolverError", "xpress.ModelError", "xpress.InterfaceError"),
        ),
        SolverSpec(
            "copt",
            "Cardinal Optimizer (COPT) through coptpy, CVXPY and files only (Pyomo has no COPT interface; "
            "without a licence file: 2,000 variables and constraints)",
            # not EXP_CONE: COPT 8.0.7's exponential-cone solve through CVXPY ended the process with an
            # illegal instruction on this package's test machine
            _caps("LP", "MILP", "SOC"),
            {
                "cvxpy": Route("COPT", ("coptpy", "cvxpy"), (), _COPT),
                "file": Route("coptpy", ("coptpy",), (), _COPT),
            },
            errors=("coptpy.CoptError",),
            stdout_notices=True,  # its licence search, at every environment it makes
        ),
    )
}

DEFAULTS: Mapping[str, tuple[str, ...]] = {
    # problem class -> solvers tried in order when ``solver=None``
    "LP": ("highs", "scip", "clarabel", "gurobi", "cplex", "xpress", "copt", "cbc", "glpk"),
    "MILP": ("highs", "scip", "gurobi", "cplex", "xpress", "copt", "cbc", "glpk"),
    "QP": ("highs", "clarabel", "gurobi", "cplex", "xpress", "scs"),
    "SOC": ("clarabel", "scs", "gurobi", "cplex", "xpress", "copt", "scip"),
    "EXP_CONE": ("clarabel", "scs"),
    "PSD": ("clarabel", "scs"),
}


def library_errors(spec: SolverSpec) -> tuple[type[BaseException], ...]:
    """The exception classes named by ``spec.errors``, imported (the solver's library is loaded by
    then: a route is solving).

    >>> library_errors(SOLVERS["highs"])
    ()
    """
    out = []
    for dotted in spec.errors:
        module, _, name = dotted.rpartition(".")
        out.append(getattr(importlib.import_module(module), name))
    return tuple(out)


def available_solvers(backend: str | None = None) -> list[str]:
    """Names of the registered solvers installed here, optionally only those for ``backend``.

    Parameters
    ----------
    backend : {"pyomo", "cvxpy", "file"} or None
        Restrict to solvers reachable through this backend.

    Examples
    --------
    >>> "highs" in available_solvers()
    True
    >>> "clarabel" in available_solvers("pyomo")
    False
    """
    if backend is not None and backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    return sorted(name for name, spec in SOLVERS.items() if spec.available(backend))


def native_aliases() -> dict[str, str]:
    """Pyomo and CVXPY names of the registered solvers -> registry name (``"scip_direct"``,
    ``"appsi_highs"``, ``"GUROBI"``, ... lower-cased), so that :func:`get_spec` takes them too.

    >>> native_aliases()["scip_direct"], native_aliases()["appsi_highs"]
    ('scip', 'highs')
    """
    out = {"appsi_highs": "highs"}
    for spec in SOLVERS.values():
        for route in spec.routes.values():
            for native in (route.native, route.persistent):
                if native:
                    out.setdefault(native.lower(), spec.name)
    return out


def get_spec(name: str) -> SolverSpec:
    """The registry entry of ``name`` (case-insensitive; a solver's Pyomo or CVXPY name works too,
    :func:`native_aliases`); unknown names list the alternatives and the closest name.

    >>> get_spec("HiGHS").name
    'highs'
    >>> get_spec("hihgs")
    Traceback (most recent call last):
    ...
    clusteropt.solvers.result.UnknownSolverError: unknown solver 'hihgs'; did you mean 'highs'? available: ...
    """
    key = str(name).lower()
    spec = SOLVERS.get(key) or SOLVERS.get(native_aliases().get(key, ""))
    if spec is None:
        import difflib

        close = difflib.get_close_matches(key, [*SOLVERS, *native_aliases()], n=1)
        hint = f"did you mean {native_aliases().get(close[0], close[0])!r}? " if close else ""
        raise UnknownSolverError(
            f"unknown solver {name!r}; {hint}available: {', '.join(available_solvers())} "
            f"(registered: {', '.join(sorted(SOLVERS))})"
        )
    return spec


def default_solver(problem_class: str, backend: str) -> str:
    """First available solver for ``problem_class`` ("LP", "MILP", ...) through ``backend``."""
    for name in DEFAULTS[problem_class]:
        if SOLVERS[name].available(backend) and Capability[problem_class] in SOLVERS[name].capabilities:
            return name
    raise SolverUnavailableError(
        f"no installed solver can take a {problem_class} {backend} model; registered for "
        f"{problem_class}: {', '.join(DEFAULTS[problem_class])}"
    )


def suitable_solvers(problem_class: str, backend: str) -> list[str]:
    """Installed solvers with ``problem_class`` capability reachable through ``backend``."""
    cap = Capability[problem_class]
    return sorted(
        n for n, s in SOLVERS.items() if cap in s.capabilities and s.available(backend)
    )


def solver_table(names: Iterable[str] | None = None) -> list[dict[str, str]]:
    """Rows (name, backends, capabilities, available) for the CLI's ``clusteropt solvers``."""
    rows = []
    for name in names or SOLVERS:
        spec = SOLVERS[name]
        rows.append(
            {
                "name": name,
                "backends": ", ".join(b for b in BACKENDS if b in spec.routes),
                "capabilities": ", ".join(
                    c.value for c in Capability if c in spec.capabilities
                ),
                "available": ", ".join(b for b in BACKENDS if spec.available(b)) or "no",
                "description": spec.description,
            }
        )
    return rows
