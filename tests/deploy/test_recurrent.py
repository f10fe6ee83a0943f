"""rk.save / rk.load / predict / rk.export of recurrent policies (rlkit/deploy/recurrent.py):
the loaded policy gives the trained one's actions and hidden states, bit for bit, on a fixed
sequence of observations with the state carried and episodes starting; predict takes and
returns the state (sb3-contrib's predict(obs, state, episode_start)); bad states and episode
starts are refused naming them; refused loads change nothing; the ONNX graph carries the state
as an input and an output."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.deploy.errors import ArtifactError
from rlkit.deploy.recurrent import LoadedRecurrentPolicy

SMALL = {"lstm_hidden_size": 16, "hidden": (16,), "n_steps": 16, "batch_size": 16, "n_epochs": 2}
ENVS = ["rlkit/CartPoleNoVel-v1", "rlkit/PendulumNoVel-v1"]


@pytest.fixture(scope="module", params=ENVS)
def saved(request, tmp_path_factory):
    """(trained agent, its artifact, the env id): a RecurrentPPO after a few updates."""
    env = rk.VectorGymEnv(request.param, 2, seed=0)
    agent = rk.RecurrentPPO.agent(env, seed=0, **SMALL)
    rk.run(agent, env, rk.StopAfterNSteps(128))
    assert agent.policy.updates == 4
    path = tmp_path_factory.mktemp("recurrent") / "rppo.rlkit"
    rk.save(agent, path)
    return agent, path, request.param


def sequence(space, steps=40, n=3, seed=0):
    """A fixed sequence of ``steps`` batches of ``n`` observations, and episode starts: every
    env at the first step, env 1 every 7 steps, env 2 never again."""
    space.seed(seed)
    obs = np.stack([np.stack([space.sample() for _ in range(n)]) for _ in range(steps)])
    starts = np.zeros((steps, n), dtype=bool)
    starts[0] = True
    starts[::7, 1] = True
    return obs, starts


def rollout(policy, obs, starts, deterministic=True):
    state, actions, states = None, [], []
    for o, s in zip(obs, starts, strict=True):
        action, state = policy.predict(o, state, s, deterministic=deterministic)
        actions.append(action)
        states.append(state)
    return np.stack(actions), np.stack(states)


@pytest.mark.parametrize("deterministic", [True, False])
def test_loaded_policy_gives_the_trained_actions_and_states_bit_for_bit(saved, deterministic):
    agent, path, _ = saved
    loaded = rk.load(path)
    assert isinstance(loaded, LoadedRecurrentPolicy) and loaded.algorithm == "RecurrentPPO"
    obs, starts = sequence(loaded.state_space)
    trained = rollout(agent.policy, obs, starts, deterministic)
    again = rollout(loaded, obs, starts, deterministic)
    for a, b in zip(trained, again, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert np.abs(trained[1]).max() > 0  # states were carried (not zeros)


def test_predict_carries_the_state_as_acting_does(saved):
    """Predicting the observations a greedy run saw, with the state carried, gives the run's
    actions; starting every step from zeros gives other actions or states."""
    agent, path, env_id = saved
    loaded = rk.load(path)
    env = rk.GymEnv(env_id, seed=3)
    seen, flags, acted = [], [], []
    greedy = rk.greedy(loaded)
    act = greedy.act

    def recording_act(env):
        seen.append(np.array(env.state, dtype=np.float32))
        flags.append(greedy.act_state.pending)  # the step starts an episode
        acted.append(np.array(act(env)))
        return acted[-1]

    greedy.act = recording_act
    rk.run(greedy, env, rk.StopAfterNSteps(250))
    obs, starts = np.stack(seen)[:, None], np.array(flags)[:, None]
    assert starts[0] and starts.sum() >= 2  # episodes ended and restarted within the run
    actions, states = rollout(loaded, obs, starts)
    np.testing.assert_array_equal(actions[:, 0], np.stack(acted))
    _, fresh = rollout(loaded, obs, np.ones_like(starts))
    assert not np.array_equal(states, fresh)


def test_episode_start_zeroes_the_given_state(saved):
    agent, _, _ = saved
    policy = agent.policy
    obs = np.zeros(policy.state_space.shape, np.float32)
    noise = np.random.default_rng(0).normal(size=policy.initial_state().shape).astype(np.float32)
    a, s = policy.predict(obs, noise, True)
    b, t = policy.predict(obs)
    c, u = policy.predict(obs, noise, False)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(s, t)
    assert not np.array_equal(s, u)


def test_predict_leaves_the_policys_own_state_and_generators_alone(saved):
    agent, _, _ = saved
    policy = agent.policy
    hidden = policy.act_state.hidden.clone()
    generator = policy.generator.get_state()
    obs, starts = sequence(policy.state_space, steps=5)
    rollout(policy, obs, starts, deterministic=False)
    assert torch.equal(policy.act_state.hidden, hidden)
    assert torch.equal(policy.generator.get_state(), generator)


def test_an_agent_passes_the_state_through(saved):
    agent, _, _ = saved
    obs, starts = sequence(agent.policy.state_space, steps=6)
    for a, b in zip(rollout(agent, obs, starts), rollout(agent.policy, obs, starts), strict=True):
        np.testing.assert_array_equal(a, b)


def test_single_and_batched_predict_agree(saved):
    agent, _, _ = saved
    policy = agent.policy
    obs, starts = sequence(policy.state_space, steps=1, n=2)
    actions, states = policy.predict(obs[0], policy.initial_state(2), starts[0])
    # the same numbers up to float32 rounding, not bit for bit: a batch of one and a batch of
    # two go through different matrix-multiply kernels (a Gaussian mean can differ in its last
    # bit: by up to 4.7e-10 on PendulumNoVel with this fixture's settings and agent seeds 1-5)
    for i in range(2):
        action, state = policy.predict(obs[0][i], policy.initial_state(), bool(starts[0][i]))
        np.testing.assert_allclose(action, actions[i], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(state, states[i], rtol=1e-6, atol=1e-7)


def test_loaded_policy_acts_with_a_state_per_sub_env_and_greedy_as_the_trained(saved):
    agent, path, env_id = saved
    loaded = rk.load(path, env=rk.GymEnv(env_id))
    runs = []
    for policy in (agent.policy, loaded):
        hook = rk.run(rk.greedy(policy), rk.GymEnv(env_id, seed=5), rk.StopAfterNEpisodes(2),
                      rk.TotalRewardPerEpisode())  # fmt: skip
        runs.append(hook.rewards)
    assert runs[0] == runs[1]
    env = rk.VectorGymEnv(env_id, 3, seed=0)
    rk.run(loaded, env, rk.StopAfterNSteps(30))
    assert tuple(loaded.act_state.hidden.shape) == (3, *loaded.initial_state().shape)


def test_a_loaded_policy_saves_again_to_the_same_policy(saved, tmp_path):
    agent, path, _ = saved
    loaded = rk.load(path)
    rk.save(loaded, tmp_path / "again.rlkit")
    again = rk.load(tmp_path / "again.rlkit")
    obs, starts = sequence(loaded.state_space, steps=10)
    for a, b in zip(rollout(loaded, obs, starts), rollout(again, obs, starts), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "state, episode_start, match",
    [
        (np.zeros((4, 1, 16), np.float32), None,
         r"state must be a float array of shape \(3, 4, 1, 16\)"),
        (np.zeros((3, 2, 1, 16), np.float32), None,
         r"state must .*\(3, 4, 1, 16\).*got float32 of shape \(3, 2, 1, 16\)"),
        (np.zeros((3, 4, 1, 16), np.int64), None, r"state must be a float array.*got int64"),
        (np.full((3, 4, 1, 16), np.nan, np.float32), None, "state holds nan or inf"),
        (None, [True, False], r"episode_start must be 3 bools \(shape \(3,\)\).*shape \(2,\)"),
        (None, [0, 2, 1], r"episode_start must be 3 bools"),
    ],
)  # fmt: skip
def test_bad_states_and_episode_starts_are_refused_naming_them(saved, state, episode_start, match):
    agent, path, _ = saved
    for policy in (agent.policy, rk.load(path)):
        obs = np.zeros((3, *policy.state_space.shape), np.float32)
        with pytest.raises(ValueError, match=r"RecurrentPPO\.predict: " + match):
            policy.predict(obs, state, episode_start)


def test_one_observation_takes_one_state_and_one_flag(saved):
    agent, _, _ = saved
    obs = np.zeros(agent.policy.state_space.shape, np.float32)
    with pytest.raises(ValueError, match=r"shape \(4, 1, 16\) .* for one observation"):
        agent.policy.predict(obs, agent.policy.initial_state(1))
    with pytest.raises(ValueError, match="episode_start must be a bool"):
        agent.policy.predict(obs, None, [True, True])


def test_refused_loads_change_nothing(saved, tmp_path):
    _, path, env_id = saved
    before = path.read_bytes()
    other = "Pendulum-v1" if "CartPole" in env_id else "CartPole-v1"
    with pytest.raises(ValueError, match="the policy was saved for observations Box"):
        rk.load(path, env=rk.GymEnv(other))
    assert path.read_bytes() == before
    # an artifact of kind recurrent whose model is not recurrent
    with zipfile.ZipFile(path) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    meta = json.loads(members["policy.json"])
    meta["network"]["model_fn"] = "rlkit.learners.policy_gradient.models:actor_critic_model"
    members["policy.json"] = json.dumps(meta).encode()
    bad = tmp_path / "bad.rlkit"
    with zipfile.ZipFile(bad, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    with pytest.raises(ArtifactError):
        rk.load(bad)


def test_onnx_graph_carries_the_state(saved, tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")
    agent, path, _ = saved
    out = tmp_path / "rppo.onnx"
    rk.export(agent, out)
    session = onnxruntime.InferenceSession(str(out))
    assert [i.name for i in session.get_inputs()] == ["obs", "state", "episode_start"]
    assert [o.name for o in session.get_outputs()] == ["action", "next_state"]
    loaded = rk.load(path)
    obs, starts = sequence(loaded.state_space, steps=20)
    state = onnx_state = loaded.initial_state(3)
    for o, s in zip(obs.astype(np.float32), starts, strict=True):
        action, state = loaded.predict(o, state, s)
        onnx_action, onnx_state = session.run(None, {"obs": o, "state": onnx_state,
                                                     "episode_start": s})  # fmt: skip
        np.testing.assert_allclose(onnx_action, action, atol=1e-5)
        np.testing.assert_allclose(onnx_state, state, atol=1e-5)
