"""The model registry: model name -> builder and the instance kind it takes.

Each paper system registers its builders here (``register_model``), so the CLI's ``build`` and
``solve`` commands and the demo need no change when a system is added.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clusteropt.registries import lookup, register

__all__ = ["MODELS", "ModelSpec", "get_model", "models_for", "register_all", "register_model"]


@dataclass(frozen=True)
class ModelSpec:
    """A registered model.

    Attributes
    ----------
    name : str
        Registry name used by the CLI (``--model NAME``).
    kind : str
        The instance kind the builder takes.
    builder : callable
        ``builder(instance, relax=False) -> model`` (Pyomo ConcreteModel, CvxpyModel or
        :class:`~clusteropt.models.exact.ExactModel`).
    backend : str
        ``"pyomo"``, ``"cvxpy"`` or ``"exact"`` (an exact algorithm of the package: no solver, no
        LP/MPS form).
    description : str
        One line, with the paper and equation numbers.
    """

    name: str
    kind: str
    builder: Callable[..., Any]
    backend: str
    description: str

    def build(self, instance, *, relax: bool = False, **options):
        """Build the model for ``instance`` (checking the instance kind first).

        ``options`` (such as ``slot=`` for per-slot models) go to the builder; a builder that
        takes none rejects them with a ``ValueError``.
        """
        if getattr(instance, "kind", None) != self.kind:
            raise ValueError(
                f"model {self.name!r} takes instances of kind {self.kind!r}, "
                f"got {getattr(instance, 'kind', type(instance).__name__)!r}; models for that "
                f"kind: {', '.join(m.name for m in models_for(getattr(instance, 'kind', ''))) or 'none'}"
            )
        if options:
            import inspect

            params = inspect.signature(self.builder).parameters
            unknown = sorted(k for k in options if k not in params)
            if unknown:
                raise ValueError(f"model {self.name!r} takes no option {', '.join(unknown)}")
        return self.builder(instance, relax=relax, **options)


MODELS: dict[str, ModelSpec] = {}


def register_model(spec: ModelSpec) -> ModelSpec:
    """Add ``spec`` to the registry (a name may be registered once)."""
    return register(MODELS, spec, "model")


def register_all() -> dict[str, ModelSpec]:
    """Import every system's models (each registers its own on import); returns :data:`MODELS`."""
    import importlib

    from clusteropt.models import SYSTEMS

    for name in SYSTEMS:
        importlib.import_module(f"clusteropt.models.{name}")
    return MODELS


def get_model(name: str) -> ModelSpec:
    """The spec registered as ``name``; unknown names list the registered ones."""
    return lookup(register_all(), name, "model")


def models_for(kind: str) -> list[ModelSpec]:
    """Registered models that take instances of ``kind``."""
    return [m for m in register_all().values() if m.kind == kind]
