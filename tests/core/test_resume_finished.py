"""Issue 21 item 1: a run killed after its final checkpoint, then resumed, ends exactly as the
uninterrupted run: every hook's PostExperiment once, the same final parameters
(rlkit/core/run.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rlkit as rk
from rlkit.core.state import get_state
from rlkit.hooks.checkpoint import CheckpointHook, latest_checkpoint, read_checkpoint

torch = pytest.importorskip("torch")

SEED, STEPS, EVERY = 2, 2_000, 500

# A process that runs DQN_CartPole with a best-policy EvaluationHook and checkpoints, and is
# SIGKILLed after its final checkpoint, when its PostExperiment begins.
KILLED_RUN = textwrap.dedent(
    f"""
    import os, signal, sys
    import rlkit as rk
    from rlkit.hooks.checkpoint import CheckpointHook

    def kill(policy, env):
        os.kill(os.getpid(), signal.SIGKILL)

    experiment = rk.make_experiment("DQN_CartPole", seed={SEED}, total_steps={STEPS})
    hook = rk.DoOnExit(kill) + experiment.hook + CheckpointHook(sys.argv[1], every_n_steps={EVERY})
    rk.run(experiment.policy, experiment.env, experiment.stop_condition, hook)
    """
)


def same(a: Any, b: Any) -> bool:
    """Exact equality of two nested states (tensors, arrays, containers)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


def run(folder: Path, resume: bool = False) -> tuple[Any, Any, list]:
    """DQN_CartPole (seed 2, 2,000 steps, a checkpoint every 500); the hook counting its
    PostExperiment calls is the first of the chain, as the killed run's was."""
    experiment = rk.make_experiment("DQN_CartPole", seed=SEED, total_steps=STEPS)
    calls: list = []
    hook = (
        rk.DoOnExit(lambda policy, env: calls.append(1))
        + experiment.hook
        + CheckpointHook(folder, every_n_steps=EVERY)
    )
    rk.run(
        experiment.policy,
        experiment.env,
        experiment.stop_condition,
        hook,
        resume_from=folder if resume else None,
    )
    return experiment, hook, calls


def test_a_finished_run_killed_after_its_final_checkpoint_resumes_to_the_same_end(tmp_path):
    whole, whole_hook, whole_calls = run(tmp_path / "whole")
    evaluation = whole_hook[rk.EvaluationHook]
    assert evaluation.restored_step is not None and evaluation.restored_step < STEPS
    assert whole_calls == [1]

    killed = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, str(tmp_path / "killed")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert killed.returncode == -9, killed.stderr  # SIGKILLed at PostExperiment
    final = latest_checkpoint(tmp_path / "killed")
    assert final.name == f"checkpoint-{STEPS:012d}.safetensors"
    assert read_checkpoint(final)["meta"]["finished"]

    resumed, resumed_hook, resumed_calls = run(tmp_path / "killed", resume=True)
    assert resumed_calls == [1]  # every hook's PostExperiment, once
    assert resumed_hook[rk.EvaluationHook].restored_step == evaluation.restored_step
    assert same(get_state(resumed.policy.policy), get_state(whole.policy.policy))
    assert resumed_hook[rk.TotalRewardPerEpisode].rewards == whole_hook[
        rk.TotalRewardPerEpisode
    ].rewards
    assert latest_checkpoint(tmp_path / "killed") == final  # no step was run, nothing written


class Stages(rk.AbstractHook):
    """Records the stages it is called at."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def pre_experiment(self, policy: Any, env: Any) -> None:
        self.seen.append("PreExperiment")

    def pre_episode(self, policy: Any, env: Any) -> None:
        self.seen.append("PreEpisode")

    def post_act(self, policy: Any, env: Any) -> None:
        self.seen.append("PostAct")

    def post_experiment(self, policy: Any, env: Any) -> None:
        self.seen.append("PostExperiment")

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


@pytest.mark.parametrize("make_stop", [lambda: rk.StopAfterNSteps(30),
                                       lambda: rk.StopAfterNEpisodes(3)])
def test_a_resumed_finished_run_announces_post_experiment_only(tmp_path, make_stop):
    """The rule is general, no hook's special case: from a finished checkpoint the run
    announces PostExperiment to every hook, once, and no other stage."""

    def chain() -> Any:
        return Stages() + rk.TotalRewardPerEpisode() + CheckpointHook(tmp_path, every_n_steps=7)

    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), make_stop(), chain())
    hook = chain()
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), make_stop(), hook,
           resume_from=tmp_path)
    assert hook[Stages].seen == ["PostExperiment"]
