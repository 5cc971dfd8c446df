"""Sphinx configuration of the clusteropt manual (``make docs``; warnings fail the build).

The manual is written in Markdown (MyST, ``myst_parser`` through ``myst_nb``): the user guide in
``guide/``, one page per paper in ``papers/``, the algorithm notes in ``algorithms/``, the CLI
reference generated from the click commands (``sphinx_click``), the notebooks with their
committed outputs (``myst_nb``, never executed here) and the API reference.

Two parts are generated here and not committed: the API reference, one page per module of the
package (``docs/api/<module>.rst``), so a new module is documented without editing this file,
and ``docs/notebooks/*.ipynb``, copies of the repository's ``notebooks/`` (Sphinx reads sources
inside this folder only).  Docstrings are numpydoc style, read by ``sphinx.ext.napoleon``.
"""

from __future__ import annotations

import pkgutil
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

import clusteropt  # noqa: E402

project = "clusteropt"
author = "clusteropt developers"
release = version = clusteropt.__version__
extensions = [
    "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode", "sphinx_click", "myst_nb",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
exclude_patterns = ["_build", "jupyter_execute", "**.ipynb_checkpoints"]
html_theme = "alabaster"
html_theme_options = {"description": "scheduling and placement models from five papers", "page_width": "1180px"}
nitpicky = False

# MyST: heading anchors for links inside a page (``page.md#section``), tables, ``$math$``.
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
# The notebooks are committed executed (``make notebooks``); the manual shows those outputs.
nb_execution_mode = "off"
nb_merge_streams = True


def _write_api_pages() -> list[str]:
    """One ``automodule`` page per module of ``clusteropt``; returns the module names in order.

    A package's page shows its docstring only: its ``__init__`` defines nothing and re-exports
    its modules' names, which are documented (once) on their modules' pages.
    """
    api = DOCS / "api"
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
    index = ("API reference\n=============\n\nOne page per module, from the docstrings.\n\n"
             ".. toctree::\n   :maxdepth: 1\n\n" + "".join(f"   {n}\n" for n in names))
    if not (api / "index.rst").exists() or (api / "index.rst").read_text() != index:
        (api / "index.rst").write_text(index)
    return names


def _copy_notebooks() -> list[str]:
    """Copy ``notebooks/*.ipynb`` into ``docs/notebooks/`` (unchanged copies are left alone)."""
    target = DOCS / "notebooks"
    target.mkdir(exist_ok=True)
    names = []
    for source in sorted((ROOT / "notebooks").glob("*.ipynb")):
        copy = target / source.name
        if not copy.exists() or copy.read_bytes() != source.read_bytes():
            shutil.copyfile(source, copy)
        names.append(source.stem)
    return names


_write_api_pages()
_copy_notebooks()
