"""Sphinx configuration of the API reference (``make docs``; warnings fail the build).

The pages are generated here, one per module of the package (``docs/api/<module>.rst``, not
committed), so a new module is documented without editing this file.  Docstrings are numpydoc
style, read by ``sphinx.ext.napoleon``.
"""

from __future__ import annotations

import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import clusteropt  # noqa: E402

project = "clusteropt"
author = "clusteropt developers"
release = version = clusteropt.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
exclude_patterns = ["_build"]
html_theme = "alabaster"
nitpicky = False


def _write_api_pages() -> list[str]:
    """One ``automodule`` page per module of ``clusteropt``; returns the module names in order.

    A package's page shows its docstring only: its ``__init__`` defines nothing and re-exports
    its modules' names, which are documented (once) on their modules' pages.
    """
    api = Path(__file__).resolve().parent / "api"
    api.mkdir(exist_ok=True)
    found = {m.name: m.ispkg for m in pkgutil.walk_packages(clusteropt.__path__, "clusteropt.")}
    found["clusteropt"] = True
    names = sorted(found)
    for name in names:
        text = f"{name}\n{'=' * len(name)}\n\n.. automodule:: {name}\n"
        if found[name]:
            text += "   :no-members:\n"
        page = api / f"{name}.rst"
        if not page.exists() or page.read_text() != text:  # unchanged pages keep Sphinx's cache
            page.write_text(text)
    (api / "index.rst").write_text("API reference\n=============\n\n.. toctree::\n   :maxdepth: 1\n\n"
                                   + "".join(f"   {n}\n" for n in names))
    return names


_write_api_pages()
