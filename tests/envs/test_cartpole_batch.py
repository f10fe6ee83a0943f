"""CartPoleBatch (rlkit/envs/cartpole_batch.py): the CartPoles of several vector envs stepped as
one numpy batch give, bit for bit, what stepping them one by one gives, resets, time limits and
checkpoints included; it stands aside wherever that equality is not certain."""

from __future__ import annotations

import numpy as np
import pytest

import rlkit as rk
from rlkit.envs import cartpole_batch
from rlkit.envs.cartpole_batch import CartPoleBatch

FIELDS = ("state", "final_state", "reward", "is_terminated", "is_truncated", "done")


def _blocks(batched: bool, **kwargs) -> rk.SeedBlocksEnv:
    envs = [rk.VectorGymEnv("CartPole-v1", 3, seed=s, **kwargs) for s in (7, 8)]
    env = rk.SeedBlocksEnv(envs, [7, 8])
    assert env._batch is not None
    if not batched:
        env._batch = None  # the blocks stepped one sub-env at a time, as before
    return env


def _assert_same(a: rk.SeedBlocksEnv, b: rk.SeedBlocksEnv, step: int) -> None:
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), f"{name} at step {step}"
    for block_a, block_b in zip(a.envs, b.envs, strict=True):
        for name in FIELDS:
            assert np.array_equal(getattr(block_a, name), getattr(block_b, name)), name
        assert block_a.steps == block_b.steps


def _step_both(a, b, actions, start: int = 0) -> tuple[int, int, int]:
    """Step both envs; (batched steps, terminations, truncations)."""
    batched = terminations = truncations = 0
    for t, action in enumerate(actions):
        batched += a._batch.ready()
        a.act(action)
        b.act(action)
        _assert_same(a, b, start + t)
        terminations += int(a.is_terminated.sum())
        truncations += int(a.is_truncated.sum())
    return batched, terminations, truncations


def test_batched_steps_equal_one_by_one_steps_with_resets_and_time_limits():
    """Random actions (short episodes: terminations) and a time limit of 25 steps
    (truncations); every step's arrays and every sub-env's saved state equal."""
    a, b = _blocks(True, max_episode_steps=25), _blocks(False, max_episode_steps=25)
    a.reset()
    b.reset()
    actions = np.random.default_rng(0).integers(0, 2, (600, 6))
    batched, terminations, truncations = _step_both(a, b, actions)
    assert batched == 598  # all but the first two (gymnasium's one-time checks)
    assert terminations > 50 and truncations > 10, (terminations, truncations)
    assert _saved(a) == _saved(b)
    for env in (a, b):
        env.close()


def test_balanced_episodes_are_truncated_as_one_by_one():
    """A policy that balances the pole: episodes reach CartPole-v1's 500-step limit."""
    a, b = _blocks(True), _blocks(False)
    a.reset()
    b.reset()
    truncations = 0
    for t in range(1200):
        action = (a.state[:, 2] + 0.3 * a.state[:, 3] > 0).astype(np.int64)
        truncations += _step_both(a, b, [action], t)[2]
    assert truncations >= 6
    assert _saved(a) == _saved(b)


def test_a_restored_checkpoint_continues_batched_as_one_by_one():
    a, b = _blocks(True), _blocks(False)
    a.reset()
    b.reset()
    actions = np.random.default_rng(1).integers(0, 2, (200, 6))
    _step_both(a, b, actions[:100])
    saved = a.state_dict()
    c = _blocks(True)
    c.load_state_dict(saved)
    assert c._batch.ready()
    _step_both(c, b, actions[100:], 100)


def test_it_stands_aside_where_equality_is_not_certain():
    assert CartPoleBatch.of([rk.VectorGymEnv("Acrobot-v1", 2, seed=0)]) is None
    for kwargs in (
        {"sutton_barto_reward": True},
        {"render_mode": "rgb_array"},
        {"autoreset_mode": "NextStep"},
        {"backend": "subprocess"},
    ):
        env = rk.VectorGymEnv("CartPole-v1", 2, seed=0, **kwargs)
        assert CartPoleBatch.of([rk.VectorGymEnv("CartPole-v1", 2, seed=1), env]) is None, kwargs
        env.close()
    assert CartPoleBatch.of([rk.GymEnv("CartPole-v1", seed=0)]) is None
    # actions a CartPole refuses: stepped one by one, which raises naming the sub-env
    env = _blocks(True)
    env.reset()
    env.act([0] * 6)
    env.act([1] * 6)
    assert env._batch.ready() and env._batch.step(np.array([0, 1, 2, 0, 1, 0])) is None
    with pytest.raises(rk.envs.vector.SubEnvError, match="sub-env 2"):
        env.act([0, 1, 2, 0, 1, 0])


def _saved(env: rk.SeedBlocksEnv) -> str:
    """The saved state of every block and sub-env, without the spaces' generators (unseeded:
    each env instance draws its own)."""
    state = env.state_dict()
    for block in state["envs"]:
        for sub in block["sub_envs"]:
            sub.pop("spaces")
    return repr(state)


def test_it_stands_aside_when_the_batched_arithmetic_differs_from_gymnasiums(monkeypatch):
    """CartPoleBatch.of checks the batched dynamics against CartPoleEnv.step on this machine
    (numpy's element-wise functions, gymnasium's version) before batching."""
    exact = cartpole_batch.cartpole_dynamics

    def off_by_one_ulp(p, states, actions):
        new, terminated = exact(p, states, actions)
        return np.nextafter(new, np.inf), terminated

    monkeypatch.setattr(cartpole_batch, "cartpole_dynamics", off_by_one_ulp)
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    assert CartPoleBatch.of([env]) is None
    monkeypatch.setattr(cartpole_batch, "cartpole_dynamics", exact)
    assert CartPoleBatch.of([env]) is not None
