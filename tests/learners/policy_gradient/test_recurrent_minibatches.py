"""RecurrentPPO's sb3-contrib minibatch layout (rlkit/learners/policy_gradient/
recurrent_minibatches.py): rotated minibatches of consecutive env-major transitions, sequences
cut at episode starts, sub-env changes and minibatch starts, each from its stored state; the
layout is the default, ``"sequences"`` the other one; a bad layout is refused."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.learners.policy_gradient.recurrent import (
    SequenceMultiStep,
    recurrent_ppo_loss,
    sequence_batch,
)
from rlkit.learners.policy_gradient.recurrent_minibatches import (
    RotatedMultiStep,
    StepSequences,
    rotated_minibatches,
)

ENV = "rlkit/CartPoleNoVel-v1"
SMALL = {"lstm_hidden_size": 16, "hidden": (16,)}
KEYS = ("state", "action", "log_prob", "value", "advantages", "returns")


def test_each_epoch_is_the_rollout_rotated_at_a_uniform_split_and_cut_in_order():
    rng = np.random.default_rng(0)
    splits = []
    for _ in range(400):
        parts = rotated_minibatches(10, 4, rng)
        assert [len(p) for p in parts] == [4, 4, 2]
        order = np.concatenate(parts)
        split = int(order[0])
        assert order.tolist() == [(split + i) % 10 for i in range(10)]  # every one, in order
        splits.append(split)
    assert sorted(set(splits)) == list(range(10))  # any transition can be the split point
    # one minibatch holding everything is still rotated: the split is where sequences are cut
    assert len(rotated_minibatches(10, 64, np.random.default_rng(1))) == 1


def _hand_rollout():
    """2 sub-envs x 4 steps; sub-env 0 starts an episode at step 2; values tell steps apart."""
    n_steps, n_envs = 4, 2
    index = np.arange(n_steps * n_envs, dtype=np.float64).reshape(n_envs, n_steps).T  # env-major
    starts = np.zeros((n_steps, n_envs), dtype=bool)
    starts[2, 0] = True
    lstm = np.broadcast_to(index[:, :, None, None, None], (n_steps, n_envs, 2, 1, 3)).copy()
    return {"state": index[:, :, None].copy(), "episode_start": starts, "lstm_state": lstm}


def test_a_minibatch_cuts_sequences_at_episode_starts_sub_env_changes_and_its_first_step():
    steps = StepSequences(_hand_rollout(), ["state"], "cpu")
    # split at env-major index 3 (sub-env 0, step 3), one minibatch of all 8 transitions
    seq = steps.rows(np.array([3, 4, 5, 6, 7, 0, 1, 2]))
    real = [seq["state"][i, seq["mask"][i], 0].tolist() for i in range(len(seq["mask"]))]
    assert real == [[3.0], [4.0, 5.0, 6.0, 7.0], [0.0, 1.0], [2.0]]
    # each sequence starts from the state stored at its first step; zeroed only at an episode
    # start (or a sub-env's first step when the rollout marks one)
    assert seq["lstm_state"][:, 0, 0, 0].tolist() == [3.0, 4.0, 0.0, 2.0]
    assert seq["episode_start"].tolist() == [False, False, False, True]
    assert seq["mask"].shape == (4, 4) and int(seq["mask"].sum()) == 8
    # sequence_length also cuts every n steps from the rollout's start
    cut = StepSequences(_hand_rollout(), ["state"], "cpu", sequence_length=3).rows(np.arange(8))
    assert [int(n) for n in cut["mask"].sum(1)] == [2, 1, 1, 3, 1]


def _agent_rollout(**hp):
    env = rk.VectorGymEnv(ENV, 3, seed=0)
    agent = rk.RecurrentPPO.agent(env, seed=0, n_steps=40, batch_size=120, **SMALL, **hp)
    rk.run(agent, env, rk.StopAfterNSteps(39 * 3))
    batch = {k: np.array(v) for k, v in agent.trajectory.batch().items()}
    batch["advantages"] = np.random.default_rng(0).normal(size=batch["reward"].shape)
    batch["returns"] = batch["advantages"] + batch["value"]
    return agent.policy, batch


def _loss_and_lstm_grad(policy, seq):
    policy.model.zero_grad()
    loss, _ = recurrent_ppo_loss(policy, policy.model, policy.dist_class, seq)
    loss.backward()
    return loss.item(), policy.model.lstm_actor.weight_hh_l0.grad.clone()


def test_with_the_split_at_a_sub_envs_start_it_is_the_sequences_layout():
    policy, batch = _agent_rollout()
    assert policy.config["minibatch_layout"] == "sb3"  # sb3-contrib's, the default
    assert isinstance(policy.optimizer, RotatedMultiStep)
    keys = [k for k in KEYS if k in batch]
    n = batch["episode_start"].size
    steps = StepSequences(batch, keys, "cpu")
    whole = sequence_batch(batch, 39, "cpu")  # the same sequences, cut once
    assert len(whole["mask"]) == len(steps.rows(np.arange(n))["mask"])
    loss, grad = _loss_and_lstm_grad(policy, steps.rows(np.arange(n)))
    loss_whole, grad_whole = _loss_and_lstm_grad(policy, whole)
    assert loss == pytest.approx(loss_whole, rel=1e-6)
    torch.testing.assert_close(grad, grad_whole)
    # a split inside a sequence: the same forward pass (the stored state is where the LSTM was),
    # but the gradient no longer flows back through time across the split (sb3-contrib's)
    t = next(t for t in range(10, 39) if not batch["episode_start"][t - 2 : t + 1, 1].any())
    split = 39 + t  # sub-env 1, step t: inside one of its sequences
    loss_cut, grad_cut = _loss_and_lstm_grad(policy, steps.rows(np.roll(np.arange(n), -split)))
    assert loss_cut == pytest.approx(loss, rel=1e-5)
    difference = float((grad_cut - grad).abs().max())
    assert difference > 1e-3 * float(grad.abs().max())


def test_the_sequences_layout_remains_and_a_bad_layout_is_refused():
    env = rk.VectorGymEnv(ENV, 2, seed=0)
    policy = rk.RecurrentPPO(env, minibatch_layout="sequences", **SMALL)
    assert isinstance(policy.optimizer, SequenceMultiStep)
    with pytest.raises(ValueError, match=r"RecurrentPPO: minibatch_layout must be one of "
                                         r"\['sb3', 'sequences'\].*got 'sb2'"):  # fmt: skip
        rk.RecurrentPPO(env, minibatch_layout="sb2", **SMALL)


@pytest.mark.parametrize("layout", ["sb3", "sequences"])
def test_both_layouts_learn_reproducibly(layout):
    def run():
        env = rk.VectorGymEnv(ENV, 2, seed=0)
        agent = rk.RecurrentPPO.agent(env, seed=3, n_steps=16, batch_size=12, n_epochs=2,
                                      minibatch_layout=layout, **SMALL)  # fmt: skip
        rk.run(agent, env, rk.StopAfterNSteps(64))
        return agent.policy

    first, second = run(), run()
    assert first.updates == 2 and first.stats["sequences"] >= 2
    for a, b in zip(first.model.parameters(), second.model.parameters(), strict=True):
        assert torch.equal(a, b)
