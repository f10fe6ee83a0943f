"""rk.DatasetRecorder: any run, single or vector env, recorded into a dataset; episodes whole, no
transition crossing a reset, truncation apart from termination, written atomically."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import rlkit as rk

MAX_STEPS = 20  # CartPole truncated at 20 steps: both truncations and terminations happen


def replay_on_singles(ds: rk.Dataset, seeds: list[int]) -> int:
    """Replay every episode of ``ds`` on single GymEnvs seeded as the vector env's sub-envs:
    sub-env ``i``'s episodes, in order, are the dataset episodes starting at the single env's
    reset observations. Checks each transition; returns the number of episodes matched."""
    episodes = list(ds.episodes())
    used = set()
    for seed in seeds:
        single = rk.GymEnv("CartPole-v1", seed=seed, max_episode_steps=MAX_STEPS)
        single.reset()
        while True:
            start = np.asarray(single.state, np.float32)
            found = [
                k for k, e in enumerate(episodes)
                if k not in used and np.array_equal(e.observations[0], start)
            ]  # fmt: skip
            if not found:
                break  # this sub-env's episodes are all matched
            (k,) = found
            used.add(k)
            episode = episodes[k]
            for t in range(len(episode)):
                np.testing.assert_array_equal(episode.observations[t], single.state)
                single.act(int(episode.actions[t]))
                assert episode.rewards[t] == single.reward
                np.testing.assert_array_equal(episode.next_observations[t], single.state)
                assert episode.terminations[t] == single.is_terminated
                last = t == len(episode) - 1
                if single.done:
                    assert last and episode.truncations[t] == single.is_truncated
                else:  # only an unfinished episode's last step: cut, marked truncated
                    assert not episode.terminations[t] and episode.truncations[t] == last
            if not single.done:
                break  # the run stopped inside this episode
            single.reset()
    return len(used)


def test_vector_env_recording_replays_exactly_on_single_envs(tmp_path):
    env = rk.VectorGymEnv("CartPole-v1", 3, seed=2, max_episode_steps=MAX_STEPS)
    rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(300),
           rk.DatasetRecorder(tmp_path / "d.npz", seed=2))  # fmt: skip
    env.close()
    ds = rk.Dataset.load(tmp_path / "d.npz")
    assert len(ds) == 300
    assert ds.terminations.any() and ds.truncations.any()
    assert not (ds.terminations & ds.truncations).any()
    assert replay_on_singles(ds, env.seeds) == ds.n_episodes  # every episode, once
    # 3 unfinished episodes (one per sub-env) were cut: truncated before MAX_STEPS steps
    short_truncated = [e for e in ds.episodes() if e.truncations[-1] and len(e) < MAX_STEPS]
    assert len(short_truncated) == 3


def test_no_transition_crosses_a_reset(tmp_path):
    env = rk.VectorGymEnv("CartPole-v1", 4, seed=0, max_episode_steps=MAX_STEPS)
    rk.run(rk.RandomPolicy(seed=1), env, rk.StopAfterNSteps(400),
           rk.DatasetRecorder(tmp_path / "d.npz"))  # fmt: skip
    env.close()
    ds = rk.Dataset.load(tmp_path / "d.npz")
    for episode in ds.episodes():
        np.testing.assert_array_equal(episode.next_observations[:-1], episode.observations[1:])
        # a terminated CartPole episode ends outside the bounds: the real final observation
        if episode.terminations[-1]:
            final = episode.next_observations[-1]
            assert abs(final[0]) > 2.4 or abs(final[2]) > 0.2095


def test_single_env_recording(tmp_path):
    env = rk.GymEnv("CartPole-v1", seed=5, max_episode_steps=MAX_STEPS)
    hook = rk.DatasetRecorder(tmp_path / "d.npz", seed=5) + rk.TotalRewardPerEpisode()
    rk.run(rk.RandomPolicy(seed=5), env, rk.StopAfterNEpisodes(7), hook)
    ds = rk.Dataset.load(tmp_path / "d.npz")
    assert ds.n_episodes == 7
    np.testing.assert_array_equal(ds.episode_returns(), hook[rk.TotalRewardPerEpisode].rewards)
    assert replay_on_singles(ds, [5]) == 7


def test_metadata_env_spec_policy_and_seed(tmp_path):
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=3, max_episode_steps=MAX_STEPS)
    rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(10),
           rk.DatasetRecorder(tmp_path / "d.npz", seed=3))  # fmt: skip
    env.close()
    ds = rk.Dataset.load(tmp_path / "d.npz")
    assert ds.env_spec["id"] == "CartPole-v1"
    assert ds.env_spec["max_episode_steps"] == MAX_STEPS
    assert ds.seed == 3 and ds.policy_description == "RandomPolicy()"
    assert ds.observation_space == env.state_space and ds.action_space == env.action_space


def test_a_long_policy_repr_is_described_by_its_type(tmp_path):
    class Verbose(rk.RandomPolicy):
        def __repr__(self):
            return "V" * 1000

    rk.run(Verbose(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(5),
           rk.DatasetRecorder(tmp_path / "d.npz"))  # fmt: skip
    assert rk.Dataset.load(tmp_path / "d.npz").policy_description == "Verbose"


class Boom(rk.AbstractHook):
    def __init__(self, at):
        self.at, self.steps = at, 0

    def post_act(self, policy, env):
        self.steps += 1
        if self.steps == self.at:
            raise RuntimeError("crash in the run")


def test_a_run_that_raises_writes_nothing_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "d.npz"
    path.write_bytes(b"an older dataset")
    recorder = rk.DatasetRecorder(path)
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    with pytest.warns(RuntimeWarning, match="the run raised, so no dataset was written"):
        with pytest.raises(RuntimeError, match="crash in the run"):
            rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(100), recorder + Boom(30))
    env.close()
    assert path.read_bytes() == b"an older dataset"
    assert [p.name for p in tmp_path.iterdir()] == ["d.npz"]
    assert len(recorder.dataset()) == 60  # what was recorded stays available


def test_minari_format(tmp_path):
    pytest.importorskip("minari")
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0, max_episode_steps=MAX_STEPS)
    recorder = rk.DatasetRecorder(tmp_path / "m", format="minari", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Minari's own warnings are not the user's business
        rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(100), recorder)
    env.close()
    ds = rk.Dataset.load(tmp_path / "m")
    np.testing.assert_array_equal(ds.observations, recorder.dataset().observations)
    np.testing.assert_array_equal(ds.truncations, recorder.dataset().truncations)
    assert ds.env_spec["id"] == "CartPole-v1" and ds.seed == 0


def test_state_dict_round_trip_continues_the_recording(tmp_path):
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0, max_episode_steps=MAX_STEPS)
    whole = rk.DatasetRecorder(tmp_path / "whole.npz")
    rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(60), whole)
    first = rk.DatasetRecorder(tmp_path / "first.npz")
    env2 = rk.VectorGymEnv("CartPole-v1", 2, seed=0, max_episode_steps=MAX_STEPS)
    policy = rk.RandomPolicy(seed=0)
    rk.run(policy, env2, rk.StopAfterNSteps(30), first)
    second = rk.DatasetRecorder(tmp_path / "second.npz")
    second.load_state_dict(first.state_dict())
    rk.run(policy, env2, rk.StopAfterNSteps(30), second)  # continues the sub-envs' episodes
    env.close(), env2.close()
    a, b = whole.dataset(), second.dataset()
    for field in ("observations", "actions", "rewards", "terminations", "truncations"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_bad_format_is_refused():
    with pytest.raises(ValueError, match="format must be 'npz' or 'minari', got 'csv'"):
        rk.DatasetRecorder("x.csv", format="csv")


def test_resumed_from_a_checkpoint_the_dataset_is_the_uninterrupted_one(tmp_path):
    def make():
        env = rk.VectorGymEnv("CartPole-v1", 2, seed=0, max_episode_steps=MAX_STEPS)
        return env, rk.RandomPolicy(seed=0)

    env, policy = make()
    rk.run(policy, env, rk.StopAfterNSteps(100), rk.DatasetRecorder(tmp_path / "whole.npz"))
    def hooks():
        return rk.DatasetRecorder(tmp_path / "d.npz") + rk.CheckpointHook(
            tmp_path / "ck", every_n_steps=50
        )

    env, policy = make()  # stopped at 50 steps (as a killed run's last checkpoint) ...
    rk.run(policy, env, rk.StopAfterNSteps(50), hooks())
    env, policy = make()  # ... and resumed in a fresh process's objects
    rk.run(policy, env, rk.StopAfterNSteps(100), hooks(), resume_from=tmp_path / "ck")
    whole, resumed = rk.Dataset.load(tmp_path / "whole.npz"), rk.Dataset.load(tmp_path / "d.npz")
    assert len(resumed) == 100
    for field in ("observations", "actions", "rewards", "terminations", "truncations",
                  "next_observations"):  # fmt: skip
        np.testing.assert_array_equal(getattr(resumed, field), getattr(whole, field))


def test_an_env_whose_spaces_a_dataset_cannot_hold_is_refused_before_the_first_step(tmp_path):
    import gymnasium as gym

    class DictObs(gym.Env):  # a Dict of numbers is stored by key; a Text key cannot be
        observation_space = gym.spaces.Dict({"x": gym.spaces.Box(-1, 1, (2,)),
                                             "name": gym.spaces.Text(4)})  # fmt: skip
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            return {"x": np.zeros(2, np.float32), "name": "ab"}, {}

        def step(self, action):
            raise AssertionError("no step may be taken")

    with pytest.raises(TypeError, match=r"observation space: cannot store the space Text\("):
        rk.run(rk.RandomPolicy(seed=0), rk.GymEnv(DictObs()), rk.StopAfterNSteps(5),
               rk.DatasetRecorder(tmp_path / "d.npz"))  # fmt: skip
    assert not (tmp_path / "d.npz").exists()
