"""The MBPO_Pendulum recipe's first model (issue 27's "MBPO_Pendulum does not learn"): fitted on
the recipe's 500 random steps, it must predict Pendulum's reward well enough for SAC to learn
from its rollouts. With MBPO's minibatch of 256 the 400 training transitions give two gradient
steps an epoch and the early stop ended the fit with the reward off by about 1.4 (|r| about 6);
the recipe's minibatch of 32 brings it to about 0.7 on the rollouts' start states. On fresh
random-action transitions (this test, seed 0): 0.87 with the old settings (minibatch 256, 30
epochs), 0.48 with the recipe's."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk


def _random_transitions(n: int, seed: int) -> dict[str, np.ndarray]:
    env = rk.GymEnv("Pendulum-v1", seed=seed)
    env.reset()
    rng = np.random.default_rng(seed)
    rows: dict[str, list] = {"state": [], "action": [], "reward": [], "next_state": []}
    for _ in range(n):
        if env.is_terminated or env.is_truncated:
            env.reset()
        state = np.array(env.state, dtype=np.float32)
        action = rng.uniform(-2.0, 2.0, size=1).astype(np.float32)
        env(action)
        rows["state"].append(state)
        rows["action"].append(action)
        rows["reward"].append(env.reward)
        rows["next_state"].append(np.array(env.state, dtype=np.float32))
    return {k: np.asarray(v, dtype=np.float32) for k, v in rows.items()}


def _first_model_reward_error(**changes) -> float:
    experiment = rk.make_experiment("MBPO_Pendulum", 0, total_steps=500, **changes)
    rk.run(experiment.policy, experiment.env, rk.StopAfterNSteps(500))
    policy = experiment.policy.policy
    assert policy.model_fits == 1
    test = _random_transitions(500, seed=123)
    _, reward = policy.dynamics((test["state"], test["action"]))
    return float(np.abs(reward - test["reward"]).mean())


@pytest.mark.slow
def test_the_recipe_s_first_model_predicts_the_reward():
    assert _first_model_reward_error() < 0.65
