"""One-line agents on image observations (issue 30): ``rk.DQN.agent(env)`` and its relatives,
``rk.PPO.agent(env)`` and the other built policies, and ``rk.SAC.agent(env)`` build a CNN body
for ``uint8`` images ``(C, H, W)`` (the Nature CNN for 36x36 frames or more, MinAtar's below),
as the image recipes (experiments/images.py) and Stable-Baselines3's ``CnnPolicy`` do."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.approximators.cnn import ImageEncoder, image_cnn
from rlkit.approximators.encoders import CombinedEncoder, ImageKeyEncoder
from rlkit.core.seeding import int_seed
from rlkit.learners.policy_gradient.cnn_models import CnnActorCritic
from rlkit.learners.value_based.agent_parts import DQNSeeds

DQN_FAMILY = [rk.DQN, rk.PrioritizedDQN, rk.QRDQN, rk.C51, rk.IQN, rk.Rainbow]
BUILT = [rk.PPO, rk.A2C, rk.VPG, rk.TRPO]


class Frames(gym.Env):
    """Random ``uint8`` frames of ``shape`` (or a Dict of them with a vector); the reward is
    the action (so a learner has something to learn)."""

    def __init__(self, shape=(3, 6, 6), actions=None, dtype=np.uint8, structured=False):
        image = gym.spaces.Box(0, 255, shape, dtype)
        self.observation_space = (
            gym.spaces.Dict({"pixels": image, "vector": gym.spaces.Box(-1, 1, (2,))})
            if structured
            else image
        )
        self.action_space = actions or gym.spaces.Discrete(2)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        reward = float(np.asarray(action).ravel()[0])
        return self.observation_space.sample(), reward, False, False, {}


def frames(shape=(3, 6, 6), **kw) -> rk.GymEnv:
    return rk.GymEnv(Frames(shape, **kw), seed=0)


def encoders(model: torch.nn.Module) -> list[ImageEncoder]:
    return [m for m in model.modules() if isinstance(m, ImageEncoder)]


def params(model: torch.nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.state_dict().values()]


def same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


# ---- the CNN chosen by the frame size ----


def test_image_cnn_picks_the_nature_cnn_for_large_frames_and_minatars_below():
    box = lambda shape: gym.spaces.Box(0, 255, shape, np.uint8)  # noqa: E731
    assert image_cnn("DQN", box((4, 84, 84))) == "nature"
    assert image_cnn("DQN", box((4, 36, 36))) == "nature"  # the Nature CNN's smallest frame
    assert image_cnn("DQN", box((4, 35, 35))) == "minatar"
    assert image_cnn("DQN", box((4, 10, 10))) == "minatar"
    assert image_cnn("DQN", box((4, 84, 84)), "minatar") == "minatar"  # given: kept
    with pytest.raises(ValueError, match=r"DQN: the image observations of Box\(0, 255, \(4, 20, "
                       r"20\), uint8\) are 20x20 frames, too small for the 'nature' CNN \(at "
                       r"least 36x36\)"):  # fmt: skip
        image_cnn("DQN", box((4, 20, 20)), "nature")


# ---- the DQN family ----


@pytest.mark.parametrize("algorithm", DQN_FAMILY, ids=lambda a: a.name)
def test_dqn_family_one_liners_build_a_cnn_for_images_and_learn_from_uint8(algorithm):
    env = frames()
    extra = {"n_tau": 8, "n_tau_target": 8} if algorithm is rk.IQN else {}
    agent = algorithm.agent(env, seed=0, learning_starts=32, buffer_size=200, **extra)
    learner = agent.policy.learner
    (body,) = encoders(learner.model)
    assert body.cnn == "minatar" and body.scale == 255.0  # 6x6 frames: MinAtar's CNN
    assert learner.pixels and agent.trajectory.state.dtype == np.uint8
    before = params(learner.model)
    rk.run(agent, env, rk.StopAfterNSteps(80))
    assert learner.gradient_steps == (80 - 32) // 4
    assert np.isfinite(learner.loss)
    assert not same(before, params(learner.model))
    action = agent.policy.predict(np.zeros((3, 6, 6), np.uint8))  # one frame, as uint8
    assert int(action) in (0, 1)
    assert agent.policy.predict(np.zeros((5, 3, 6, 6), np.uint8)).shape == (5,)


def test_dqn_one_liner_takes_the_papers_layer_after_the_cnn_unless_hidden_is_given():
    # Atari-size frames: the Nature CNN (and a replay that fits this machine)
    agent = rk.DQN.agent(frames((4, 84, 84)), seed=0, buffer_size=100)
    model = agent.policy.learner.model
    assert encoders(model)[0].cnn == "nature"
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(3136, 512), (512, 2)]
    small = rk.DQN.agent(frames((4, 10, 10)), seed=0, hidden=(32,), cnn="minatar")
    linears = [m for m in small.policy.learner.model.modules() if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(1024, 32), (32, 2)]


def test_dict_observations_with_an_image_key_use_the_cnn_its_size_fits():
    env = frames((2, 10, 10), structured=True)
    agent = rk.DQN.agent(env, seed=0, learning_starts=32, buffer_size=200)
    (encoder,) = [m for m in agent.policy.learner.model.modules() if isinstance(m, CombinedEncoder)]
    assert isinstance(encoder.encoders["pixels"], ImageKeyEncoder)
    assert encoder.encoders["pixels"].body.cnn == "minatar"  # 10x10: too small for Nature's
    rk.run(agent, env, rk.StopAfterNSteps(64))
    assert agent.policy.learner.gradient_steps == (64 - 32) // 4
    large = rk.PPO(frames((1, 40, 40), structured=True), seed=0)
    assert encoders(large.model)[0].cnn == "nature"


# ---- the recipes: the one-liner with their hyperparameters learns their parameters ----


def recipe_and_one_liner(name: str, algorithm, tiny: dict) -> tuple:
    """The recipe ``name`` shortened by ``tiny``, and ``algorithm.agent`` on the recipe's
    environment (seeded as the recipe seeds it) with every recipe parameter it takes."""
    from rlkit.experiments import images

    p = dataclasses.replace(images.MINATAR_RAINBOW if "Rainbow" in name else images.MINATAR_DQN,
                            **tiny)  # fmt: skip
    experiment = rk.make_experiment(name, seed=0, **tiny)
    hyperparameters = {
        f.name: getattr(p, f.name) for f in dataclasses.fields(p) if f.name in algorithm.defaults()
    }
    # what the one-liner does not take is the environment's (and compile, off in both)
    left = {f.name for f in dataclasses.fields(p)} - hyperparameters.keys()
    assert left <= {"env", "frame_stack", "sticky_actions", "n_envs", "compile"}, left
    assert not p.compile and p.n_envs == 1
    env = rk.GymEnv(rk.make_minatar_env(p.env), seed=int_seed(DQNSeeds.of(0).env))
    return experiment, algorithm.agent(env, seed=0, **hyperparameters), env, hyperparameters


TINY = {"total_steps": 400, "learning_starts": 100, "buffer_size": 500, "batch_size": 16}


@pytest.mark.parametrize(
    ("name", "algorithm"),
    [("DQN_MinAtarBreakout", rk.DQN), ("Rainbow_MinAtarBreakout", rk.Rainbow)],
    ids=["DQN", "Rainbow"],
)
def test_the_one_liner_with_a_minatar_recipes_hyperparameters_learns_the_recipes_parameters(
    name, algorithm
):
    pytest.importorskip("minatar")
    experiment, agent, env, hyperparameters = recipe_and_one_liner(name, algorithm, TINY)
    mine, theirs = agent.policy.learner, experiment.policy.policy.learner
    assert repr(mine.model) == repr(theirs.model)  # the same network, layer for layer
    assert same(params(mine.model), params(theirs.model))  # the same initial weights
    # and the same with the CNN and its layer left to the one-liner (10x10: MinAtar's, 128)
    chosen = {k: v for k, v in hyperparameters.items() if k not in ("cnn", "hidden")}
    auto = algorithm.agent(env, seed=0, **chosen).policy.learner.model
    assert repr(auto) == repr(theirs.model) and same(params(auto), params(theirs.model))
    rk.run(experiment)
    rk.run(agent, env, rk.StopAfterNSteps(TINY["total_steps"]))
    assert mine.gradient_steps == theirs.gradient_steps == (400 - 100) // 4
    assert same(params(mine.model), params(theirs.model))
    assert same(params(mine.target.model), params(theirs.target.model))
    assert not same(params(mine.model), params(auto))  # they learned


# ---- the built policies (PPO, A2C, VPG, TRPO) and SAC, TD3, DDPG ----


@pytest.mark.parametrize("algorithm", BUILT, ids=lambda a: a.name)
def test_built_policies_build_sb3s_cnn_policy_for_images_without_cnn(algorithm):
    assert isinstance(algorithm(frames((4, 84, 84)), seed=0).model, CnnActorCritic)
    env = frames()
    agent = algorithm.agent(env, seed=0, n_steps=16, batch_size=16)
    assert isinstance(agent.policy.model, CnnActorCritic)
    assert agent.policy.model.encoder.cnn == "minatar"
    rk.run(agent, env, rk.StopAfterNSteps(64))
    assert agent.policy.updates == 4
    stats = rk.statistics(agent.policy)
    assert stats and all(np.isfinite(v) for v in stats.values())


def test_ppo_one_liner_learns_minatar_breakout_for_a_few_hundred_steps_reproducibly():
    pytest.importorskip("minatar")

    def run() -> tuple:
        env = rk.GymEnv(rk.make_minatar_env("MinAtar/Breakout-v1"), seed=0)
        agent = rk.PPO.agent(env, seed=0, n_steps=128, batch_size=32, n_epochs=2)
        before = params(agent.policy.model)
        hook = rk.run(agent, env, rk.StopAfterNSteps(384), rk.TotalRewardPerEpisode())
        return agent, before, hook

    agent, before, hook = run()
    assert agent.policy.model.encoder.cnn == "minatar"
    assert agent.policy.updates == 3 and len(hook.rewards) > 0
    assert np.isfinite(rk.statistics(agent.policy)["loss"])
    assert not same(before, params(agent.policy.model))
    again, _, _ = run()
    assert same(params(agent.policy.model), params(again.policy.model))


@pytest.mark.parametrize("algorithm", [rk.SAC, rk.TD3, rk.DDPG], ids=lambda a: a.name)
def test_sac_td3_ddpg_put_a_cnn_before_their_mlps_on_images(algorithm):
    env = frames(actions=gym.spaces.Box(-1, 1, (1,)))
    agent = algorithm.agent(env, seed=0, learning_starts=16, batch_size=8, buffer_size=100)
    model = agent.policy.model
    for net in (model.actor, model.critic):
        assert isinstance(net.encoder, ImageKeyEncoder) and net.encoder.n_features == 512
        assert net.encoder.body.cnn == "minatar"
    before = params(model)
    rk.run(agent, env, rk.StopAfterNSteps(40))
    assert agent.policy.gradient_steps == 40 - 16
    assert not same(before, params(model))


def test_recurrent_ppo_reads_images_through_sb3_contribs_cnn_lstm_extractor(tmp_path):
    env = frames((2, 10, 10))
    agent = rk.RecurrentPPO.agent(env, seed=0, n_steps=16, batch_size=16, lstm_hidden_size=8)
    encoder = agent.policy.model.encoder
    assert isinstance(encoder, ImageKeyEncoder) and encoder.n_features == 512
    assert encoder.body.cnn == "minatar" and agent.policy.model.lstm_actor.input_size == 512
    before = params(agent.policy.model)
    rk.run(agent, env, rk.StopAfterNSteps(48))
    assert not same(before, params(agent.policy.model))
    rk.save(agent, tmp_path / "agent.rlkit")
    loaded = rk.load(tmp_path / "agent.rlkit", env=env)
    env.state_space.seed(1)
    state = loaded_state = None
    for _ in range(10):  # the hidden state carried from step to step on both sides
        obs = env.state_space.sample()
        action, state = agent.predict(obs, state=state)
        loaded_action, loaded_state = loaded.predict(obs, state=loaded_state)
        assert np.asarray(action).tolist() == np.asarray(loaded_action).tolist()
        assert np.array_equal(np.asarray(state), np.asarray(loaded_state))


# ---- what the CNN cannot take ----


@pytest.mark.parametrize(
    "algorithm", [rk.DQN, rk.Rainbow, rk.PPO, rk.RecurrentPPO, rk.SAC], ids=lambda a: a.name
)
def test_frames_too_small_or_channels_last_are_refused_naming_the_space(algorithm):
    actions = gym.spaces.Box(-1, 1, (1,)) if algorithm is rk.SAC else None
    with pytest.raises(ValueError, match=r"Box\(0, 255, \(1, 1, 1\), uint8\) are 1x1 frames, "
                       r"too small for the 'nature' CNN \(at least 36x36\) or the 'minatar' "
                       r"CNN \(at least 3x3\)"):  # fmt: skip
        algorithm.agent(frames((1, 1, 1), actions=actions), seed=0)
    with pytest.raises(ValueError, match=r"Box\(0, 255, \(84, 84, 3\), uint8\) look laid out "
                       r"\(H, W, C\).*rlkit.envs.images.ChannelsFirst"):  # fmt: skip
        algorithm.agent(frames((84, 84, 3), actions=actions), seed=0)


@pytest.mark.parametrize("algorithm", [rk.DQN, rk.C51, rk.IQN, rk.PPO], ids=lambda a: a.name)
def test_a_cnn_asked_for_observations_that_are_not_images_is_refused(algorithm):
    floats = frames((3, 40, 40), dtype=np.float32)
    with pytest.raises(ValueError, match=r"a CNN needs image observations \(a uint8 Box of shape "
                       r"\(C, H, W\), channels first\), got Box\(0.0, 255.0, \(3, 40, 40\), "
                       r"float32\) with cnn='nature'"):  # fmt: skip
        algorithm.agent(floats, seed=0, cnn="nature")
    # without cnn a float Box is not an image: the MLP on the flattened values, as before
    if algorithm is not rk.IQN:  # IQN's network takes flat observations only
        assert not encoders(algorithm.agent(floats, seed=0).policy.learner.model
                            if algorithm is not rk.PPO else algorithm(floats, seed=0).model)


def test_an_unknown_cnn_is_refused_naming_the_agent():
    with pytest.raises(ValueError, match=r"DQN: cnn must be None \(chosen by the frame size\) "
                       r"or one of \['nature', 'minatar'\], got 'impala'"):  # fmt: skip
        rk.DQN.agent(frames(), seed=0, cnn="impala")


# ---- trained image agents save and load (rk.save / rk.load) ----


@pytest.mark.parametrize("structured", [False, True], ids=["image", "dict"])
@pytest.mark.parametrize(
    "algorithm", [rk.DQN, rk.Rainbow, rk.IQN, rk.PPO, rk.SAC], ids=lambda a: a.name
)
def test_a_loaded_image_agent_acts_as_the_trained_one(algorithm, structured, tmp_path):
    actions = gym.spaces.Box(-1, 1, (1,)) if algorithm is rk.SAC else None
    env = frames((2, 10, 10), structured=structured, actions=actions)
    kw = (
        {"n_steps": 16, "batch_size": 16}
        if algorithm is rk.PPO
        else {"learning_starts": 16, "buffer_size": 100, "batch_size": 8}
    )
    agent = algorithm.agent(env, seed=0, **kw)
    rk.run(agent, env, rk.StopAfterNSteps(40))
    rk.save(agent, tmp_path / "agent.rlkit")
    loaded = rk.load(tmp_path / "agent.rlkit", env=env)
    env.state_space.seed(1)
    observations = [env.state_space.sample() for _ in range(20)]
    trained = [np.asarray(agent.predict(o)).tolist() for o in observations]
    assert trained == [np.asarray(loaded.predict(o)).tolist() for o in observations]
