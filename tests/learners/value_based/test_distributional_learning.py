"""Learning tests of the distributional recipes, seed 0: C51, IQN and Rainbow reach a greedy
evaluation mean of 195 on CartPole-v1 within their 80k-step budget (Tianshou's CI anchor).

The recipes evaluate the greedy policy every 10% of the run (5 episodes on a separate
environment); the run stops at the first evaluation reaching 195, or runs the whole 80k steps
and fails. The 5-seed table is benchmarks/distributional.py's (``solve``), in
benchmarks/README.md. Seed 0 reaches 195 at 16k steps (C51), 24k (IQN) and 8k (Rainbow); on the
busy shared machine that took about 20 s, 150 s and 20 s of CPU: IQN's test is over the ~60 s
aim (IQN costs 9 x DQN per step), kept because it stops at the threshold.
"""

from __future__ import annotations

from typing import Any

import pytest

import rlkit as rk

THRESHOLD = 195.0


class ReachedThreshold(rk.AbstractStopCondition):
    """Stops after the step at which ``hook`` recorded an evaluation reaching ``threshold``."""

    def __init__(self, hook: rk.EvaluationHook, threshold: float) -> None:
        self.hook, self.threshold = hook, threshold

    def step(self, policy: Any, env: Any) -> bool:
        return bool(self.hook.results) and self.hook.results[-1].mean >= self.threshold


@pytest.mark.slow
@pytest.mark.parametrize("name", ["C51_CartPole", "IQN_CartPole", "Rainbow_CartPole"])
def test_reaches_195_on_cartpole_within_80k_steps(name):
    experiment = rk.make_experiment(name, seed=0)
    assert experiment.params["total_steps"] == 80_000
    hook = experiment.hook[rk.EvaluationHook]
    stop = experiment.stop_condition | ReachedThreshold(hook, THRESHOLD)
    rk.run(experiment.policy, experiment.env, stop, experiment.hook)
    curve = [(r.step, r.mean) for r in hook.results]
    assert curve and curve[-1][1] >= THRESHOLD, curve
    assert curve[-1][0] <= 80_000
