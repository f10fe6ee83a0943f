"""The learning pipeline's structure (one way to write a deep learner): only the optimizer
modules back-propagate and step torch optimizers; only the drivers (and ES, whose timing is its
own) register PostAct methods for deep learners; every deep algorithm has its update(X, Batch)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import rlkit as rk

RLKIT = Path(rk.__file__).resolve().parent
DEEP = ("policy_gradient", "actor_critic", "value_based", "offline")


def _sources(folder: Path):
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield node


def test_only_the_optimizer_modules_backpropagate():
    found = []
    for path in _sources(RLKIT):
        if path.is_relative_to(RLKIT / "optimizers"):
            continue
        for call in _calls(ast.parse(path.read_text())):
            name = call.func.attr
            owner = ast.unparse(call.func.value)
            torch_step = name == "step" and not call.args and "optim" in owner.lower()
            if name in ("backward", "zero_grad") or (name == "grad" and "autograd" in owner) \
                    or torch_step:  # a module tree's step takes the parameters
                found.append(f"{path.relative_to(RLKIT)}:{call.lineno}: {ast.unparse(call)}")
    assert found == []


def _post_act_methods(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.FunctionDef):
            continue
        dispatched = any("update.dispatch" in ast.unparse(d) for d in node.decorator_list)
        annotations = [ast.unparse(a.annotation) for a in node.args.posonlyargs if a.annotation]
        if dispatched and any("PostActStage" in a for a in annotations):
            found.append(f"{path.relative_to(RLKIT)}:{node.lineno}")
    return found


def test_post_act_belongs_to_the_drivers():
    algorithms = [m for family in DEEP for p in _sources(RLKIT / "learners" / family)
                  for m in _post_act_methods(p)]
    assert [m.split(":")[0] for m in algorithms] == ["learners/policy_gradient/es.py"]
    drivers = [m for p in _sources(RLKIT / "learners" / "drivers") for m in _post_act_methods(p)]
    assert {m.split(":")[0] for m in drivers} == {
        "learners/drivers/on_policy.py", "learners/drivers/off_policy.py",
        "learners/drivers/offline.py"}


@pytest.mark.parametrize("name", ["VPG", "A2C", "PPO", "TRPO", "ES", "DDPG", "TD3", "SAC",
                                  "DQNLearner", "BasicDQNLearner", "PrioritizedDQNLearner",
                                  "QRDQNLearner", "BC", "DiscreteCQL", "CQL", "IQL", "TD3BC"])
def test_every_deep_algorithm_has_its_update(name):
    from rlkit.learners.built import update_where

    assert update_where(getattr(rk, name)).startswith("rlkit/learners/")
