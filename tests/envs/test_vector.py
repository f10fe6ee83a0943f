"""VectorGymEnv on every backend and gymnasium autoreset mode: the contract of
docs/how-to/vector-envs.md (transitions equal those of single GymEnvs, final observations real,
termination and truncation apart), equality with gymnasium's RecordEpisodeStatistics, same results
on every backend, and the errors."""

from __future__ import annotations

import copy
import sys
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.core.state import set_generator_state
from rlkit.envs.vector import SubEnvError, sub_env_seeds

MODES = ["NextStep", "SameStep", "Disabled"]
BACKENDS = ["sync", "subprocess", "ray"]
N_ENVS, STEPS = 3, 120
# CartPole cut at 25 steps: episodes both terminate (the pole falls) and are truncated
KWARGS = {"max_episode_steps": 25}


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray")  # installed in CI (the test extra): never skipped there
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


def make(backend: str, request: Any, n: int = N_ENVS, **kwargs: Any) -> rk.VectorGymEnv:
    if backend == "ray":
        request.getfixturevalue("ray_session")
    options = {**KWARGS, **kwargs}
    return rk.VectorGymEnv("CartPole-v1", n, backend=backend, **options)


def action_table(steps: int = STEPS, n: int = N_ENVS, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).integers(2, size=(steps, n))


def vector_transitions(env: rk.VectorGymEnv, actions: np.ndarray) -> list[list[tuple]]:
    """Per sub-env, its transitions (state, action, reward, terminated, truncated, next)."""
    env.reset()
    out: list[list[tuple]] = [[] for _ in range(env.n_envs)]
    for row in actions:
        before = env.state.copy()
        env.act(row)
        assert env.state.shape == before.shape == env.final_state.shape
        for i in range(env.n_envs):
            out[i].append(
                (
                    before[i].tolist(),
                    int(row[i]),
                    float(env.reward[i]),
                    bool(env.is_terminated[i]),
                    bool(env.is_truncated[i]),
                    env.final_state[i].tolist(),
                )
            )
            if not env.done[i]:
                assert np.array_equal(env.final_state[i], env.state[i])
    return out


def single_transitions(seed: int, actions: np.ndarray) -> list[tuple]:
    env = rk.GymEnv("CartPole-v1", seed=seed, **KWARGS)
    env.reset()
    out = []
    for a in actions:
        before = np.array(env.state).tolist()
        env.act(int(a))
        out.append(
            (
                before,
                int(a),
                float(env.reward),
                bool(env.is_terminated),
                bool(env.is_truncated),
                np.array(env.state).tolist(),
            )
        )
        if env.done:
            env.reset()
    return out


# ---- the contract, on every backend and in every autoreset mode ----


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_transitions_are_those_of_single_envs(backend, mode, request):
    env = make(backend, request, seed=7, autoreset_mode=mode)
    try:
        actions = action_table()
        got = vector_transitions(env, actions)
    finally:
        env.close()
    assert env.seeds == sub_env_seeds(7, N_ENVS)
    ended = {"terminated": 0, "truncated": 0}
    for i in range(N_ENVS):
        expected = single_transitions(env.seeds[i], actions[:, i])
        assert got[i] == expected
        ended["terminated"] += sum(t[3] and not t[4] for t in got[i])
        ended["truncated"] += sum(t[4] and not t[3] for t in got[i])
    assert ended["terminated"] > 0 and ended["truncated"] > 0  # both kinds were exercised


class TablePolicy(rk.AbstractPolicy):
    """Plays a fixed table of actions, one row per step."""

    def __init__(self, table: np.ndarray) -> None:
        self.table, self.t = table, 0

    def act(self, env: Any) -> np.ndarray:
        row = self.table[self.t]
        self.t += 1
        return row


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_episode_statistics_equal_gymnasiums_record_episode_statistics(backend, mode, request):
    actions = action_table(200)
    env = make(backend, request, seed=3, autoreset_mode=mode)
    hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
    try:
        rk.run(TablePolicy(actions), env, rk.StopAfterNSteps(200 * N_ENVS), hook)
    finally:
        env.close()
    reference = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.vector.SyncVectorEnv(
            [lambda: gym.make("CartPole-v1", **KWARGS)] * N_ENVS,
            autoreset_mode=gym.vector.AutoresetMode.SAME_STEP,
        )
    )
    reference.reset(seed=env.seeds)
    returns, lengths = [], []
    for row in actions:
        *_, info = reference.step(row)
        if "episode" in info:
            for i in np.flatnonzero(info["_episode"]):
                returns.append(float(info["episode"]["r"][i]))
                lengths.append(int(info["episode"]["l"][i]))
    reference.close()
    assert len(returns) > 10
    assert hook[0].rewards == returns
    assert hook[1].steps == lengths


def test_same_seed_same_results_on_every_backend(request):
    actions = action_table(80, 4)
    results = {}
    for backend in BACKENDS:
        env = make(backend, request, n=4, seed=11)
        try:
            results[backend] = vector_transitions(env, actions)
        finally:
            env.close()
    assert results["sync"] == results["subprocess"] == results["ray"]


def test_reset_with_a_seed_reseeds_by_the_rule():
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    env.reset(seed=5)
    expected = [rk.GymEnv("CartPole-v1", seed=s) for s in sub_env_seeds(5, 2)]
    for e in expected:
        e.reset()
    assert np.array_equal(env.state, np.stack([e.state for e in expected]))
    env.close()


def test_spaces_are_a_single_sub_envs():
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    single = gym.make("CartPole-v1")
    assert env.action_space == single.action_space
    assert env.state_space == single.observation_space
    env.close()


class MaskedEnv(gym.Env):
    """Discrete(3) actions; ``info["action_mask"]`` forbids the action equal to the state."""

    def __init__(self) -> None:
        self.action_space = gym.spaces.Discrete(3)
        self.observation_space = gym.spaces.Box(0, 3, (1,), np.float32)

    def _out(self) -> tuple:
        mask = np.ones(3, dtype=np.int8)
        mask[self.s] = 0
        return np.array([self.s], np.float32), {"action_mask": mask}

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.s, self.t = int(self.np_random.integers(3)), 0
        return self._out()

    def step(self, action):
        assert action != self.s, "illegal action"
        self.s, self.t = int(action), self.t + 1
        obs, info = self._out()
        return obs, 1.0, self.t >= 4, False, info


@pytest.mark.parametrize("mode", MODES)
def test_legal_action_masks_per_sub_env(mode):
    env = rk.VectorGymEnv([MaskedEnv] * 3, backend="sync", seed=0, autoreset_mode=mode)
    hook = rk.StepsPerEpisode()
    rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(60), hook)
    assert env.legal_action_mask.shape == (3, 3)
    expected = np.ones((3, 3), bool)
    expected[np.arange(3), env.state[:, 0].astype(int)] = False
    assert np.array_equal(env.legal_action_mask, expected)
    assert set(hook.steps) == {4}
    env.close()


# ---- errors ----


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_n_envs_must_be_a_positive_integer(n):
    with pytest.raises(ValueError, match="n_envs"):
        rk.VectorGymEnv("CartPole-v1", n)


def test_unknown_backend_is_named():
    with pytest.raises(ValueError, match="'threads'"):
        rk.VectorGymEnv("CartPole-v1", 2, backend="threads")


def test_unknown_autoreset_mode_is_named():
    with pytest.raises(ValueError, match="'Sometimes'"):
        rk.VectorGymEnv("CartPole-v1", 2, autoreset_mode="Sometimes")


def test_actions_of_the_wrong_batch_shape_name_the_expected_shape():
    env = rk.VectorGymEnv("CartPole-v1", 3, seed=0)
    env.reset()
    with pytest.raises(ValueError, match=r"shape \(3,\).*got shape \(2,\)"):
        env.act([0, 1])
    with pytest.raises(ValueError, match=r"shape \(3,\).*got shape \(\)"):
        env.act(1)
    env.close()


def test_ray_not_installed_names_the_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match="pip install ray"):
        rk.VectorGymEnv("CartPole-v1", 2, backend="ray")


def test_ray_options_are_refused_on_other_backends():
    with pytest.raises(TypeError, match="n_actors"):
        rk.VectorGymEnv("CartPole-v1", 2, n_actors=2)


class FailingEnv(gym.Env):
    """CartPole-like spaces; raises at the 5th step of its first episode when ``fail``."""

    def __init__(self, fail: bool) -> None:
        self.fail = fail
        self.action_space = gym.spaces.Discrete(2)
        self.observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        if self.fail and self.t == 5:
            raise ZeroDivisionError("boom at step 5")
        return np.zeros(2, np.float32), 0.0, False, False, {}


def _failing_fns() -> list:
    return [lambda: FailingEnv(False), lambda: FailingEnv(True), lambda: FailingEnv(False)]


@pytest.mark.timeout(120)
@pytest.mark.filterwarnings("ignore:.*(Worker|Traceback|Raising the last).*:UserWarning")
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failing_sub_env_is_named_with_its_seed_and_workers_shut_down(backend, request):
    if backend == "ray":
        request.getfixturevalue("ray_session")
    env = rk.VectorGymEnv(_failing_fns(), backend=backend, seed=4)
    seed = env.seeds[1]
    with pytest.raises(SubEnvError, match=rf"sub-env 1 \(seed {seed}\).*boom at step 5"):
        rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(100))
    assert env._closed
    if backend == "subprocess":
        assert all(not p.is_alive() for p in env._group.vec.processes)
    env.close()  # closing again is harmless


@pytest.mark.parametrize(("seed", "error"), [(-1, ValueError), ("a", TypeError), (2.0, TypeError)])
def test_a_bad_seed_is_refused_naming_the_env(seed, error):
    expected = f"VectorGymEnv: seed must be a non-negative integer, got {seed!r}"
    with pytest.raises(error, match=expected):
        rk.VectorGymEnv("CartPole-v1", 2, seed=seed)


def _space_samples(space: gym.Space, rng_state: dict, n: int = 12) -> list:
    """What ``space.sample()`` gives ``n`` times from the saved generator ``rng_state``."""
    own = copy.deepcopy(space)
    set_generator_state(own.np_random, rng_state)
    return [own.sample().tolist() for _ in range(n)]


def _sub_env_space_samples(env: rk.VectorGymEnv) -> list:
    """Per sub-env: its action and observation spaces' next samples (from its saved state,
    read from the workers on the subprocess and Ray backends)."""
    return [
        [_space_samples(space, rng) for space, rng in
         zip((env.action_space, env.state_space), sub_env["spaces"], strict=True)]
        for sub_env in env.state_dict()["sub_envs"]
    ]


def test_sub_env_spaces_are_seeded_from_the_seed_alike_on_every_backend(request):
    seeds = sub_env_seeds(7, 3)
    singles = [rk.GymEnv("CartPole-v1", seed=s, **KWARGS) for s in seeds]
    expected = [
        [[s.action_space.sample().tolist() for _ in range(12)],
         [s.state_space.sample().tolist() for _ in range(12)]]
        for s in singles
    ]
    assert expected[0] != expected[1]  # each sub-env its own generators
    for backend in BACKENDS:
        for _ in range(2):  # two envs built with the same seed
            env = make(backend, request, seed=7)
            try:
                assert _sub_env_space_samples(env) == expected, backend
                assert [env.action_space.sample() for _ in range(12)] == expected[0][0], backend
            finally:
                env.close()


def test_sync_sub_envs_own_spaces_sample_from_the_seed():
    samples = []
    for _ in range(2):
        env = rk.VectorGymEnv("CartPole-v1", 3, seed=7)
        sub_envs = env._group.vec.envs
        samples.append([[e.action_space.sample() for _ in range(12)] for e in sub_envs])
        assert env.action_space is not sub_envs[0].action_space  # a copy, as on other backends
        env.close()
    assert samples[0] == samples[1] and samples[0][0] != samples[0][1]

