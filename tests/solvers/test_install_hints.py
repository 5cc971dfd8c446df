"""A solver that is not installed is named with how to install what it needs (not another solver's extra)."""

import pytest

from clusteropt.solvers import SOLVERS, SolverUnavailableError
from clusteropt.solvers.registry import INSTALL_HINTS


def test_every_route_requirement_has_a_hint():
    needed = {m for spec in SOLVERS.values() for r in spec.routes.values() for m in (*r.modules, *r.executables)}
    assert needed <= set(INSTALL_HINTS), needed - set(INSTALL_HINTS)


def test_a_missing_solver_names_its_own_install_step():
    missing = [(spec, backend, route) for spec in SOLVERS.values() for backend, route in spec.routes.items()
               if route.missing()]
    if not missing:
        pytest.skip("every solver route is installed here")
    for spec, backend, route in missing:
        with pytest.raises(SolverUnavailableError) as err:
            spec.route(backend)
        for gone in route.missing():
            assert INSTALL_HINTS[gone] in str(err.value)
        if spec.name != "scip":
            assert "clusteropt[scip]" not in str(err.value), str(err.value)
