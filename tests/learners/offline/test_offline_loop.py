"""The offline loop (rk.OfflineEnv, run_loop by dispatch, the offline driver), rk.BC and
rk.DiscreteCQL."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.approximators.neural import q_network
from rlkit.core.dispatch import DispatchError
from rlkit.learners.batch import Batch
from rlkit.learners.offline.bc import bc_loss
from rlkit.learners.offline.discrete_cql import conservative_term, discrete_cql_loss
from rlkit.policies.distributions import Categorical

BOX4 = gym.spaces.Box(-np.inf, np.inf, (4,), np.float32)


def tiny_dataset(n: int = 40, obs_dim: int = 4, seed: int = 0) -> rk.Dataset:
    obs = np.random.default_rng(seed).normal(size=(n, obs_dim)).astype(np.float32)
    space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
    return rk.Dataset.from_arrays(
        observations=obs, actions=(obs[:, 0] > 0).astype(np.int64),
        rewards=np.ones(n, np.float32), terminations=np.arange(n) % 20 == 19,
        truncations=np.zeros(n, bool), next_observations=np.roll(obs, -1, axis=0),
        observation_space=space, action_space=gym.spaces.Discrete(2),
    )  # fmt: skip


def cql_policy(space=BOX4, seed: int = 0, sync: int = 100, lr: float = 1e-3) -> rk.QBasedPolicy:
    approx = rk.NeuralNetworkApproximator(
        q_network(space, gym.spaces.Discrete(2), (64, 64), seed=seed),
        lambda p: torch.optim.Adam(p, lr=lr),
    )
    learner = rk.DiscreteCQL(approx, target=rk.TargetNetwork(approx, sync_every=sync))
    return rk.QBasedPolicy(learner, rk.GreedyExplorer(seed=0))


class Stages(rk.AbstractHook):
    def __init__(self):
        self.calls = []

    def pre_experiment(self, policy, env):
        self.calls.append("pre_experiment")

    def pre_episode(self, policy, env):
        self.calls.append("pre_episode")

    def pre_act(self, policy, env, action):
        self.calls.append("pre_act")

    def post_act(self, policy, env):
        self.calls.append("post_act")

    def post_episode(self, policy, env):
        self.calls.append("post_episode")

    def post_experiment(self, policy, env):
        self.calls.append("post_experiment")


# ---- the loop ----
def test_stages_and_counting_of_gradient_steps():
    env = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=0)
    policy = rk.BC(env, seed=0)
    hook = Stages()
    stop = rk.StopAfterNSteps(7)
    rk.run(policy, env, stop, hook)
    assert hook.calls == ["pre_experiment"] + ["post_act"] * 7 + ["post_experiment"]
    assert env.steps == 7 and stop.steps == 7 and policy.updates == 7
    learner_policy = cql_policy()
    env2 = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=0)
    rk.run(learner_policy, env2, rk.StopAfterNSteps(5))
    assert learner_policy.learner.gradient_steps == 5 and env2.steps == 5


def test_the_same_seed_gives_the_same_parameters_and_sampling_uses_the_env_generator():
    def train(seed):
        env = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=seed)
        policy = rk.BC(env, seed=0)
        rk.run(policy, env, rk.StopAfterNSteps(20))
        return torch.cat([p.detach().flatten() for p in policy.model.parameters()])

    assert torch.equal(train(0), train(0))
    assert not torch.equal(train(0), train(1))


def test_episode_only_stop_is_refused():
    env = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=0)
    with pytest.raises(TypeError, match="StopAfterNSteps"):
        rk.run(rk.BC(env, seed=0), env, rk.StopAfterNEpisodes(3))


def test_progress_logger_and_evaluation_hooks_work(tmp_path):
    env = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=0)
    evaluation = rk.EvaluationHook(
        rk.GymEnv("CartPole-v1", seed=1), every_n_steps=5, n_episodes=2, seed=0
    )
    rk.run(cql_policy(), env, rk.StopAfterNSteps(10), evaluation + rk.ProgressBar())
    assert [r.step for r in evaluation.results] == [5, 10]
    assert all(r.mean >= 8 for r in evaluation.results)  # real CartPole episodes were played


def test_a_logger_reports_the_learner_statistics_per_gradient_step(tmp_path):
    import json

    env = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=0)
    path = tmp_path / "log.jsonl"
    rk.run(
        rk.BC(env, seed=0),
        env,
        rk.StopAfterNSteps(10),
        rk.JSONLinesLogger(path, stats_every_n_steps=5),
    )
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(line["type"], line["total_steps"]) for line in lines] == [
        ("statistics", 5),
        ("statistics", 10),
    ]  # no episodes: nothing acts
    assert all(math.isfinite(line["policy/nll"]) for line in lines)


def test_an_agent_learns_through_its_policy():
    env = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=0)
    agent = rk.Agent(rk.BC(env, seed=0), rk.VectorSARTTrajectory())
    rk.run(agent, env, rk.StopAfterNSteps(4))
    assert agent.policy.updates == 4 and len(agent.trajectory) == 0


def test_bc_on_box_actions_learns_the_data_actions_and_saves():
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(1000, 3)).astype(np.float32)
    weights = np.array([[0.5, -0.3], [0.2, 0.4], [-0.1, 0.3]], np.float32)
    actions = np.clip(obs @ weights, -1, 1).astype(np.float32)
    dataset = rk.Dataset.from_arrays(
        observations=obs, actions=actions, rewards=np.zeros(1000, np.float32),
        terminations=np.zeros(1000, bool), truncations=np.arange(1000) % 100 == 99,
        next_observations=obs, observation_space=gym.spaces.Box(-np.inf, np.inf, (3,), np.float32),
        action_space=gym.spaces.Box(-1, 1, (2,), np.float32),
    )  # fmt: skip
    env = rk.OfflineEnv(dataset, batch_size=100, seed=0)
    policy = rk.BC(env, seed=0)
    rk.run(policy, env, rk.StopAfterNSteps(500))
    error = np.abs(policy.predict(obs) - actions).mean()
    assert error < 0.1 * np.abs(actions).mean(), error  # the greedy action is the Gaussian's mean


def test_offline_policies_save_and_load(tmp_path):
    env = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=0)
    obs = env.dataset.observations
    for policy in (rk.BC(env, seed=0), cql_policy()):
        rk.run(policy, env, rk.StopAfterNSteps(5))
        rk.save(policy, tmp_path / "p.rlkit")
        loaded = rk.load(tmp_path / "p.rlkit")
        assert np.array_equal(loaded.predict(obs), policy.predict(obs))


# ---- checkpoints ----
@pytest.mark.parametrize("make", ["bc", "cql"])
def test_kill_and_resume_is_bit_exact(tmp_path, make):
    def build():
        env = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=3)
        policy = rk.BC(env, seed=0) if make == "bc" else cql_policy(sync=4)
        return policy, env

    def params(policy):
        model = policy.model if make == "bc" else policy.learner.model
        return torch.cat([p.detach().flatten() for p in model.parameters()])

    full, env = build()
    rk.run(full, env, rk.StopAfterNSteps(30))
    first, env1 = build()
    rk.run(first, env1, rk.StopAfterNSteps(13), rk.CheckpointHook(tmp_path, every_n_steps=13))
    resumed, env2 = build()  # a fresh process would build the same objects
    rk.run(
        resumed,
        env2,
        rk.StopAfterNSteps(30),
        rk.CheckpointHook(tmp_path, every_n_steps=13),
        resume_from=tmp_path,
    )
    assert env2.steps == 30
    assert torch.equal(params(resumed), params(full))


def test_a_checkpoint_of_another_dataset_size_is_refused_and_changes_nothing():
    env = rk.OfflineEnv(tiny_dataset(40), batch_size=8, seed=0)
    env.sample()
    state = env.state_dict()
    other = rk.OfflineEnv(tiny_dataset(30), batch_size=8, seed=0)
    before = other.generator.bit_generator.state
    with pytest.raises(ValueError, match="40 transitions.*30"):
        other.load_state_dict(state)
    assert other.generator.bit_generator.state == before and other.steps == 0


# ---- explain ----
def test_explain_shows_the_driver_update_and_loss(capsys):
    env = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=0)
    rk.explain(cql_policy(), env, rk.ProgressBar(), rk.StopAfterNSteps(3))
    out = capsys.readouterr().out
    # the stages an offline run announces; the others, and the episode check, are not shown
    assert "PreEpisode: (nothing)" in out and "PostEpisode: (nothing)" in out
    assert "ProgressBar.post_act" in out and "after each episode" not in out
    assert "update(DiscreteCQL, OfflineEnv, PostActStage)" in out
    assert "rlkit/learners/drivers/offline.py" in out
    assert "discrete_cql_loss" in out
    rk.explain(rk.BC(env, seed=0), env)
    out = capsys.readouterr().out
    assert "update(BC, OfflineEnv, PostActStage)" in out and "bc_loss" in out


# ---- bad input ----
def test_batch_size_larger_than_the_dataset_is_refused_naming_both():
    with pytest.raises(ValueError, match=r"batch_size 50 .*40 transitions"):
        rk.OfflineEnv(tiny_dataset(40), batch_size=50, seed=0)


def test_spaces_that_do_not_fit_are_refused_naming_both():
    env = rk.OfflineEnv(tiny_dataset(obs_dim=3), batch_size=8, seed=0)
    other = rk.OfflineEnv(tiny_dataset(obs_dim=4), batch_size=8, seed=0)
    policy = rk.BC(other, seed=0)
    with pytest.raises(ValueError, match=r"Box\(shape=\(4,\)\).*OfflineEnv.*Box\(shape=\(3,\)\)"):
        rk.explain(policy, env)  # at plan time
    with pytest.raises(ValueError, match=r"DiscreteCQL does not fit the dataset of OfflineEnv"):
        rk.run(cql_policy(BOX4), env, rk.StopAfterNSteps(3))
    assert policy.updates == 0


def test_a_policy_that_cannot_learn_offline_is_refused():
    env = rk.OfflineEnv(tiny_dataset(), batch_size=8, seed=0)
    with pytest.raises(DispatchError, match="RandomPolicy cannot learn from the offline env"):
        rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(3))
    ppo = rk.PPO(env, seed=0)
    with pytest.raises(TypeError, match="PPO cannot learn offline.*offline_batch"):
        rk.run(ppo, env, rk.StopAfterNSteps(3))


# ---- losses on hand-computed inputs ----
def test_conservative_term_by_hand():
    q = torch.tensor([[0.0, 0.0], [1.0, 3.0]])
    expected = (math.log(2.0) + (math.log(math.exp(1) + math.exp(3)) - 3.0)) / 2
    assert conservative_term(q, torch.tensor([0, 1])).item() == pytest.approx(expected, rel=1e-6)


def test_discrete_cql_loss_is_td_plus_alpha_times_the_term():
    net = torch.nn.Linear(1, 2, bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor([[1.0], [2.0]]))  # Q(s) = (s, 2 s)
    from types import SimpleNamespace

    policy = SimpleNamespace(
        target=SimpleNamespace(model=net), double=True, loss_kind="mse", alpha=0.5
    )
    batch = Batch(
        state=torch.tensor([[1.0]]),
        action=torch.tensor([0]),
        reward=torch.tensor([1.0]),
        terminal=torch.tensor([0.0]),
        next_state=torch.tensor([[1.0]]),
        discount=0.5,
    )
    loss, info = discrete_cql_loss(policy, net, None, batch)
    # y = 1 + 0.5 * Q(s', argmax) = 1 + 0.5 * 2 = 2; Q(s, 0) = 1: td = 1
    term = math.log(math.exp(1) + math.exp(2)) - 1.0
    assert loss.item() == pytest.approx(1.0 + 0.5 * term, rel=1e-6)
    assert info["conservative"].item() == pytest.approx(term, rel=1e-6)


def test_bc_loss_by_hand():
    from types import SimpleNamespace

    logits = torch.tensor([[0.0, math.log(3.0)]])  # probabilities 1/4, 3/4
    policy = SimpleNamespace(action_space=gym.spaces.Discrete(2), hp=lambda k: 0.5)
    loss, info = bc_loss(
        policy,
        lambda s: logits,
        Categorical,
        Batch(state=torch.zeros(1, 1), action=torch.tensor([0])),
    )
    penalty = (0.0 + math.log(3.0) ** 2) / 2
    assert info["nll"].item() == pytest.approx(math.log(4.0), rel=1e-6)
    assert loss.item() == pytest.approx(math.log(4.0) + 0.5 * penalty, rel=1e-6)
    # continuous: the Gaussian NLL of N(0, 1) at 1: 0.5 + 0.5 log(2 pi)
    from rlkit.policies.distributions import DiagGaussian

    box = gym.spaces.Box(-2.0, 2.0, (1,), np.float32)
    policy = SimpleNamespace(action_space=box, hp=lambda k: 0.5)
    loss, _ = bc_loss(
        policy,
        lambda s: torch.tensor([[0.0, 0.0]]),
        DiagGaussian,
        Batch(state=torch.zeros(1, 1), action=torch.tensor([[1.0]])),
    )
    assert loss.item() == pytest.approx(0.5 + 0.5 * math.log(2 * math.pi), rel=1e-5)


# ---- the how-to page's example ----
def test_the_offline_how_to_example_clones_the_controller(capsys):
    import re
    from pathlib import Path

    page = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "offline-rl.md"
    (example,) = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)[:1]
    exec(compile(example, str(page), "exec"), {})
    assert capsys.readouterr().out.strip() == "500.0"
