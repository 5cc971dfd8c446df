"""The package's verbs, the same for every system (re-exported from ``clusteropt``).

==========================  ===========================================================
``generate(kind, **p)``     a random or preset instance of ``kind``
``load(path)``              an instance file of any kind (``save(instance, path)`` writes one)
``build(name, inst, ...)``  a registered model by name (``list_models()``)
``solve(model, solver)``    solve it (:func:`clusteropt.solvers.solve`)
``run(inst, policy, ...)``  an online / offline policy run, verified (:func:`clusteropt.runs.run`)
``check(inst, output)``     re-check a run or an ``out.json`` (:func:`clusteropt.runs.check`)
``list_models(kind)``       registered models, as dicts
``list_policies(kind)``     registered policies, as dicts
``list_solvers()``          registered solvers and where they are installed, as dicts
==========================  ===========================================================

Examples
--------
>>> import clusteropt
>>> inst = clusteropt.generate("worker-placement", n_jobs=6, n_servers=3, seed=0)
>>> model = clusteropt.build("worker-placement", inst)
>>> result = clusteropt.solve(model, "highs")
>>> result.termination.name
'OPTIMAL'
>>> [(m["name"], m["backend"]) for m in clusteropt.list_models("worker-placement")]
[('worker-placement', 'pyomo'), ('worker-placement-cvxpy', 'cvxpy')]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["GENERATORS", "build", "generate", "list_models", "list_solvers", "load", "save"]


def _realtime(preset: str | None = None, **params):
    from clusteropt.instances import random_realtime, realtime_preset

    return random_realtime(**params) if preset is None else realtime_preset(preset, **params)


def _gadget(preset: str | None = None, **params):
    from clusteropt.instances import gadget_preset, random_gadget

    return random_gadget(**params) if preset is None else gadget_preset(preset, **params)


def _broker(preset: str | None = None, **params):
    from clusteropt.instances import broker_preset, random_broker

    return random_broker(**params) if preset is None else broker_preset(preset, **params)


def _plain(name: str) -> Callable[..., Any]:
    def make(**params):
        import clusteropt.instances

        return getattr(clusteropt.instances, name)(**params)

    make.__name__ = name
    return make


#: Instance kind -> generator (the keywords are the generator's own; ``preset=`` picks a preset).
GENERATORS: dict[str, tuple[Callable[..., Any], str]] = {
    "coflow": (_plain("random_coflows"), "clusteropt.instances.random_coflows"),
    "realtime": (_realtime, "clusteropt.instances.realtime_preset (preset=) or random_realtime"),
    "gadget": (_gadget, "clusteropt.instances.gadget_preset (preset=) or random_gadget"),
    "broker": (_broker, "clusteropt.instances.broker_preset (preset=) or random_broker"),
    "ring": (_plain("random_ring"), "clusteropt.instances.random_ring"),
    "worker-placement": (_plain("random_worker_placement"), "clusteropt.instances.random_worker_placement"),
}


def generate(kind: str, **params):
    """A generated instance of ``kind``.

    ``params`` are the keywords of the kind's generator (:data:`GENERATORS` names it): for
    realtime, gadget and broker ``preset="..."`` selects the paper's presets, otherwise the random
    generator runs.  Generators draw only from their ``seed``.

    Raises
    ------
    ValueError
        Unknown kind (the known ones listed), or a keyword the generator does not take (named).

    Examples
    --------
    >>> import clusteropt
    >>> clusteropt.generate("ring", n=8, servers=2, requests=50, seed=0).n_requests
    50
    >>> clusteropt.generate("gadget", preset="tiny", jobs=4, seed=0).n_jobs
    4
    """
    if kind not in GENERATORS:
        raise ValueError(f"kind = {kind!r}; expected one of {', '.join(GENERATORS)}")
    make, name = GENERATORS[kind]
    try:
        return make(**params)
    except TypeError as exc:
        text = str(exc)
        if "unexpected keyword argument" in text or "required" in text:
            raise ValueError(f"generate({kind!r}): {text.split(') ', 1)[-1]} (the generator is {name})") from None
        raise


def load(path: str | Path):
    """An instance file of any registered kind (:func:`clusteropt.instances.load_instance`)."""
    from clusteropt.instances import load_instance

    return load_instance(path)


def save(instance, path: str | Path) -> Path:
    """Write ``instance`` as JSON to ``path`` (a large ring sequence goes to a ``.npy`` beside it)."""
    instance.to_json(path)
    return Path(path)


def build(model_name: str, instance, *, relax: bool = False, arrays: bool | None = False, **options):
    """The registered model ``model_name`` built for ``instance``: what ``clusteropt build`` shows.

    Per-slot models take ``slot=``; the broker models ``price_form=``.  The result is a Pyomo
    ``ConcreteModel`` or a :class:`~clusteropt.models.cvxpy_model.CvxpyModel`, ready for
    :func:`clusteropt.solve` and :func:`clusteropt.write_model`.  ``arrays=True`` gives the same
    model as a :class:`~clusteropt.models.matrix.MatrixLP` instead (models that have an array form:
    ``list_models()``'s ``forms``), which both take too and which skips the modelling layer;
    ``arrays=None`` the arrays where the model has them for this instance, else the model: what
    ``clusteropt solve`` and ``export`` use.

    Raises
    ------
    ValueError
        Unknown model (the registered ones listed), an instance of another kind, or an option the
        builder does not take.
    """
    from clusteropt.models import get_model

    return get_model(model_name).build(instance, relax=relax, arrays=arrays, **options)


def list_models(kind: str | None = None) -> list[dict[str, Any]]:
    """Registered models (of ``kind``): dicts of name, kind, backend, forms, description."""
    from clusteropt.models import register_all

    return [{"name": m.name, "kind": m.kind, "backend": m.backend, "forms": list(m.forms),
             "description": m.description}
            for m in register_all().values() if kind is None or m.kind == kind]


def list_solvers() -> list[dict[str, Any]]:
    """Registered solvers: dicts of name, description, capabilities, backends (routes) and
    ``available`` (the backends whose route is installed here), lists not joined text.
    """
    from clusteropt.solvers.registry import BACKENDS, SOLVERS, Capability

    rows = []
    for name, spec in SOLVERS.items():
        rows.append({
            "name": name,
            "description": spec.description,
            "capabilities": [c.value for c in Capability if c in spec.capabilities],
            "backends": [b for b in BACKENDS if b in spec.routes],
            "available": [b for b in BACKENDS if spec.available(b)],
        })
    return rows
