"""Write the teaching notebooks ``notebooks/NN_*.ipynb`` from their sources in ``notebooks/src/``.

The sources are Python files in the "percent" format (as jupytext writes them): ``# %%`` starts a
code cell, ``# %% [markdown]`` a markdown cell whose lines are comments (``# `` is stripped). They
are the reviewable form of the notebooks; the ``.ipynb`` files are generated from them, without
outputs, with stable cell ids, so regenerating an unchanged source changes nothing.

    python notebooks/_build.py           # (re)write every notebook
    python notebooks/_build.py --check   # exit 1 if a notebook differs from its source
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"

METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def parse_cells(text: str) -> list[tuple[str, str]]:
    """Split a percent-format source into ``(kind, source)`` cells, kind "code" or "markdown"."""
    cells: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("# %%"):
            cells.append(("markdown" if "[markdown]" in line else "code", []))
        elif cells:
            cells[-1][1].append(line)
        elif line.strip():
            raise ValueError(f"text before the first '# %%' cell marker: {line!r}")
    out = []
    for kind, lines in cells:
        if kind == "markdown":
            lines = [_uncomment(line) for line in lines]
        source = "\n".join(lines).strip("\n")
        if source:
            out.append((kind, source))
    return out


def _uncomment(line: str) -> str:
    if line in ("", "#"):
        return ""
    if not line.startswith("# "):
        raise ValueError(f"markdown lines must start with '# ': {line!r}")
    return line[2:]


def build(source: Path) -> nbformat.NotebookNode:
    """The notebook of one percent-format source: no outputs, cell ids ``cell-00``, ..."""
    nb = nbformat.v4.new_notebook(metadata=METADATA)
    for i, (kind, text) in enumerate(parse_cells(source.read_text())):
        make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
        nb.cells.append(make(text, id=f"cell-{i:02d}"))
    nbformat.validate(nb)
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    return nbformat.writes(nb) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for source in sorted(SOURCES.glob("[0-9][0-9]_*.py")):
        target = HERE / f"{source.stem}.ipynb"
        text = render(build(source))
        if target.exists() and target.read_text() == text:
            continue
        stale.append(target.name)
        if not args.check:
            target.write_text(text)
    if args.check and stale:
        print(f"out of date (run python notebooks/_build.py): {', '.join(stale)}")
        return 1
    if not args.check:
        print(f"wrote {len(stale)} notebook(s)" + (f": {', '.join(stale)}" if stale else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
