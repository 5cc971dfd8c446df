"""Sphinx configuration of the clusteropt manual (``make docs``; warnings fail the build).

The manual is written in Markdown (MyST, ``myst_parser`` through ``myst_nb``): the user guide in
``guide/``, one page per paper in ``papers/``, the algorithm notes in ``algorithms/``, the CLI
reference generated from the click commands (``sphinx_click``), the notebooks with their
committed outputs (``myst_nb``, never executed here) and the API reference.

Three parts are generated here and not committed: the API reference, one page per module of the
package (``docs/api/<module>.rst``), so a new module is documented without editing this file;
``docs/notebooks/*.ipynb``, copies of the repository's ``notebooks/`` (Sphinx reads sources
inside this folder only); and ``docs/record/``, one page per recorded experiment with its tables
and figures as ``benchmarks/results/experiments/`` holds them, so the manual shows the record as
it is and never a copy that could drift from it.  Docstrings are numpydoc style, read by ``sphinx.ext.napoleon``.
"""

from __future__ import annotations

import pkgutil
import re
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


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:  # unchanged pages keep Sphinx's cache
        path.write_text(text)


def _unlink(cell: str) -> str:
    """A Markdown cell's links as their text (the recorded index links files beside it)."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell).strip()


def _write_record_pages() -> list[str]:
    """One page per experiment of ``benchmarks/results/experiments/index.md``: what the index says
    of it, then each of its own tables (Markdown, as recorded) and figures (PNG); an index page with
    the index's table.  Returns the experiment names.
    """
    source = ROOT / "benchmarks" / "results" / "experiments"
    target = DOCS / "record"
    target.mkdir(exist_ok=True)
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in (source / "index.md").read_text().splitlines() if line.startswith("| [")]
    from clusteropt.experiments import EXPERIMENTS

    names, papers = [], []
    for name_cell, recorded_paper, variant, code, seeds, cells, finished, files in rows:
        name = _unlink(name_cell)
        # The paper's sections as the experiment's registration names them now (a label, not data).
        paper = EXPERIMENTS[name].paper if name in EXPERIMENTS else recorded_paper
        names.append(name)
        papers.append(paper)
        rel = f"../../benchmarks/results/experiments/{name}"
        text = (f"# {name}\n\nPaper {paper}; {variant} grid; code version `{code}`; seeds {seeds}; "
                f"{cells} cells ok; finished {finished} (UTC). The files are in "
                f"`benchmarks/results/experiments/{name}/` (also `results.csv`, one row per cell, and "
                f"`summary.md`, the means per parameters and policy); made by `clusteropt experiment run "
                f"{name} --store S` and `clusteropt experiment report {name} --store S --out DIR`.\n")
        for file in re.findall(r"\[([^\]]+)\]", files):
            path = source / name / file
            if file.endswith(".md") and path.is_file():
                text += f"\n## {file}\n\n{path.read_text().strip()}\n"
            elif file.endswith(".png") and path.is_file():
                text += f"\n## {file}\n\n![{name}: {file}]({rel}/{file})\n"
        _write_if_changed(target / f"{name}.md", text)
    table = ["| experiment | paper | variant | seeds (trials) | ok / cells | finished (UTC) |",
             "|---|---|---|---|---|---|"]
    table += [f"| [{name}]({name}.md) | {paper} | {r[2]} | {r[4]} | {r[5]} | {r[6]} |"
              for name, paper, r in zip(names, papers, rows, strict=True)]
    head = (source / "index.md").read_text().split("\n\n")[1].strip()
    index = ("# Recorded experiments\n\nEvery registered experiment's recorded report, as "
             "`benchmarks/results/experiments/` holds it (the paper pages quote these numbers, and "
             "`tests/test_readme_numbers.py` checks every quoted number against these files). "
             f"{head}\n\n" + "\n".join(table) + "\n\n```{toctree}\n:hidden:\n\n" + "\n".join(names) + "\n```\n")
    _write_if_changed(target / "index.md", index)
    return names


_write_api_pages()
_copy_notebooks()
_write_record_pages()
