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
    array_builder : callable or str, optional
        ``array_builder(instance, relax=False, **options) -> MatrixLP`` (or its ``"module:function"``
        path, imported on first use: an array module imports its model module, which so need not
        import it back): the same model as ``builder``'s, row for row (tested against Pyomo's
        standard-form compiler), built as the arrays HiGHS takes without building the Pyomo model
        (:mod:`clusteropt.models.matrix`).  ``clusteropt
        solve`` and ``export`` take this form; ``clusteropt build`` and :func:`clusteropt.build`
        show the Pyomo model.
    """

    name: str
    kind: str
    builder: Callable[..., Any]
    backend: str
    description: str
    array_builder: Callable[..., Any] | str | None = None

    @property
    def forms(self) -> tuple[str, ...]:
        """The forms :meth:`build` makes: ``("model",)``, plus ``"arrays"`` with an array builder."""
        return ("model", "arrays") if self.array_builder is not None else ("model",)

    def build(self, instance, *, relax: bool = False, arrays: bool | None = False, **options):
        """Build the model for ``instance`` (checking the instance kind first).

        ``options`` (such as ``slot=`` for per-slot models) go to the builder; a builder that
        takes none rejects them with a ``ValueError``.  ``arrays=True`` builds the
        :class:`~clusteropt.models.matrix.MatrixLP` instead of the Pyomo / CVXPY model (models
        with an array builder, :attr:`forms`); ``arrays=None`` the arrays where the model has them
        and they cover the instance and options (an array builder raises
        :class:`~clusteropt.models.matrix.NoArrayForm` for what it does not cover, e.g. GADGET's
        flow form), else the model.
        """
        from clusteropt.models.matrix import NoArrayForm

        if arrays and self.array_builder is None:
            with_arrays = [m.name for m in MODELS.values() if m.array_builder is not None]
            raise ValueError(f"model {self.name!r} has no array form; models with one: "
                             f"{', '.join(with_arrays) or 'none'}")
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
        if arrays is not False and self.array_builder is not None:
            builder = self.array_builder
            if isinstance(builder, str):
                import importlib

                module, _, function = builder.partition(":")
                builder = getattr(importlib.import_module(module), function)
            try:
                return builder(instance, relax=relax, **options)
            except NoArrayForm:
                if arrays:
                    raise
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
