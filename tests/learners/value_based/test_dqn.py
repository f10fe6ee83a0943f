"""Tests of rlkit/learners/dqn.py (and the shared machinery of rlkit/learners/dqn_common.py):
n-step and double-DQN targets on hand-computed episodes, target-network updates, errors,
checkpoints, reproducibility and a learning test on CartPole-v1."""

from __future__ import annotations

from dataclasses import replace

import gymnasium as gym
import numpy as np
import pytest
import torch
from learner_helpers import gradient_steps, post_act
from rlkit.experiments.dqn import CARTPOLE, DQN_CartPole
from torch import nn

import rlkit as rk
from rlkit.approximators.neural import q_network
from rlkit.core.dispatch import collect_statistics
from rlkit.core.plan import build_plan
from rlkit.learners.value_based.common import NonFiniteLossError, to_tensors

GAMMA = 0.5


class RecordingSampler(rk.NStepBatchSampler):
    """An n-step sampler that keeps its last batch (to compare the learner's targets with)."""

    def sample(self, trajectory):
        self.last = super().sample(trajectory)
        return self.last


def linear_q(weights: list[float]) -> nn.Linear:
    """Q(s, a) = weights[a] * s for a one-dimensional state."""
    net = nn.Linear(1, len(weights), bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor(weights).view(-1, 1))
    return net


def frozen(net: nn.Module) -> rk.NeuralNetworkApproximator:
    return rk.NeuralNetworkApproximator(net, lambda p: torch.optim.SGD(p, lr=0.0))


def hand_episodes() -> rk.CircularArraySARTTrajectory:
    """Slot: (state, reward, terminal, truncated, next_state)
    0: (0, 1, F, F, 1)   1: (1, 2, T, F, 2)      - an episode that terminates
    2: (10, 1, F, F, 11) 3: (11, 1, F, T, 12)    - an episode cut by a time limit
    4: (20, 3, F, F, 21)                         - the episode going on
    """
    t = rk.CircularArraySARTTrajectory(10, state_shape=(1,))
    for s, r, term, trunc, s2 in [
        (0, 1, False, False, 1),
        (1, 2, True, False, 2),
        (10, 1, False, False, 11),
        (11, 1, False, True, 12),
        (20, 3, False, False, 21),
    ]:
        t.append(np.float32([s]), 0, r, term, trunc, np.float32([s2]))
    return t


def targets_by_index(learner, sampler, steps: int = 20) -> dict[int, float]:
    """Take gradient steps (the networks are frozen: lr 0) and collect the learner's target of
    every sampled slot."""
    trajectory = hand_episodes()
    found: dict[int, float] = {}
    for _ in range(steps):
        gradient_steps(learner, trajectory)
        for i, y in zip(
            sampler.last["indices"].tolist(), learner._last_target.tolist(), strict=True
        ):
            assert found.setdefault(i, y) == y
    return found


def learner_on_hand_episodes(double: bool, target_weights: list[float], n: int = 3):
    approx = frozen(linear_q([1.0, 2.0]))  # online Q(s) = [s, 2s]
    target = rk.TargetNetwork(approx, sync_every=1000)
    with torch.no_grad():
        target.model.weight.copy_(torch.tensor(target_weights).view(-1, 1))
    sampler = RecordingSampler(5, n=n, gamma=GAMMA, seed=0)
    learner = rk.DQNLearner(
        approx,
        sampler=sampler,
        controller=rk.InsertSampleRatioController(0, 1, 1),
        gamma=GAMMA,
        target=target,
        double=double,
    )
    return learner, sampler


# targets y = n-step return + gamma**m * Q_target(s', a*) unless the window terminated
EXPECTED_3_STEP = {
    0: 1 + GAMMA * 2,  # window 0, 1 ends in termination: no bootstrap
    1: 2,
    2: 1 + GAMMA * 1 + GAMMA**2 * 2 * 12,  # truncated after 2 steps: bootstrap from s' = 12
    3: 1 + GAMMA * 2 * 12,
    4: 3 + GAMMA * 2 * 21,  # the most recent transition: its window has one step
}


def test_n_step_targets_through_the_learner_on_hand_computed_episodes():
    learner, sampler = learner_on_hand_episodes(double=False, target_weights=[1.0, 2.0])
    assert targets_by_index(learner, sampler) == pytest.approx(EXPECTED_3_STEP)


def test_one_step_targets_bootstrap_through_truncation_but_not_termination():
    learner, sampler = learner_on_hand_episodes(double=False, target_weights=[1.0, 2.0], n=1)
    one_step = {0: 1 + GAMMA * 2, 1: 2, 2: 1 + GAMMA * 22, 3: 1 + GAMMA * 24, 4: 3 + GAMMA * 42}
    assert targets_by_index(learner, sampler) == pytest.approx(one_step)


def test_double_dqn_evaluates_the_online_networks_choice_with_the_target_network():
    # target Q(s) = [2s, s]: plain DQN takes max = 2s, double DQN takes the online argmax
    # (action 1, since online Q = [s, 2s]) evaluated by the target: s
    plain = targets_by_index(*learner_on_hand_episodes(False, target_weights=[2.0, 1.0], n=1))
    double = targets_by_index(*learner_on_hand_episodes(True, target_weights=[2.0, 1.0], n=1))
    by_index, by_index_double = plain, double
    assert by_index[3] == pytest.approx(1 + GAMMA * 24)
    assert by_index_double[3] == pytest.approx(1 + GAMMA * 12)
    assert by_index[1] == by_index_double[1] == pytest.approx(2)  # terminal: no bootstrap


def test_to_tensors_converts_without_copying_states_on_cpu():
    t = hand_episodes()
    batch = rk.BatchSampler(4, seed=0).sample(t)
    tensors = to_tensors(batch, 0.9, torch.device("cpu"))
    assert tensors["state"].dtype == torch.float32 and tensors["action"].dtype == torch.int64
    assert np.shares_memory(tensors["state"].numpy(), batch["state"])
    assert tensors["discount"].tolist() == pytest.approx([0.9] * 4)
    assert tensors.get("weights") is None and tensors["indices"] is batch["indices"]


# ---- a small CartPole setup ----


def cartpole_learner(seed: int = 0, **kwargs):
    env = rk.GymEnv("CartPole-v1", seed=seed)
    approx = rk.NeuralNetworkApproximator(
        q_network(env.state_space, env.action_space, (16,), seed=seed),
        lambda p: torch.optim.Adam(p, lr=1e-3),
        max_grad_norm=10.0,
    )
    options = dict(
        sampler=rk.BatchSampler(8, seed=seed),
        controller=rk.InsertSampleRatioController(20, 2, 3),
        gamma=0.99,
        target=rk.TargetNetwork(approx, sync_every=5),
    )
    options.update(kwargs)
    learner = rk.DQNLearner(approx, **options)
    explorer = rk.EpsilonGreedyExplorer(0.2, seed=seed)
    trajectory = rk.CircularArraySARTTrajectory(500, env.state_space, env.action_space)
    return rk.Agent(rk.QBasedPolicy(learner, explorer), trajectory), env, learner


def test_learner_returns_the_q_values_of_the_current_state():
    agent, env, learner = cartpole_learner()
    env.reset()
    q = learner(env)
    assert isinstance(q, np.ndarray) and q.shape == (2,)
    expected = learner.model(torch.as_tensor(env.state)).detach().numpy()
    assert np.array_equal(q, expected)


def test_learning_happens_at_post_act_through_the_controller():
    agent, env, learner = cartpole_learner()
    rk.run(agent, env, rk.StopAfterNSteps(50))
    # warm-up 20 steps, then 3 gradient steps at every even step: steps 22, 24, ..., 50
    assert learner.gradient_steps == 3 * 15
    assert learner.env_steps == 50
    assert learner.target.updates == 50  # once per environment step
    stats = collect_statistics(agent)
    for key in ("loss", "q_mean", "td_error", "lr"):
        assert np.isfinite(stats[f"learner/{key}"])
    assert stats["approximator/grad_norm"] >= 0


def test_target_updates_can_count_gradient_steps():
    agent, env, learner = cartpole_learner(target_update_on="gradient_step")
    rk.run(agent, env, rk.StopAfterNSteps(50))
    assert learner.target.updates == learner.gradient_steps == 45


def test_target_network_is_synced_every_n_environment_steps_before_that_steps_training():
    # Stable-Baselines3's order: at an environment step where both happen, the target network is
    # synced first (DQN._on_step) and the gradient steps (train) then use the fresh copy
    agent, env, learner = cartpole_learner()
    rk.run(agent, env, rk.StopAfterNSteps(49))  # 49 steps: last sync at 45, training at 48
    online, stale = clone_params(learner.model), clone_params(learner.target.model)
    assert not all(torch.equal(a, b) for a, b in zip(online, stale, strict=True))
    targets = []  # the target network's weights at each gradient step of step 50
    step = learner.approximator.step

    def recording_step(fn_loss):
        targets.append(clone_params(learner.target.model))
        return step(fn_loss)

    learner.approximator.step = recording_step
    rk.run(agent, env, rk.StopAfterNSteps(1))  # step 50: a sync, then 3 gradient steps
    assert len(targets) == 3
    for target in targets:  # the gradient steps saw the weights from before step 50's training
        assert all(torch.equal(a, b) for a, b in zip(online, target, strict=True))
    # after them the target still holds those weights; the online network moved on
    assert all(
        torch.equal(a, b) for a, b in zip(online, learner.target.model.parameters(), strict=True)
    )
    assert not all(
        torch.equal(a, b) for a, b in zip(online, learner.model.parameters(), strict=True)
    )


def clone_params(model: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def test_explain_shows_the_learners_stage_methods():
    agent, env, _ = cartpole_learner()
    plan = build_plan(agent, env).describe()
    assert "update(DQNLearner, CircularArraySARTTrajectory, GymEnv, PostActStage)" in plan
    assert "learners/value_based/common.py" in plan  # the stage methods shared by the DQN family


def test_mse_loss_and_dueling_head_learn_too():
    env = rk.GymEnv("CartPole-v1", seed=0)
    approx = rk.NeuralNetworkApproximator(
        q_network(env.state_space, env.action_space, (16,), dueling=True, seed=0),
        lambda p: torch.optim.Adam(p, lr=1e-3),
    )
    learner = rk.DQNLearner(
        approx,
        sampler=rk.NStepBatchSampler(8, n=3, gamma=0.9, seed=0),
        controller=rk.InsertSampleRatioController(10, 1, 1),
        gamma=0.9,
        loss="mse",
        double=True,
    )
    agent = rk.Agent(
        rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.5, seed=0)),
        rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space),
    )
    rk.run(agent, env, rk.StopAfterNSteps(30))
    assert learner.gradient_steps == 20 and np.isfinite(learner.loss)


# ---- errors ----


def test_construction_errors_name_the_learner_and_the_value():
    agent, env, learner = cartpole_learner()
    approx = learner.approximator
    common = dict(sampler=rk.BatchSampler(8), controller=rk.InsertSampleRatioController())
    with pytest.raises(TypeError, match="DQNLearner: approximator must be an rk.Neural"):
        rk.DQNLearner(nn.Linear(4, 2), **common)
    gamma_message = r"DQNLearner: gamma must be a number in \[0, 1\], got 1.5"
    with pytest.raises(ValueError, match=gamma_message):
        rk.DQNLearner(approx, gamma=1.5, **common)
    with pytest.raises(ValueError, match="DQNLearner: loss must be one of"):
        rk.DQNLearner(approx, loss="l1", **common)
    with pytest.raises(ValueError, match="DQNLearner: target_update_on must be one of"):
        rk.DQNLearner(approx, target_update_on="episode", **common)
    with pytest.raises(ValueError, match="must follow the approximator's model"):
        rk.DQNLearner(approx, target=rk.TargetNetwork(nn.Linear(4, 2), tau=0.1), **common)
    with pytest.raises(ValueError, match="the sampler discounts n-step rewards with gamma=0.5"):
        rk.DQNLearner(
            approx,
            gamma=0.99,
            sampler=rk.NStepBatchSampler(8, n=3, gamma=0.5),
            controller=rk.InsertSampleRatioController(),
        )
    with pytest.raises(TypeError, match="sampler must have a sample"):
        rk.DQNLearner(approx, sampler=None, controller=rk.InsertSampleRatioController())
    with pytest.raises(TypeError, match="controller must have a step"):
        rk.DQNLearner(approx, sampler=rk.BatchSampler(8), controller=3)


def test_output_size_that_does_not_match_the_action_space_fails_when_the_run_starts():
    env = rk.GymEnv("CartPole-v1", seed=0)
    approx = rk.NeuralNetworkApproximator(nn.Linear(4, 3), lambda p: torch.optim.SGD(p, lr=0.1))
    learner = rk.DQNLearner(
        approx, sampler=rk.BatchSampler(8), controller=rk.InsertSampleRatioController()
    )
    trajectory = rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space)
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0)), trajectory)
    with pytest.raises(
        ValueError,
        match=r"DQNLearner: the approximator outputs 3 values .*"
        r"Discrete\(2\) needs 2",
    ):
        rk.run(agent, env, rk.StopAfterNSteps(10))
    assert len(trajectory) == 0  # not a single step was taken


def test_a_network_that_cannot_read_the_observations_fails_when_the_run_starts():
    env = rk.GymEnv("CartPole-v1", seed=0)
    approx = rk.NeuralNetworkApproximator(nn.Linear(5, 2), lambda p: torch.optim.SGD(p, lr=0.1))
    learner = rk.DQNLearner(
        approx, sampler=rk.BatchSampler(8), controller=rk.InsertSampleRatioController()
    )
    agent = rk.Agent(
        rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0)),
        rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space),
    )
    with pytest.raises(ValueError, match=r"cannot evaluate a batch of observations of shape"):
        rk.run(agent, env, rk.StopAfterNSteps(10))


def test_sampling_before_the_replay_holds_a_batch_is_a_clear_error():
    agent, env, learner = cartpole_learner(controller=rk.InsertSampleRatioController(0, 1, 1))
    with pytest.raises(ValueError, match="holds 1 transitions, fewer than batch_size 8"):
        rk.run(agent, env, rk.StopAfterNSteps(10))


def test_a_non_finite_loss_stops_training_naming_the_learner_and_the_step():
    env = rk.GymEnv(
        gym.wrappers.TransformReward(gym.make("CartPole-v1"), lambda r: float("nan")), seed=0
    )
    _, _, learner = cartpole_learner()
    agent = rk.Agent(
        rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.2, seed=0)),
        rk.CircularArraySARTTrajectory(500, env.state_space, env.action_space),
    )
    before = [p.detach().clone() for p in learner.model.parameters()]
    with pytest.raises(
        NonFiniteLossError,
        match=r"DQNLearner: non-finite loss nan at gradient step 1 \(environment step 22\)",
    ):
        rk.run(agent, env, rk.StopAfterNSteps(100))
    after = list(learner.model.parameters())
    assert all(torch.equal(a, b) for a, b in zip(before, after, strict=True))


# ---- checkpoints and reproducibility ----


def test_state_dict_round_trip_continues_bit_identically():
    agent, env, learner = cartpole_learner(seed=0)
    rk.run(agent, env, rk.StopAfterNSteps(60))
    state = learner.state_dict()
    trajectory = agent.trajectory
    for _ in range(30):
        post_act(learner, trajectory, env)
    expected = [p.detach().clone() for p in learner.model.parameters()]
    expected_target = [p.detach().clone() for p in learner.target.model.parameters()]

    _, _, other = cartpole_learner(seed=1)  # different weights, sampler and counters
    other.load_state_dict(state)
    assert other.gradient_steps == state["gradient_steps"]
    for _ in range(30):
        post_act(other, trajectory, env)
    assert all(torch.equal(a, b) for a, b in zip(expected, other.model.parameters(), strict=True))
    assert all(
        torch.equal(a, b)
        for a, b in zip(expected_target, other.target.model.parameters(), strict=True)
    )
    assert other.gradient_steps == learner.gradient_steps
    assert other.controller.n_steps == learner.controller.n_steps


def test_same_seed_twice_gives_identical_parameters():
    def train(seed):
        exp = DQN_CartPole(
            seed,
            replace(
                CARTPOLE,
                total_steps=600,
                learning_starts=100,
                train_freq=50,
                gradient_steps=5,
                hidden=(32, 32),
            ),
        )
        agent = exp.policy
        rk.run(agent, exp.env, rk.StopAfterNSteps(600))
        return [p.detach().clone() for p in agent.policy.learner.model.parameters()]

    a, b, c = train(3), train(3), train(4)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(torch.equal(x, y) for x, y in zip(a, c, strict=True))


@pytest.mark.parametrize("n_step", [1, 3])
def test_batches_drawn_ahead_train_exactly_like_one_draw_per_step(monkeypatch, n_step):
    """A round's batches are drawn ahead (here in chunks of 3 batches) and give the same
    parameters, bit for bit, as drawing one batch before each gradient step."""
    import functools

    import rlkit.learners.value_based.common as dqn_common

    config = replace(
        CARTPOLE,
        total_steps=700,
        learning_starts=100,
        train_freq=100,
        gradient_steps=10,
        hidden=(32,),
    )

    def train(samples_ahead: bool):
        exp = DQN_CartPole(3, replace(config, n_step=n_step))
        agent, env = exp.policy, exp.env
        learner = agent.policy.learner
        learner.samples_ahead = samples_ahead
        sample = learner.sampler.sample
        calls = []

        @functools.wraps(sample)
        def counting(*args, **kwargs):
            calls.append(kwargs.get("n_batches", args[1] if len(args) > 1 else 1))
            return sample(*args, **kwargs)

        learner.sampler.sample = counting
        rk.run(agent, env, rk.StopAfterNSteps(config.total_steps))
        assert learner.gradient_steps == 60
        return [p.detach().clone() for p in learner.model.parameters()], calls

    batch_bytes = (2 * 4 * 4 + 64) * config.batch_size  # two CartPole states and the rest per row
    monkeypatch.setattr(dqn_common, "_AHEAD_BYTES", 3 * batch_bytes)
    ahead, ahead_calls = train(True)
    one_by_one, single_calls = train(False)
    assert ahead_calls == [3, 3, 3, 1] * 6
    assert single_calls == [1] * 60
    assert all(torch.equal(a, b) for a, b in zip(ahead, one_by_one, strict=True))


def test_prioritized_replay_and_custom_samplers_draw_one_batch_per_step():
    approx = frozen(linear_q([1.0, 2.0]))
    common = dict(controller=rk.InsertSampleRatioController(0, 1, 4), gamma=GAMMA)
    # a sampler whose sample() takes no n_batches is called once per gradient step
    custom = rk.DQNLearner(approx, sampler=RecordingSampler(2, n=1, gamma=GAMMA), **common)
    env = rk.GymEnv("CartPole-v1")  # the env of the step (never stepped here)
    post_act(custom, hand_episodes(), env)
    assert custom.gradient_steps == 4 and custom.sampler.last["state"].shape == (2, 1)
    # prioritized replay: each step samples by the priorities the previous step set
    prioritized = rk.PrioritizedDQNLearner(approx, sampler=rk.BatchSampler(2, seed=0), **common)
    trajectory = rk.PrioritizedCircularArraySARTTrajectory(10, state_shape=(1,))
    for i in range(6):
        trajectory.append(np.float32([i]), 0, 1.0, False, False, np.float32([i + 1]))
    updates = []
    update_priorities = trajectory.update_priorities
    trajectory.update_priorities = lambda i, e: (
        updates.append(trajectory.n_sampled) or (update_priorities(i, e))
    )
    post_act(prioritized, trajectory, env)
    assert updates == [1, 2, 3, 4]  # a priority update after each single draw


# ---- learning ----

# rl-baselines3-zoo's CartPole DQN settings with a 20k-step budget (training every 64 steps
# instead of 256). Measured: greedy mean 500 on seeds 0-3 (about 16 s each on one core).
FAST_CARTPOLE = replace(
    CARTPOLE, total_steps=20_000, buffer_size=20_000, train_freq=64, gradient_steps=32
)


@pytest.mark.slow
def test_dqn_solves_cartpole_within_20k_steps():
    exp = DQN_CartPole(0, FAST_CARTPOLE)  # its agent and environment (no evaluation hook)
    agent = exp.policy
    rk.run(agent, exp.env, rk.StopAfterNSteps(FAST_CARTPOLE.total_steps))
    result = rk.evaluate(agent, rk.GymEnv("CartPole-v1"), 20, seed=123)
    assert result.mean >= 195, result


def test_fast_acting_forward_matches_the_model_and_falls_back_when_it_must():
    from rlkit.learners.value_based.common import fast_forward

    box, two = gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2)
    net = q_network(box, two, (8, 8), seed=0)
    x = torch.linspace(-1, 1, 4)
    with torch.no_grad():
        assert torch.equal(fast_forward(net)(x), net(x))
        net[0].weight.add_(1.0)  # parameters are read at every call
        assert torch.equal(fast_forward(net)(x), net(x))
    dueling = q_network(box, two, (8,), dueling=True, seed=0)
    assert fast_forward(dueling) is dueling
    net.register_forward_hook(lambda module, args, out: out * 2)
    assert fast_forward(net) is net


def test_a_deep_copy_or_pickle_of_the_acting_forward_uses_the_copied_parameters():
    """A copy of a learner (a self-play pool's frozen copy, an actor's policy) acts with its own
    network: the fast acting path holds parameters, not a closure over the original's."""
    import copy
    import pickle

    from rlkit.learners.value_based.common import fast_forward

    box, two = gym.spaces.Box(-1, 1, (4,)), gym.spaces.Discrete(2)
    net = q_network(box, two, (8, 8), seed=0)
    holder = {"model": net, "forward": fast_forward(net)}
    x = torch.linspace(0.1, 1, 4)  # not summing to 0: adding 1 to every weight moves each unit
    for twin in (copy.deepcopy(holder), pickle.loads(pickle.dumps(holder))):
        with torch.no_grad():
            before = twin["forward"](x).clone()
            net[0].weight.add_(1.0)  # the original changes: the copy does not see it
            assert torch.equal(twin["forward"](x), before)
            twin["model"][0].weight.add_(1.0)  # the copy's own model changes: it acts with it
            assert torch.equal(twin["forward"](x), twin["model"](x))
            assert not torch.equal(twin["forward"](x), before)
