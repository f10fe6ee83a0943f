"""The layers of docs/architecture.md, checked by import-linter's contract in pyproject.toml."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    return subprocess.run(
        [exe, "--no-cache"], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_layers_contract_is_kept():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "upward"),
    [
        ("rlkit/core/run.py", "from ..policies.agent import Agent"),
        ("rlkit/hooks/evaluate.py", "from ..policies.q_based import QBasedPolicy"),
        ("rlkit/trajectories/episodic.py", "from ..learners.tabular.td import TDLearner"),
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path, module, upward):
    copy = tmp_path / "repo"
    copy.mkdir()
    shutil.copy(ROOT / "pyproject.toml", copy)
    shutil.copytree(ROOT / "rlkit", copy / "rlkit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "experiments", copy / "experiments")
    target = copy / module
    target.write_text(target.read_text() + f"\n\ndef _wrong():\n    {upward}\n")
    result = _lint_imports(copy)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout
    layer = module.split("/")[1]
    assert f"rlkit.{layer} is not allowed to import" in result.stdout


# ---- no import inside a function closes a cycle (issue 20) ----

# Modules that must import everything they use at the top: core, and the vector env's backends.
NO_LOCAL_IMPORTS = [
    *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "rlkit" / "core").glob("*.py")),
    "rlkit/envs/vector.py",
    "rlkit/envs/vector_group.py",
    "rlkit/envs/ray_backend.py",
]
# optional third-party packages: imported where they are needed, so rlkit runs without them
OPTIONAL = {"ray", "torch", "tensorboard", "safetensors", "matplotlib", "mujoco", "minari"}


def local_imports(source: str) -> list[str]:
    """The imports inside function bodies of ``source`` that are not of an optional package:
    relative imports, imports of rlkit (or its recipes), anything else, and imports by a
    computed name (``importlib.import_module``, ``__import__``)."""
    found, seen = [], set()
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(function):
            if id(node) in seen:  # in a nested function: counted with the outer one
                continue
            seen.add(id(node))
            if isinstance(node, ast.ImportFrom):
                top = None if node.level else (node.module or "").split(".")[0]
            elif isinstance(node, ast.Import):
                tops = {alias.name.split(".")[0] for alias in node.names}
                top = tops.pop() if len(tops) == 1 else None
            elif isinstance(node, ast.Call) and ast.unparse(node.func) in (
                "importlib.import_module",
                "import_module",
                "__import__",
            ):
                top = None
            else:
                continue
            if top not in OPTIONAL:
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("module", NO_LOCAL_IMPORTS)
def test_no_module_imports_inside_a_function(module):
    assert local_imports((ROOT / module).read_text()) == []


def test_local_imports_are_found():
    source = """
import os
from .run import run


def f():
    from .experiment import Experiment
    from ..core import checks
    import rlkit.core.run
    import torch
    import ray
    return importlib.import_module("rlkit.experiments")


class A:
    def g(self):
        import json

        def h():
            from .vector import _Group
"""
    assert local_imports(source) == [
        "line 7: from .experiment import Experiment",
        "line 8: from ..core import checks",
        "line 9: import rlkit.core.run",
        "line 12: importlib.import_module('rlkit.experiments')",
        "line 17: import json",
        "line 20: from .vector import _Group",
    ]


def test_every_package_is_listed_for_installation():
    """A subpackage missing from pyproject.toml's ``packages`` is absent from a non-editable
    install (``pip install .``, a wheel) while every test of an editable one passes."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    listed = set(re.findall(r'^    "(rlkit[\w.]*)",$', (root / "pyproject.toml").read_text(), re.M))
    found = {
        ".".join(init.parent.relative_to(root).parts)
        for init in (root / "rlkit").rglob("__init__.py")
    }
    assert found <= listed, sorted(found - listed)
