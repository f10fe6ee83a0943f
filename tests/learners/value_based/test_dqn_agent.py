"""The one-line DQN-family agents (rlkit/learners/value_based/agents.py and
distributional_agents.py): ``rk.DQN.agent(env, seed=s, **the recipe's hyperparameters)`` learns
the recipe's parameters bit for bit, and the parameters of the seven objects composed by hand;
Stable-Baselines3's defaults; unknown names, bad values and unfit spaces refused."""

from __future__ import annotations

import dataclasses
import re
import types
from dataclasses import replace
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from rlkit.experiments.distributional import C51_CARTPOLE, IQN_CARTPOLE, RAINBOW_CARTPOLE
from rlkit.experiments.dqn import CARTPOLE, QRDQN_CARTPOLE, DQNParams

import rlkit as rk
from rlkit.approximators.neural import q_network
from rlkit.core.seeding import int_seed, spawn_seeds
from rlkit.learners.value_based.agent_parts import adam

STEPS = 1000
# the recipes' CartPole settings, shortened: learning from step 200 on, 32 gradient steps every
# 256 steps (96 in all)
SHORT = {"total_steps": STEPS, "learning_starts": 200, "gradient_steps": 32}


def agent_hyperparameters(p: DQNParams) -> dict:
    """A recipe's DQN parameters as the one-liners take them: all but ``n_envs`` (written out
    here, not imported from experiments/dqn.py, so the test also holds against recipes that
    compose their agents by hand)."""
    return {f.name: getattr(p, f.name) for f in dataclasses.fields(DQNParams) if f.name != "n_envs"}


def parameters(agent: rk.Agent) -> list[torch.Tensor]:
    learner = agent.policy.learner
    tensors = list(learner.approximator.model.state_dict().values())
    if learner.target is not None:
        tensors += list(learner.target.model.state_dict().values())
    return tensors


def same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def recipe_env(seed: int) -> rk.GymEnv:
    """The recipes' training environment: seeded from the seed's first child."""
    return rk.GymEnv("CartPole-v1", seed=int_seed(spawn_seeds(seed, 5)[0]))


def trained_recipe(name: str, seed: int, **params) -> rk.Agent:
    """The recipe's agent after ``STEPS`` steps on its own environment (without the recipe's
    evaluation hook, which may restore an earlier policy)."""
    experiment = rk.make_experiment(name, seed, **params)
    rk.run(experiment.policy, experiment.env, rk.StopAfterNSteps(STEPS))
    return experiment.policy


def trained(agent: rk.Agent, env: rk.AbstractEnv) -> rk.Agent:
    rk.run(agent, env, rk.StopAfterNSteps(STEPS))
    return agent


# ---- the key property: one line, the recipe's parameters ----
@pytest.mark.slow
@pytest.mark.parametrize(
    ("recipe", "one_liner", "params", "extra"),
    [
        ("DQN_CartPole", "DQN", CARTPOLE, {}),
        ("PrioritizedDQN_CartPole", "PrioritizedDQN", CARTPOLE, {}),
        ("QRDQN_CartPole", "QRDQN", QRDQN_CARTPOLE, {"n_quantiles": 10}),
        ("C51_CartPole", "C51", C51_CARTPOLE, {}),
        ("IQN_CartPole", "IQN", IQN_CARTPOLE, {}),
        ("Rainbow_CartPole", "Rainbow", RAINBOW_CARTPOLE, {}),
    ],
)
def test_the_one_liner_with_the_recipes_hyperparameters_learns_the_recipes_parameters(
    recipe, one_liner, params, extra
):
    seed = 3
    hyperparameters = {**agent_hyperparameters(replace(params, **SHORT)), **extra}
    if one_liner in ("C51", "IQN", "Rainbow"):  # their learners are not compiled
        del hyperparameters["compile"]
    agent = trained(getattr(rk, one_liner).agent(recipe_env(seed), seed=seed, **hyperparameters),
                    recipe_env(seed))  # fmt: skip
    expected = trained_recipe(recipe, seed, **SHORT)
    assert agent.policy.learner.gradient_steps == expected.policy.learner.gradient_steps > 0
    assert same(parameters(agent), parameters(expected))
    # and the parameters moved: the comparison is not of two untrained networks
    fresh = getattr(rk, one_liner).agent(recipe_env(seed), seed=seed, **hyperparameters)
    assert not same(parameters(agent), parameters(fresh))


def test_dqn_agent_equals_the_seven_objects_composed_by_hand():
    """What the DQN recipes composed before the one-liner (and what docs/ show): the approximator,
    target network, learner, sampler, controller, explorer and replay, each from its seed."""
    seed, p = 1, replace(CARTPOLE, **SHORT)
    env_seed, explorer_seed, sampler_seed, network_seed, _ = spawn_seeds(seed, 5)
    env = rk.GymEnv("CartPole-v1", seed=int_seed(env_seed))
    q = rk.NeuralNetworkApproximator(
        q_network(env.state_space, env.action_space, p.hidden, seed=network_seed),
        lambda params: adam(params, lr=p.lr, eps=p.adam_eps),
        max_grad_norm=p.max_grad_norm,
    )
    learner = rk.DQNLearner(
        q,
        target=rk.TargetNetwork(q, sync_every=p.target_update_interval),
        sampler=rk.BatchSampler(p.batch_size, seed=sampler_seed),
        controller=rk.InsertSampleRatioController(
            p.learning_starts, p.train_freq, p.gradient_steps
        ),  # fmt: skip
        gamma=p.gamma,
    )
    explorer = rk.RandomWarmupEpsilonGreedy(
        p.exploration_final_eps, random_steps=p.learning_starts, kind="linear",
        decay_steps=int(p.exploration_fraction * p.total_steps), seed=explorer_seed,
    )  # fmt: skip
    replay = rk.CircularArraySARTTrajectory(p.buffer_size, env.state_space, env.action_space)
    by_hand = trained(rk.Agent(rk.QBasedPolicy(learner, explorer), replay), env)
    one_line = trained(
        rk.DQN.agent(recipe_env(seed), seed=seed, **agent_hyperparameters(p)), recipe_env(seed)
    )
    assert learner.gradient_steps > 0
    assert same(parameters(one_line), parameters(by_hand))


# ---- defaults, seeds, vector envs ----
def test_dqn_defaults_are_stable_baselines3s():
    env = rk.GymEnv("CartPole-v1", seed=0)
    agent = rk.DQN.agent(env)
    learner, explorer = agent.policy.learner, agent.policy.explorer
    assert learner.approximator.lr == 1e-4
    assert learner.gamma == 0.99 and not learner.double and learner.loss_kind == "huber"
    assert learner.target.sync_every == 10_000 and learner.target.tau is None
    assert learner.sampler.batch_size == 32
    c = learner.controller
    assert (c.warmup_steps, c.update_every, c.n_updates) == (100, 4, 1)
    assert learner.approximator.max_grad_norm == 10.0
    assert explorer.random_steps == 100
    assert [explorer.epsilon_at(t) for t in (0, 100_000)] == [1.0, 0.05]  # 10% of 1e6 steps
    assert agent.trajectory.capacity == 1_000_000
    widths = [m.out_features for m in learner.approximator.model if isinstance(m, torch.nn.Linear)]
    assert widths == [64, 64, 2]
    defaults = rk.DQN.defaults()
    assert defaults["lr"] == 1e-4 and defaults["exploration_fraction"] == 0.1
    assert defaults["hidden"] == (64, 64) and defaults["tau"] == 1.0


def test_qrdqn_defaults_are_sb3_contribs():
    agent = rk.QRDQN.agent(rk.GymEnv("CartPole-v1"), batch_size=64)
    learner = agent.policy.learner
    assert learner.n_quantiles == 200 and learner.approximator.lr == 5e-5
    assert learner.approximator.max_grad_norm is None
    assert agent.policy.explorer.epsilon_at(5000) == 0.01  # 0.5% of 1e6 steps
    optimizer = learner.approximator.optimizer
    assert optimizer.defaults["eps"] == pytest.approx(0.01 / 64)  # SB3-contrib: 0.01 / batch
    assert (
        rk.QRDQN.agent(
            rk.GymEnv("CartPole-v1"), adam_eps=1e-5
        ).policy.learner.approximator.optimizer.defaults["eps"]
        == 1e-5
    )  # noqa: E501


def test_prioritized_and_rainbow_replays():
    p = rk.PrioritizedDQN.agent(rk.GymEnv("CartPole-v1"), total_steps=10_000)
    assert isinstance(p.trajectory, rk.PrioritizedCircularArraySARTTrajectory)
    assert p.policy.learner.double
    assert (p.trajectory.alpha, p.trajectory.beta) == (0.6, 0.4)
    rainbow = rk.Rainbow.agent(rk.GymEnv("CartPole-v1"))
    assert rainbow.policy.learner.double and rainbow.trajectory.alpha == 0.5
    assert rainbow.policy.learner.sampler.n == 3
    assert rainbow.policy.explorer.epsilon_at(10_000) == 0.0


def test_tau_below_one_is_polyak_averaging_every_step():
    agent = rk.DQN.agent(rk.GymEnv("CartPole-v1"), tau=0.005, target_update_interval=1)
    assert agent.policy.learner.target.tau == 0.005


def test_one_seed_gives_the_same_parameters_and_another_seed_others():
    def run(seed):
        env = rk.GymEnv("CartPole-v1", seed=0)
        agent = rk.DQN.agent(env, seed=seed, learning_starts=100, hidden=(16,), total_steps=600)
        rk.run(agent, env, rk.StopAfterNSteps(600))
        return parameters(agent)

    first = run(0)
    assert same(first, run(0))
    assert not same(first, run(1))


@pytest.mark.parametrize("one_liner", ["DQN", "QRDQN", "PrioritizedDQN", "C51", "IQN", "Rainbow"])
def test_every_one_liner_learns_on_a_vector_env(one_liner):
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    agent = getattr(rk, one_liner).agent(env, seed=0, learning_starts=64, hidden=(16,),
                                         train_freq=8, total_steps=200)  # fmt: skip
    rk.run(agent, env, rk.StopAfterNSteps(200))  # transitions
    env.close()
    assert len(agent.trajectory) == 200
    assert agent.policy.learner.gradient_steps == (200 - 64) // 8
    assert all(torch.isfinite(t).all() for t in parameters(agent) if t.is_floating_point())


def test_the_agent_predicts_and_saves(tmp_path):
    env = rk.GymEnv("CartPole-v1", seed=0)
    agent = rk.DQN.agent(env, seed=0, learning_starts=50, total_steps=100)
    rk.run(agent, env, rk.StopAfterNSteps(100))
    obs = np.zeros(4, np.float32)
    assert agent.predict(obs) in (0, 1)
    rk.save(agent, tmp_path / "dqn")
    assert rk.load(tmp_path / "dqn").predict(obs) == agent.predict(obs)


# ---- refused: unknown names, bad values, unfit environments ----
@pytest.mark.parametrize(
    ("one_liner", "name", "closest"),
    [
        ("DQN", "lrr", "lr"),
        ("DQN", "learning_rate", "lr"),  # Stable-Baselines3's name
        ("DQN", "net_arch", "hidden"),
        ("DQN", "batchsize", "batch_size"),
        ("QRDQN", "n_quantile", "n_quantiles"),
        ("C51", "natoms", "n_atoms"),
    ],
)
def test_an_unknown_hyperparameter_names_the_closest_known_one(one_liner, name, closest):
    with pytest.raises(TypeError) as error:
        getattr(rk, one_liner).agent(rk.GymEnv("CartPole-v1"), **{name: 1})
    message = str(error.value)
    assert message.startswith(f"{one_liner} has no hyperparameter {name!r}")
    assert f"did you mean {closest!r}?" in message and "known: [" in message


def test_a_hyperparameter_of_another_algorithm_is_unknown():
    with pytest.raises(TypeError, match="DQN has no hyperparameter 'n_quantiles'"):
        rk.DQN.agent(rk.GymEnv("CartPole-v1"), n_quantiles=10)


@pytest.mark.parametrize(
    ("one_liner", "name", "value", "error"),
    [
        ("DQN", "lr", -1e-3, ValueError),
        ("DQN", "lr", "fast", TypeError),
        ("DQN", "batch_size", 0, ValueError),
        ("DQN", "buffer_size", 2.5, TypeError),
        ("DQN", "gamma", 1.5, ValueError),
        ("DQN", "learning_starts", -1, ValueError),
        ("DQN", "exploration_final_eps", 2.0, ValueError),
        ("DQN", "hidden", (0,), ValueError),
        ("DQN", "max_grad_norm", 0.0, ValueError),
        ("DQN", "tau", 0.0, ValueError),
        ("DQN", "loss", "l1", ValueError),
        ("DQN", "double", "yes", TypeError),
        ("DQN", "total_steps", 0, ValueError),
        ("QRDQN", "n_quantiles", 0, ValueError),
        ("QRDQN", "kappa", -1.0, ValueError),
        ("PrioritizedDQN", "beta", 2.0, ValueError),
        ("PrioritizedDQN", "alpha", -0.5, ValueError),
        ("C51", "n_atoms", 1, ValueError),
        ("IQN", "n_tau", 0, ValueError),
        ("Rainbow", "sigma0", -0.1, ValueError),
    ],
)
def test_a_bad_value_is_refused_naming_it(one_liner, name, value, error):
    with pytest.raises(error) as raised:
        getattr(rk, one_liner).agent(rk.GymEnv("CartPole-v1"), **{name: value})
    message = str(raised.value)
    assert message.startswith(f"{one_liner}: ") and name in message and repr(value) in message


def test_a_support_with_v_min_above_v_max_is_refused():
    with pytest.raises(ValueError, match=r"^C51: .*v_min"):
        rk.C51.agent(rk.GymEnv("CartPole-v1"), v_min=10.0, v_max=-10.0)


@pytest.mark.parametrize("seed", [-1, 1.5, "0"])
def test_a_bad_seed_is_refused_naming_it(seed):
    with pytest.raises(
        (TypeError, ValueError), match=rf"^DQN: seed must be .*got {re.escape(repr(seed))}"
    ):
        rk.DQN.agent(rk.GymEnv("CartPole-v1"), seed=seed)


def test_tau_below_one_needs_a_target_update_every_step():
    with pytest.raises(ValueError, match=r"DQN: tau=0\.5 .* target_update_interval must be 1"):
        rk.DQN.agent(rk.GymEnv("CartPole-v1"), tau=0.5)


def test_continuous_actions_are_refused_naming_the_space():
    with pytest.raises(TypeError, match=r"DQN: needs a Discrete action space, got Box\(-2\.0"):
        rk.DQN.agent(rk.GymEnv("Pendulum-v1"))


@pytest.mark.parametrize("name", ["DQN", "QRDQN", "PrioritizedDQN"])
def test_discrete_observations_are_one_hot_encoded(name):
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    agent = getattr(rk, name).agent(env, seed=0, learning_starts=20, batch_size=8)
    rk.run(agent, env, rk.StopAfterNSteps(40))
    assert agent.policy.learner.gradient_steps > 0


@pytest.mark.parametrize("name", ["C51", "IQN", "Rainbow"])
def test_distributional_agents_take_discrete_observations_and_refuse_text(name):
    agent = getattr(rk, name).agent(rk.GymEnv("CliffWalking-v1"))  # one-hot encoded
    assert agent.policy.learner.model(torch.tensor([0.0, 47.0])).shape[0] == 2
    text = types.SimpleNamespace(state_space=gym.spaces.Text(4),
                                 action_space=gym.spaces.Discrete(2))  # fmt: skip
    with pytest.raises(TypeError, match=r"encoder_for: no encoder for the observation space Text"):
        getattr(rk, name).agent(text)


def test_image_observations_get_a_cnn_not_a_refusal():
    # issue 30: the one-liners build the CNN (tests/learners/test_image_agents.py)
    images = types.SimpleNamespace(
        state_space=gym.spaces.Box(0, 255, (4, 84, 84), np.uint8),
        action_space=gym.spaces.Discrete(6),
    )
    model = rk.DQN.agent(images, buffer_size=100).policy.learner.model
    assert model[0].cnn == "nature" and model(torch.zeros(1, 4, 84, 84)).shape == (1, 6)


def test_a_gymnasium_env_is_refused_with_the_wrapper_to_use():
    with pytest.raises(TypeError, match=r"DQN: env must be an rlkit environment .* rk\.GymEnv"):
        rk.DQN.agent(gym.make("CartPole-v1"))


def test_the_one_liners_are_not_instantiated():
    with pytest.raises(TypeError, match=r"rk\.DQN\.agent\(env, seed=0"):
        rk.DQN(rk.GymEnv("CartPole-v1"))


def test_every_one_liners_defaults_pass_their_own_checks():
    for one_liner in (rk.DQN, rk.QRDQN, rk.PrioritizedDQN, rk.C51, rk.IQN, rk.Rainbow):
        hp = one_liner.hyperparameters()
        hp.check(one_liner.name)
        assert dataclasses.asdict(hp) == one_liner.defaults()


# ---- the documentation's examples run and print what the pages say ----
DOCS = Path(__file__).resolve().parents[3] / "docs"


def _doc_example(page: str, marker: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), flags=re.S)
    (found,) = [block for block in blocks if marker in block]
    return found


@pytest.mark.slow  # the Rainbow example takes about 10 s
@pytest.mark.parametrize(
    ("page", "marker"),
    [("getting-started.md", "rk.DQN.agent("), ("how-to/distributional.md", "rk.Rainbow.agent(")],
)
def test_the_one_line_examples_print_what_the_pages_say(page, marker, capsys):
    example = _doc_example(page, marker)
    exec(compile(example, page, "exec"), {})
    printed = capsys.readouterr().out.strip().splitlines()
    said = [line.split("#")[1].split(":")[-1].strip() for line in example.splitlines()
            if line.startswith("print(")]  # fmt: skip
    assert printed == said
