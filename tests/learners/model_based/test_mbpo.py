"""rk.MBPO: the model's timing, rollouts that stop at predicted terminations, the rollout
schedule, the mixed batches, reproducibility and bad input (issue 27)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.learners.model_based.mbpo import model_rollouts, rollout_length

SMALL = dict(
    learning_starts=100, model_train_freq=50, batch_size=32, hidden=(16, 16),
    model_hidden=(16,), ensemble_size=3, n_elites=2, rollout_batch_size=20, gradient_steps=2,
    model_max_epochs=2, rollout_schedule=(0, 1, 2, 2), epoch_length=100,
)  # fmt: skip


def _run(steps, seed=0, **changes):
    env = rk.GymEnv("Pendulum-v1", seed=seed)
    agent = rk.MBPO.agent(env, seed=seed, **{**SMALL, **changes})
    rk.run(agent, env, rk.StopAfterNSteps(steps))
    return agent


def test_mbpo_is_sac_with_a_model():
    assert issubclass(rk.MBPO, rk.SAC)
    policy = rk.MBPO(rk.GymEnv("Pendulum-v1"), seed=0, **SMALL)
    assert isinstance(policy.dynamics, rk.EnsembleDynamicsModel)
    assert policy.config["real_ratio"] == 0.05  # the paper's


def test_the_model_is_trained_at_learning_starts_then_every_model_train_freq():
    agent = _run(99)
    assert agent.policy.model_fits == 0 and agent.policy.gradient_steps == 0
    agent = _run(100)
    assert agent.policy.model_fits == 1 and agent.policy.dynamics.fits == 1
    agent = _run(249)
    assert agent.policy.model_fits == 3  # at 100, 150, 200
    # SAC learns from the model's first training on, gradient_steps per step
    assert agent.policy.gradient_steps == 2 * (249 - 100)  # SAC learns after learning_starts


def test_rollouts_fill_the_model_replay_with_the_scheduled_length():
    agent = _run(100)
    policy = agent.policy
    assert policy.rollout_length() == 2  # epoch 1 of the schedule (0, 1, 2, 2)
    assert len(policy.model_replay) == 2 * 20  # 20 starts, 2 steps, no terminations
    actions = policy.model_replay.data["action"]
    assert actions.abs().max() <= 1.0  # stored scaled to [-1, 1], as SAC's batches are


def test_rollout_length_follows_mbpo_s_schedule():
    schedule = (20, 100, 1, 15)
    assert [rollout_length(schedule, e) for e in (0, 20, 21, 60, 99, 100, 500)] == [
        1, 1, 1, 8, 14, 15, 15,
    ]  # fmt: skip


def test_model_rollouts_stop_at_predicted_terminations():
    def ends_when_positive(state, action, next_state):
        return next_state[..., 0] > 0

    env = rk.GymEnv("Pendulum-v1")
    policy = rk.MBPO(env, seed=0, termination_fn=ends_when_positive, **SMALL)
    start = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
    out = model_rollouts(policy, start, 3, torch.Generator().manual_seed(0))
    n, ended = 64, 0
    first = out["terminal"][:n].bool()
    assert first.any() and not first.all()
    second = slice(n, n + int((~first).sum()))
    # the second step starts from the first step's next states that did not terminate, only
    torch.testing.assert_close(out["state"][second], out["next_state"][:n][~first])
    assert torch.equal(out["terminal"][:n], (out["next_state"][:n, 0] > 0).float())
    alive = n
    for _ in range(3):
        block = out["terminal"][ended : ended + alive]
        ended += alive
        alive = int((block == 0).sum())
    assert len(out["state"]) == ended


def test_batches_mix_real_and_model_transitions_by_real_ratio():
    agent = _run(100, real_ratio=0.25)
    policy = agent.policy
    (batch,) = policy.batches(agent.trajectory, 1)
    assert len(batch["reward"]) == 32
    real = agent.trajectory
    real_states = {tuple(np.round(s, 5)) for s in real.state[: len(real)]}
    rows = [tuple(np.round(s, 5)) in real_states for s in batch["state"].numpy()]
    assert sum(rows[:8]) == 8  # int(0.25 * 32) real rows first, then model rows


def test_the_same_seed_gives_the_same_policy():
    a, b = _run(160, seed=3), _run(160, seed=3)
    for x, y in zip(a.policy.model.parameters(), b.policy.model.parameters(), strict=True):
        assert torch.equal(x, y)
    for x, y in zip(a.policy.dynamics.network.parameters(), b.policy.dynamics.network.parameters(),
                    strict=True):  # fmt: skip
        assert torch.equal(x, y)


def test_explain_names_the_model_s_training_and_sac_s_update(capsys):
    env = rk.GymEnv("Pendulum-v1", seed=0)
    rk.explain(rk.MBPO.agent(env, **SMALL), env)
    text = capsys.readouterr().out
    assert "MBPO.train_model_and_rollout" in text and "update(MBPO, Batch)" in text


# ---- bad input ----


@pytest.mark.parametrize(
    ("changes", "error", "match"),
    [
        ({"ensemble_size": 2, "n_elites": 3}, ValueError, "ensemble_size 2 is below n_elites 3"),
        ({"reward_fn": lambda s, a: s}, TypeError, r"reward_fn <lambda>\(s, a\) cannot be called"),
        ({"termination_fn": "no"}, TypeError, "termination_fn must be callable"),
        ({"real_ratio": 1.5}, ValueError, "real_ratio"),
        ({"rollout_schedule": (5, 1, 1, 2)}, ValueError, "rollout_schedule must be"),
        ({"rollout_schedule": (0, 1, 0, 2)}, ValueError, "rollout_schedule must be"),
        ({"model_train_freq": 0}, ValueError, "model_train_freq"),
        ({"model_hidden": ()}, ValueError, "MBPO: model_hidden must have at least one"),
        ({"typo": 1}, TypeError, "unknown hyperparameter"),
    ],
)
def test_bad_input_is_refused_at_construction(changes, error, match):
    with pytest.raises(error, match=match):
        rk.MBPO(rk.GymEnv("Pendulum-v1"), **{**SMALL, **changes})
