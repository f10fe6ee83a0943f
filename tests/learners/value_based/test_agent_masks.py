"""The DQN-family one-liners on an env that exposes action masks (rlkit/InvalidActionGrid-v0,
sb3-contrib's ``action_masks()``): masked acting, and a replay that keeps the next states' masks
by default so the target max ranges over the legal actions (``legal_action_masks=False`` opts
out)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from one_liners import ONE_LINERS

import rlkit as rk
from rlkit.learners.batch import Batch
from rlkit.learners.value_based.agent_parts import exposes_action_masks
from rlkit.learners.value_based.dqn import dqn_target

GRID = "rlkit/InvalidActionGrid-v0"
NAMES = ONE_LINERS
SMALL = {"learning_starts": 100, "batch_size": 16, "hidden": (32,), "buffer_size": 2000,
         "total_steps": 600, "exploration_final_eps": 0.3}  # fmt: skip


class LegalActions(rk.EmptyHook):
    """Checks, before each action, that it is legal in the state it is taken in."""

    def __init__(self) -> None:
        self.n = 0

    def pre_act(self, policy, env, action) -> None:
        assert env.legal_action_mask[action], (env.legal_action_mask, action)
        self.n += 1

    def vector_pre_act(self, policy, env, actions) -> None:
        masks = env.legal_action_mask
        assert masks[np.arange(env.n_envs), actions].all()
        self.n += env.n_envs



def test_the_envs_that_expose_masks_are_found_before_their_first_reset():
    assert exposes_action_masks(rk.GymEnv(GRID))
    assert exposes_action_masks(rk.VectorGymEnv(GRID, 2))
    assert not exposes_action_masks(rk.GymEnv(GRID, use_masking=False))
    assert not exposes_action_masks(rk.VectorGymEnv(GRID, 2, use_masking=False))
    assert not exposes_action_masks(rk.GymEnv("CartPole-v1"))
    assert not exposes_action_masks(rk.VectorGymEnv("CartPole-v1", 2))


@pytest.mark.parametrize("name", sorted(NAMES))
def test_one_liners_act_legally_and_keep_masks_on_a_masked_env(name):
    env = rk.GymEnv(GRID, seed=0)
    agent = getattr(rk, name).agent(env, seed=0, **SMALL, **NAMES[name])
    replay = agent.trajectory
    assert replay.next_legal_action_mask is not None  # masked replay, by default
    hook = LegalActions()
    rk.run(agent, env, rk.StopAfterNSteps(600), hook)
    assert hook.n == 600 and agent.policy.learner.gradient_steps > 0
    kept = replay.next_legal_action_mask[: len(replay)]
    assert not kept.all()  # the grid's walls: some next-state actions were illegal
    batch = next(agent.policy.learner.batches(replay, 1))
    assert "next_legal_action_mask" in batch  # the learner's target sees them
    opted_out = getattr(rk, name).agent(env, seed=0, legal_action_masks=False, **SMALL,
                                        **NAMES[name])  # fmt: skip
    assert opted_out.trajectory.next_legal_action_mask is None


def test_unmasked_envs_keep_no_masks_unless_asked():
    cartpole = rk.GymEnv("CartPole-v1", seed=0)
    assert rk.DQN.agent(cartpole).trajectory.next_legal_action_mask is None
    forced = rk.Rainbow.agent(cartpole, legal_action_masks=True)
    assert forced.trajectory.next_legal_action_mask is not None
    with pytest.raises(TypeError, match=r"DQN: legal_action_masks must be True, False or None"):
        rk.DQN.agent(cartpole, legal_action_masks="yes")


def test_vector_env_one_liner_acts_legally_and_its_target_max_is_masked():
    env = rk.VectorGymEnv(GRID, 2, seed=0)
    agent = rk.DQN.agent(env, seed=0, **SMALL)
    hook = LegalActions()
    rk.run(agent, env, rk.StopAfterNSteps(600), hook)
    assert hook.n == 600
    learner, replay = agent.policy.learner, agent.trajectory
    batch: Batch = next(learner.batches(replay, 1))
    mask = batch["next_legal_action_mask"]
    with torch.no_grad():
        y = dqn_target(learner, learner.model, batch)
        next_q = learner.target.model(batch["next_state"])
    # by hand: the max over the next state's legal actions only
    legal_max = next_q.masked_fill(~mask, -np.inf).max(1).values
    expected = batch["reward"] + (1 - batch["terminal"]) * batch["discount"] * legal_max
    live = batch["terminal"] == 0
    assert torch.allclose(y[live], expected[live])
    plain = batch["reward"] + (1 - batch["terminal"]) * batch["discount"] * next_q.max(1).values
    differs = live & (next_q.max(1).values != legal_max)  # an illegal action had the max
    assert differs.any()  # (seed 0: some samples of the batch)
    assert (y[differs] < plain[differs]).all()  # so the unmasked target would be larger
