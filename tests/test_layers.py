"""The layers of DESIGN.md section 1, checked by import-linter's contract in pyproject.toml."""

from __future__ import annotations

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
