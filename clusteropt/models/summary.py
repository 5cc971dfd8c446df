"""Looking into a built model: components with their sizes and the paper's equation."""

from __future__ import annotations

from typing import Any

from clusteropt.models.cvxpy_model import CvxpyModel
from clusteropt.models.exact import ExactModel

__all__ = ["model_summary"]


def model_summary(model: Any) -> list[dict[str, Any]]:
    """One row per component: ``component``, ``type`` (variable / constraint / objective /
    parameter), ``size`` (scalar count) and ``doc`` (the paper's symbol and equation).

    Works for Pyomo models, :class:`CvxpyModel` wrappers and :class:`ExactModel` algorithms.

    >>> import pyomo.environ as pyo
    >>> m = pyo.ConcreteModel()
    >>> m.x = pyo.Var([1, 2], doc="x_i")
    >>> m.c = pyo.Constraint(expr=m.x[1] + m.x[2] <= 1, doc="(1)")
    >>> [(r["component"], r["type"], r["size"]) for r in model_summary(m)]
    [('x', 'variable', 2), ('c', 'constraint', 1)]
    """
    if isinstance(model, ExactModel):
        return [dict(row) for row in model.components]
    if isinstance(model, CvxpyModel):
        docs = model.docs
        rows = [
            {"component": k, "type": "variable", "size": int(v.size), "doc": docs.get(k, v.name())}
            for k, v in model.variables.items()
        ]
        rows += [
            {"component": k, "type": "parameter", "size": int(v.size), "doc": docs.get(k, v.name())}
            for k, v in model.parameters.items()
        ]
        rows += [
            {
                "component": k,
                "type": "constraint",
                "size": int(sum(c.size for c in model.constraint_list(k))),
                "doc": docs.get(k, ""),
            }
            for k in model.constraints
        ]
        rows.append(
            {"component": "objective", "type": "objective", "size": 1,
             "doc": docs.get("objective", type(model.problem.objective).__name__)}
        )
        return rows
    import pyomo.environ as pyo

    kinds = (
        (pyo.Var, "variable"),
        (pyo.Param, "parameter"),
        (pyo.Constraint, "constraint"),
        (pyo.Objective, "objective"),
    )
    rows = []
    for comp in model.component_objects(
        tuple(k for k, _ in kinds), active=True, descend_into=True, sort=False
    ):
        label = next(name for k, name in kinds if comp.ctype is k)
        rows.append(
            {"component": comp.name, "type": label, "size": len(comp), "doc": comp.doc or ""}
        )
    return rows
