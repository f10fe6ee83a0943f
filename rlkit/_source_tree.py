"""``rlkit.experiments`` when ``rlkit`` is imported from a source tree.

pyproject.toml maps the ``experiments/`` folder to the package ``rlkit.experiments`` (the wheel
holds it as ``rlkit/experiments/``, an editable install maps it with its own finder). A script run
from a clone after a non-editable ``pip install .`` imports the clone's ``rlkit/``, which has no
``experiments`` inside, while the installed entry points of the recipes name
``rlkit.experiments.<family>``: this finder, consulted after every other one, gives the same
mapping for such a tree. It imports nothing; the registry loads the recipes through their entry
points as from an installed package.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from typing import Any

__all__ = ["install"]

_PACKAGE = "rlkit.experiments"


class _RecipesBesideThePackage(importlib.abc.MetaPathFinder):
    """Finds ``rlkit.experiments`` in ``folder`` (its submodules are then found in the package's
    ``__path__`` as usual)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.folder)!r})"

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _PACKAGE:
            return None
        return importlib.util.spec_from_file_location(
            fullname, self.folder / "__init__.py", submodule_search_locations=[str(self.folder)]
        )


def install(init_file: str) -> None:
    """Add the finder (last) when the ``rlkit/`` of ``init_file`` (its ``__init__.py``) is a
    source tree: no ``experiments`` package inside it, an ``experiments/`` package beside it."""
    package_dir = Path(init_file).resolve().parent
    folder = package_dir.parent / "experiments"
    if (package_dir / "experiments").is_dir() or not (folder / "__init__.py").is_file():
        return
    if not any(isinstance(f, _RecipesBesideThePackage) for f in sys.meta_path):
        sys.meta_path.append(_RecipesBesideThePackage(folder))
