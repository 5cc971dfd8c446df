"""Old module paths that still import: a system's files became a subpackage of its room.

``import clusteropt.models.gadget_matrix`` (or ``from clusteropt.models.gadget_matrix import
build_gvne_matrix``) gives the very module :mod:`clusteropt.models.gadget.matrix`: the same object,
so its attributes, classes and monkeypatches are shared.  The table is the whole mechanism; an old
path of a module that became a package of the same name (``clusteropt.models.gadget``) needs no
entry, since the package re-exports that module's public names.

The finder is a :class:`importlib.abc.MetaPathFinder` consulted for these names only; the loader
hands back the already-imported target module instead of executing anything.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

__all__ = ["MOVED", "install"]

#: Old module path -> where the module lives now.
MOVED: dict[str, str] = {
    "clusteropt.algorithms.broker.decision": "clusteropt.decisions.broker",
    "clusteropt.algorithms.coflow.schedule": "clusteropt.decisions.coflow",
    "clusteropt.algorithms.gadget.allocation": "clusteropt.decisions.gadget",
    "clusteropt.algorithms.ring.mts_hst": "clusteropt.algorithms.ring.mts.hst",
    "clusteropt.algorithms.ring.mts_mix": "clusteropt.algorithms.ring.mts.mix",
    "clusteropt.instances.coflow_random": "clusteropt.instances.coflow.generate",
    "clusteropt.instances.coflow_trace": "clusteropt.instances.coflow.trace",
    "clusteropt.instances.gadget_trace": "clusteropt.instances.gadget.trace",
    "clusteropt.models.broker_matrix": "clusteropt.models.broker.matrix",
    "clusteropt.models.coflow_matrix": "clusteropt.models.coflow.matrix",
    "clusteropt.models.gadget_colgen": "clusteropt.models.gadget.colgen",
    "clusteropt.models.gadget_embedding": "clusteropt.models.gadget.embedding",
    "clusteropt.models.gadget_extended": "clusteropt.models.gadget.extended",
    "clusteropt.models.gadget_matrix": "clusteropt.models.gadget.matrix",
    "clusteropt.models.gadget_offline": "clusteropt.models.gadget.ddljs",
    "clusteropt.models.ring_cut": "clusteropt.models.ring.cut",
    "clusteropt.models.ring_move": "clusteropt.models.ring.move",
    "clusteropt.online.regions": "clusteropt.online.realtime.regions",
    "clusteropt.rounding.broker_slot": "clusteropt.rounding.broker.slot_milp",
}


class _Alias(importlib.abc.Loader):
    """Loads an old path as the module at its new path (imported once, under its new name)."""

    def __init__(self, target: str):
        self.target = target
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system set ``module.__spec__`` to the old path's spec: give it back its own
        module.__spec__ = self._spec


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    """Put the finder on :data:`sys.meta_path` (once)."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
