"""Action masks reach every learner (docs/how-to/action-masks.md): masked actions are never
chosen (PPO's sampling, DQN's epsilon-greedy); the policy-gradient losses (PPO, A2C, VPG, TRPO)
are those of sb3-contrib's masked categorical; the DQN family's target max and argmax range
over the next state's legal actions."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.approximators.neural import q_network
from rlkit.learners.batch import Batch
from rlkit.learners.policy_gradient.a2c import a2c_loss
from rlkit.learners.policy_gradient.ppo import ppo_loss
from rlkit.learners.policy_gradient.trpo import trpo_loss
from rlkit.learners.policy_gradient.vpg import vpg_loss
from rlkit.learners.value_based.basic_dqn import basic_dqn_loss
from rlkit.learners.value_based.dqn import dqn_target

GRID = "rlkit/InvalidActionGrid-v0"
DRAWS = 100_000


def _random_masks(rng: np.random.Generator, n: int, n_actions: int) -> np.ndarray:
    masks = rng.random((n, n_actions)) < 0.4
    masks[np.arange(n), rng.integers(n_actions, size=n)] = True  # at least one legal action
    return masks


def _vector_view(states: np.ndarray, masks: np.ndarray) -> SimpleNamespace:
    """What a policy reads of a vector env to act: its states and legal-action masks."""
    return SimpleNamespace(is_vector=True, n_envs=len(states), state=states,
                           legal_action_mask=masks)  # fmt: skip


# ---- masked actions are never chosen ----
def test_ppo_never_samples_a_masked_action_in_100000_draws():
    torch.manual_seed(0)
    policy = rk.PPO(rk.GymEnv(GRID, seed=0), seed=0)
    with torch.no_grad():  # logits that favour the illegal actions strongly
        policy.model.pi[-1].bias.copy_(torch.tensor([5.0, 5.0, -5.0, -5.0]))
    rng = np.random.default_rng(0)
    masks = np.zeros((DRAWS, 4), bool)
    masks[:, 2] = True
    masks[:, 3] = rng.random(DRAWS) < 0.5
    states = np.eye(49, dtype=np.float32)[rng.integers(49, size=DRAWS)]
    actions = policy.act(_vector_view(states, masks))
    assert actions.shape == (DRAWS,)
    assert masks[np.arange(DRAWS), actions].all()
    both = masks[:, 3]  # where two actions are legal both are drawn
    assert 0 < (actions[both] == 3).mean() < 1
    assert policy.last_extras["legal_action_mask"] is not None


def test_dqn_epsilon_greedy_never_chooses_a_masked_action_in_100000_draws():
    env = rk.GymEnv(GRID, seed=0)
    approx = rk.NeuralNetworkApproximator(
        q_network(env.state_space, env.action_space, (16,), seed=0),
        lambda p: torch.optim.Adam(p, lr=1e-3),
    )
    learner = rk.DQNLearner(approx, sampler=rk.BatchSampler(8, seed=0),
                            controller=rk.InsertSampleRatioController(20, 1, 1))  # fmt: skip
    policy = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.5, seed=0))
    rng = np.random.default_rng(1)
    masks = _random_masks(rng, DRAWS, 4)
    states = np.eye(49, dtype=np.float32)[rng.integers(49, size=DRAWS)]
    actions = policy.act(_vector_view(states, masks))
    assert masks[np.arange(DRAWS), actions].all()
    assert np.bincount(actions, minlength=4).min() > 0


# ---- policy gradient: sb3-contrib's masked categorical in every loss ----
def _masked_dist(logits: torch.Tensor, mask: torch.Tensor) -> torch.distributions.Categorical:
    """sb3-contrib's MaskableCategorical: illegal logits replaced by -1e8."""
    return torch.distributions.Categorical(logits=torch.where(mask, logits, torch.tensor(-1e8)))


def _masked_entropy(dist: torch.distributions.Categorical, mask: torch.Tensor) -> torch.Tensor:
    p_log_p = dist.logits * dist.probs
    return -torch.where(mask, p_log_p, torch.zeros_like(p_log_p)).sum(-1)


def _batch(policy, n: int = 64, seed: int = 0) -> tuple[Batch, torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(seed)
    masks = torch.as_tensor(_random_masks(rng, n, 4))
    state = torch.as_tensor(np.eye(49, dtype=np.float32)[rng.integers(49, size=n)])
    action = torch.as_tensor([rng.choice(np.flatnonzero(m)) for m in masks.numpy()])
    with torch.no_grad():
        logits = policy.model(state)
        old = _masked_dist(logits + 0.1, masks).log_prob(action)  # an older policy's
    batch = Batch(
        state=state, action=action, legal_action_mask=masks, log_prob=old,
        advantages=torch.as_tensor(rng.normal(size=n), dtype=torch.float32),
        returns=torch.as_tensor(rng.normal(size=n), dtype=torch.float32),
        value=torch.as_tensor(rng.normal(size=n), dtype=torch.float32),
    )  # fmt: skip
    return batch, logits, masks


def _hand_terms(policy, batch, masks):
    logits = policy.model(batch["state"])
    dist = _masked_dist(logits, masks)
    adv = batch["advantages"]
    if policy.hp("normalize_advantage"):
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    values = policy.model.value(batch["state"])
    return dist.log_prob(batch["action"]), _masked_entropy(dist, masks), adv, values


def test_ppo_loss_with_a_mask_equals_a_hand_built_masked_categoricals():
    policy = rk.PPO(rk.GymEnv(GRID, seed=0), seed=0, ent_coef=0.01)
    batch, _, masks = _batch(policy)
    loss, info = ppo_loss(policy, policy.model, policy.dist_class, batch)
    log_prob, entropy, adv, values = _hand_terms(policy, batch, masks)
    ratio = torch.exp(log_prob - batch["log_prob"])
    surrogate = -torch.min(adv * ratio, adv * ratio.clamp(0.8, 1.2)).mean()
    value_loss = torch.nn.functional.mse_loss(batch["returns"], values)
    expected = surrogate - 0.01 * entropy.mean() + 0.5 * value_loss
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert info["entropy_loss"] == pytest.approx(-entropy.mean().item(), rel=1e-5)
    # without the mask the loss differs: the mask is used, not ignored
    unmasked = Batch(**{k: v for k, v in batch.items() if k != "legal_action_mask"})
    other, _ = ppo_loss(policy, policy.model, policy.dist_class, unmasked)
    assert abs(other.item() - loss.item()) > 1e-3


@pytest.mark.parametrize("name, loss_fn", [("A2C", a2c_loss), ("VPG", vpg_loss)])
def test_a2c_and_vpg_losses_with_a_mask_equal_hand_built_masked_categoricals(name, loss_fn):
    policy = getattr(rk, name)(rk.GymEnv(GRID, seed=0), seed=0, ent_coef=0.01)
    batch, _, masks = _batch(policy)
    loss, info = loss_fn(policy, policy.model, policy.dist_class, batch)
    log_prob, entropy, adv, values = _hand_terms(policy, batch, masks)
    value_loss = torch.nn.functional.mse_loss(batch["returns"], values)
    expected = -(adv * log_prob).mean() - 0.01 * entropy.mean() + 0.5 * value_loss
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    assert info["entropy_loss"] == pytest.approx(-entropy.mean().item(), rel=1e-5)


def test_trpo_surrogate_with_a_mask_equals_a_hand_built_masked_categoricals():
    policy = rk.TRPO(rk.GymEnv(GRID, seed=0), seed=0)
    batch, _, masks = _batch(policy)
    loss = trpo_loss(policy, policy.model, policy.dist_class, batch)
    loss = loss[0] if isinstance(loss, tuple) else loss
    logits = policy.model(batch["state"])
    log_prob = _masked_dist(logits, masks).log_prob(batch["action"])
    expected = -(torch.exp(log_prob - batch["log_prob"]) * batch["advantages"]).mean()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)


@pytest.mark.parametrize("name", ["PPO", "A2C", "VPG", "TRPO"])
def test_every_policy_gradient_learner_stores_the_mask_in_its_rollout(name):
    env = rk.VectorGymEnv(GRID, 2, seed=0)
    agent = getattr(rk, name).agent(env, seed=0, n_steps=8)
    rk.run(agent, env, rk.StopAfterNSteps(20))
    masks = agent.trajectory.batch()["legal_action_mask"]
    assert masks.shape == (2, 2, 4)  # 10 steps: an update after 8, 2 steps recorded since
    assert masks.any(axis=-1).all() and not masks.all()
    env.close()


# ---- the DQN family: the target max over the next state's legal actions ----
class Fixed(torch.nn.Module):
    """Q-values that do not depend on the state (one row per sample)."""

    def __init__(self, q: list[list[float]]) -> None:
        super().__init__()
        self.q = torch.tensor(q)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.q[: len(x)]


def _target_batch(mask) -> Batch:
    return Batch(
        state=torch.zeros(2, 1), action=torch.tensor([0, 0]),
        reward=torch.tensor([1.0, 0.5]), terminal=torch.tensor([0.0, 0.0]),
        next_state=torch.zeros(2, 1), discount=0.5,
        **({} if mask is None else {"next_legal_action_mask": torch.tensor(mask)}),
    )  # fmt: skip


def test_dqn_target_max_is_over_the_next_states_legal_actions():
    target_q = Fixed([[10.0, 2.0, 4.0], [-1.0, 8.0, 3.0]])
    policy = SimpleNamespace(target=SimpleNamespace(model=target_q), double=False)
    mask = [[False, True, True], [True, False, True]]
    y = dqn_target(policy, target_q, _target_batch(mask))
    assert y.tolist() == [1.0 + 0.5 * 4.0, 0.5 + 0.5 * 3.0]  # by hand: 3.0, 2.0
    y = dqn_target(policy, target_q, _target_batch(None))  # unmasked: the plain max
    assert y.tolist() == [1.0 + 0.5 * 10.0, 0.5 + 0.5 * 8.0]


def test_double_dqn_argmax_is_over_the_next_states_legal_actions():
    online = Fixed([[9.0, 1.0, 5.0], [0.0, 7.0, 6.0]])  # chooses among the legal actions
    target_q = Fixed([[10.0, 2.0, 4.0], [-1.0, 8.0, 3.0]])  # evaluates the choice
    policy = SimpleNamespace(target=SimpleNamespace(model=target_q), double=True)
    mask = [[False, True, True], [True, False, True]]
    y = dqn_target(policy, online, _target_batch(mask))
    assert y.tolist() == [1.0 + 0.5 * 4.0, 0.5 + 0.5 * 3.0]  # argmax 2 and 2, target values


def test_a_terminal_next_state_without_legal_actions_does_not_bootstrap():
    target_q = Fixed([[10.0, 2.0, 4.0], [-1.0, 8.0, 3.0]])
    policy = SimpleNamespace(target=SimpleNamespace(model=target_q), double=False)
    batch = _target_batch([[False, False, False], [True, False, True]])
    batch["terminal"] = torch.tensor([1.0, 0.0])
    assert dqn_target(policy, target_q, batch).tolist() == [1.0, 2.0]


def test_basic_dqn_target_max_is_over_the_legal_actions():
    model = Fixed([[1.0, 6.0, 2.0], [1.0, 6.0, 2.0]])
    policy = SimpleNamespace(residual=False, loss_kind="mse")
    _, info = basic_dqn_loss(policy, model, None, _target_batch([[True, False, True]] * 2))
    assert info["target"].tolist() == [1.0 + 0.5 * 2.0, 0.5 + 0.5 * 2.0]


def test_qr_dqn_c51_and_iqn_learn_from_a_masked_replay():
    """The distributional learners' argmax is masked too; each takes gradient steps on a
    replay that keeps masks (the loss functions read ``next_legal_action_mask``)."""
    for recipe in ("QRDQN_CartPole", "C51_CartPole", "IQN_CartPole"):
        experiment = rk.make_experiment(recipe, seed=0, total_steps=1)
        learner = experiment.policy.policy.learner
        replay = rk.CircularArraySARTTrajectory(
            200, experiment.env.state_space, experiment.env.action_space,
            legal_action_masks=True,
        )  # fmt: skip
        rng = np.random.default_rng(0)
        for _ in range(64):
            mask = _random_masks(rng, 1, 2)[0]
            replay.append(rng.normal(size=4).astype(np.float32), int(rng.integers(2)), 1.0,
                          False, False, rng.normal(size=4).astype(np.float32), mask)  # fmt: skip
        batch = next(learner.batches(replay, 1))
        assert batch["next_legal_action_mask"].dtype == torch.bool
        all_legal = Batch(**{k: v for k, v in batch.items()})
        all_legal["next_legal_action_mask"] = torch.ones_like(batch["next_legal_action_mask"])
        losses = []
        for b in (batch, all_legal):
            generator = getattr(learner, "generator", None)
            if generator is not None:  # IQN: the same sampled fractions for both
                generator.manual_seed(0)
            loss = learner.loss_fn(learner, learner.approximator.model, None, b)
            losses.append(loss[0] if isinstance(loss, tuple) else loss)
        assert torch.isfinite(losses[0]).all()
        assert not torch.equal(losses[0], losses[1]), recipe  # the masks change the target


# ---- many seeds in one process: each seed masked as it is alone ----
def test_many_seeds_ppo_on_a_masked_env_learns_what_each_seed_learns_alone():
    settings = {"n_steps": 16, "batch_size": 8, "n_epochs": 2, "ent_coef": 0.01}
    envs = [rk.VectorGymEnv(GRID, 2, seed=s) for s in (0, 1)]
    env = rk.SeedBlocksEnv(envs, [0, 1])
    agent = rk.ManySeedsPPO.agent(env, policy_seeds=[10, 11], **settings)
    rk.run(agent, env, rk.StopAfterNSteps(2 * 64))
    assert agent.policy.updates == 2
    alone_env = rk.VectorGymEnv(GRID, 2, seed=1)
    alone = rk.PPO.agent(alone_env, seed=11, **settings)
    rk.run(alone, alone_env, rk.StopAfterNSteps(64))
    together = agent.policy.stacked.unstacked(1)
    for key, value in alone.policy.model.state_dict().items():
        torch.testing.assert_close(together[key], value, rtol=1e-5, atol=1e-6, msg=key)
    for e in (env, alone_env):
        e.close()


def test_many_seeds_ppo_with_masks_needs_the_batched_mlp_path():
    envs = [rk.VectorGymEnv(GRID, 2, seed=s) for s in (0, 1)]
    env = rk.SeedBlocksEnv(envs, [0, 1])
    agent = rk.ManySeedsPPO.agent(env, policy_seeds=[10, 11], n_steps=4, fast=False)
    with pytest.raises(ValueError, match="ManySeedsPPO: legal-action masks are supported with "
                       "the actor-critic MLP"):  # fmt: skip
        rk.run(agent, env, rk.StopAfterNSteps(2 * 8))
    env.close()
