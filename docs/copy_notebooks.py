"""Puts the teaching notebooks (notebooks/*.ipynb) into the documentation site.

Run by the mkdocs-gen-files plugin (``mkdocs.yml``): each notebook becomes the page
``notebooks/<name>`` (rendered by mkdocs-jupyter, never executed at build time), listed in the
order of its number, after notebooks/README.md as the section's first page.
"""

from __future__ import annotations

from pathlib import Path

import mkdocs_gen_files

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

nav = ["* [Overview](index.md)"]
NOTE = """
!!! note "Shown without outputs"
    The notebooks are committed without outputs (the tests execute them), so these pages show
    their text and code; run one (see *Running them* below) to see its figures and checks.
"""

with mkdocs_gen_files.open("notebooks/index.md", "w") as out:
    readme = (NOTEBOOKS / "README.md").read_text()
    title, _, rest = readme.partition("\n")
    out.write(f"{title}\n{NOTE}{rest}")
for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
    with mkdocs_gen_files.open(f"notebooks/{notebook.name}", "w") as out:
        out.write(notebook.read_text())
    nav.append(f"* [{notebook.stem.replace('_', ' ')}]({notebook.name})")
with mkdocs_gen_files.open("notebooks/SUMMARY.md", "w") as out:
    out.write("\n".join(nav) + "\n")
