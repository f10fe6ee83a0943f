"""Issue 10: errors that were late, raw or unclear, each now a clear message naming the object,
the value and what was expected, at construction or plan time where possible."""

from __future__ import annotations

import inspect
import math

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.hooks.checkpoint import CheckpointHook, save_checkpoint

torch = pytest.importorskip("torch")


def q_agent(q: rk.TabularQApproximator) -> rk.Agent:
    policy = rk.QBasedPolicy(rk.TDLearner(q), rk.EpsilonGreedyExplorer(0.1, seed=0))
    return rk.Agent(policy, rk.VectorSARTTrajectory())


class NoSteps(rk.AbstractHook):
    def __init__(self) -> None:
        self.steps = 0

    def post_act(self, policy, env) -> None:
        self.steps += 1


def test_a_table_sized_with_integers_is_checked_against_the_spaces_at_plan_time():
    steps = NoSteps()
    with pytest.raises(ValueError, match=r"table of 48 states cannot index .* Box"):
        rk.run(
            q_agent(rk.TabularQApproximator(48, 2)),
            rk.GymEnv("CartPole-v1"),
            rk.StopAfterNSteps(5),
            steps,
        )
    with pytest.raises(ValueError, match=r"table of 10 states cannot index .* Discrete\(48\)"):
        rk.run(
            q_agent(rk.TabularQApproximator(10, 4)),
            rk.GymEnv("CliffWalking-v1"),
            rk.StopAfterNSteps(5),
            steps,
        )
    with pytest.raises(ValueError, match=r"table of 2 actions cannot index .* Discrete\(4\)"):
        rk.run(
            q_agent(rk.TabularQApproximator(48, 2)),
            rk.GymEnv("CliffWalking-v1"),
            rk.StopAfterNSteps(5),
            steps,
        )
    v = rk.TabularVApproximator(3)
    policy = rk.VBasedPolicy(rk.TDLearner(v, method="td0"), rk.RandomPolicy(seed=0))
    with pytest.raises(ValueError, match=r"table of 3 states"):
        rk.run(
            rk.Agent(policy, rk.VectorSARTTrajectory()),
            rk.GymEnv("CliffWalking-v1"),
            rk.StopAfterNSteps(5),
            steps,
        )
    assert steps.steps == 0
    rk.run(
        q_agent(rk.TabularQApproximator(48, 4)),
        rk.GymEnv("CliffWalking-v1", seed=0),
        rk.StopAfterNSteps(5),
    )  # a table that fits


def test_a_batch_larger_than_the_replay_is_refused_by_the_agent():
    env = rk.GymEnv("CartPole-v1")
    net = torch.nn.Linear(4, 2)
    approximator = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.SGD(p, lr=0.1))
    learner = rk.DQNLearner(
        approximator,
        sampler=rk.BatchSampler(64, seed=0),
        controller=rk.InsertSampleRatioController(100, 4, 1),
        gamma=0.9,
    )
    policy = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0))
    small = rk.CircularArraySARTTrajectory(32, env.state_space, env.action_space)
    with pytest.raises(ValueError, match=r"batch_size=64 .* \(capacity=32\)"):
        rk.Agent(policy, small)
    rk.Agent(policy, rk.CircularArraySARTTrajectory(64, env.state_space, env.action_space))


def test_bools_are_not_numbers():
    approximator = rk.NeuralNetworkApproximator(
        torch.nn.Linear(4, 2), lambda p: torch.optim.SGD(p, lr=0.1)
    )
    with pytest.raises((TypeError, ValueError), match="max_grad_norm .* got True"):
        rk.NeuralNetworkApproximator(
            torch.nn.Linear(4, 2), lambda p: torch.optim.SGD(p, lr=0.1), max_grad_norm=True
        )
    with pytest.raises((TypeError, ValueError), match="tau .* got True"):
        rk.TargetNetwork(approximator, tau=True)


class Masked(gym.Env):
    observation_space = gym.spaces.Discrete(2)
    action_space = gym.spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {"action_mask": np.zeros(3, dtype=np.int8)}

    def step(self, action):
        return 0, 0.0, False, False, {"action_mask": np.zeros(3, dtype=np.int8)}


def test_an_all_false_mask_is_refused_by_the_env_at_reset():
    env = rk.GymEnv(Masked(), seed=0)
    with pytest.raises(ValueError, match=r"GymEnv\(Masked\) at reset .* marks no action legal"):
        env.reset()


def test_random_policy_refuses_an_all_false_mask():
    """From an env that does not check its masks (any rlkit env may report one)."""
    import types

    env = types.SimpleNamespace(
        action_space=gym.spaces.Discrete(3), legal_action_mask=np.zeros(3, bool)
    )
    with pytest.raises(
        ValueError, match=r"RandomPolicy: the legal-action mask .* allows no action"
    ):
        rk.RandomPolicy(seed=0).act(env)


def test_the_replay_refuses_an_observation_of_the_wrong_shape():
    space = gym.spaces.Box(-1, 1, (4,))
    replay = rk.CircularArraySARTTrajectory(8, space, gym.spaces.Discrete(2))
    for bad in (np.zeros(1), 0.5, np.zeros(5)):
        with pytest.raises(ValueError, match=r"state to record has shape .*, expected \(4,\)"):
            replay.append(bad, 0, 1.0, False, False, np.zeros(4))
    with pytest.raises(ValueError, match=r"next state to record has shape \(1,\)"):
        replay.append(np.zeros(4), 0, 1.0, False, False, np.zeros(1))
    assert len(replay) == 0


def test_evaluate_refuses_an_env_id_and_says_to_wrap_it():
    with pytest.raises(TypeError, match=r"rk\.GymEnv\('CartPole-v1'\)"):
        rk.evaluate(rk.RandomPolicy(seed=0), "CartPole-v1")


def test_a_stop_condition_must_answer_a_bool():
    def array_stop(policy, env):
        return env.state > 0

    for stop in (array_stop, rk.StopAfterNSteps(5) | array_stop):
        with pytest.raises(TypeError, match=r"stop condition .*array_stop returned ndarray"):
            rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), stop)
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), lambda p, e: np.bool_(True))


def test_checkpoint_hook_refuses_a_file_and_bad_metadata(tmp_path):
    file = tmp_path / "a-file"
    file.write_text("x")
    with pytest.raises(ValueError, match="is an existing file; expected a folder"):
        CheckpointHook(file)
    deep: dict = {}
    node = deep
    for _ in range(2000):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(ValueError, match="nested more than 32 levels"):
        CheckpointHook(tmp_path, metadata=deep)
    with pytest.raises(ValueError, match="nested more than 32 levels"):
        save_checkpoint(
            tmp_path / "c.npz",
            rk.RandomPolicy(),
            rk.GymEnv("CartPole-v1"),
            metadata=deep,
            format="npz",
        )
    with pytest.raises(ValueError, match=r"metadata\['score'\] is nan; expected JSON data"):
        CheckpointHook(tmp_path, metadata={"score": math.nan})
    with pytest.raises(TypeError, match=r"metadata\['seed'\] is a ndarray"):
        CheckpointHook(tmp_path, metadata={"seed": np.arange(2)})


def test_csv_logger_on_a_directory_names_a_file_to_use(tmp_path):
    with pytest.raises(ValueError, match=r"is a directory; expected the path of a file"):
        rk.CSVLogger(tmp_path)


def test_agent_without_a_trajectory_says_which_to_give():
    with pytest.raises(TypeError, match=r"trajectory .* is required, e.g. rk.Agent\(policy, rk"):
        rk.Agent(rk.RandomPolicy())


def test_a_composed_hook_finds_parts_by_type_and_points_to_them():
    hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
    rk.run(
        rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNEpisodes(2), hook
    )
    assert hook[rk.TotalRewardPerEpisode] is hook.hooks[0]
    assert len(hook[rk.TotalRewardPerEpisode].rewards) == 2
    assert hook[1] is hook.hooks[1]
    with pytest.raises(AttributeError, match=r"use hook\[rk\.TotalRewardPerEpisode\]\.rewards"):
        _ = hook.rewards
    with pytest.raises(KeyError, match="no TimePerStep"):
        hook[rk.TimePerStep]


def test_td_learner_shows_its_real_signature():
    parameters = inspect.signature(rk.TDLearner).parameters
    assert list(parameters)[:4] == ["approximator", "method", "gamma", "n"]
    assert "args" not in parameters and "kwargs" not in parameters
