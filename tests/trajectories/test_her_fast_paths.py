"""The HER DQN path's fast paths (issue 30's speed work) give what the general paths give:
HER's per-step episode bookkeeping against one bulk sync, replay rows gathered with ``take``,
CombinedEncoder's single concatenation and direct key-encoder calls (hooks still run), and the
value-based batches' numpy conversion."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.approximators.encoders import CombinedEncoder
from rlkit.learners.value_based.common import _tensor
from rlkit.trajectories.structured import StructuredArray

BOX = gym.spaces.Box(-1e6, 1e6, (1,), np.float32)
SPACE = gym.spaces.Dict({"observation": BOX, "achieved_goal": BOX, "desired_goal": BOX})


def reward_fn(achieved, desired, info):
    return np.where(np.any(np.asarray(achieved) != np.asarray(desired), axis=-1), -1.0, 0.0)


def her(seed: int = 0) -> rk.HER:
    return rk.HER("future", 4, batch_size=64, seed=seed, compute_reward=reward_fn)


def rows(codes, n_envs: int):
    """A step's observations for ``n_envs`` sub-envs (one env: unbatched)."""
    value = {k: np.array([[c] for c in codes], np.float32) for k in SPACE.spaces}
    return value if n_envs > 1 else {k: v[0] for k, v in value.items()}


def fill(t, n_envs: int, steps: int, seed: int, each_step=None) -> None:
    """Random episodes (lengths 1-6, ending terminal or truncated) in every sub-env; calls
    ``each_step(t)`` after each step."""
    rng = np.random.default_rng(seed)
    left = rng.integers(1, 7, n_envs)
    for step in range(steps):
        codes = [1000.0 * c + step for c in range(n_envs)]
        ends = left == 1
        kinds = rng.integers(0, 2, n_envs).astype(bool)
        terminal, truncated = ends & kinds, ends & ~kinds
        if n_envs == 1:
            t.append(rows(codes, 1), 0, -1.0, bool(terminal[0]), bool(truncated[0]),
                     rows(codes, 1))  # fmt: skip
        else:
            t.begin_transitions(rows(codes, n_envs), np.zeros(n_envs, np.int64))
            t.end_transitions(np.full(n_envs, -1.0), terminal, truncated, rows(codes, n_envs))
        left = np.where(ends, rng.integers(1, 7, n_envs), left - 1)
        if each_step is not None:
            each_step(t)


@pytest.mark.parametrize("n_envs", [1, 3])
def test_per_step_bookkeeping_equals_one_sync(n_envs):
    t = rk.CircularArraySARTTrajectory(1000, SPACE, gym.spaces.Discrete(2))
    stepped, bulk = her(), her()
    fill(t, n_envs, 120, seed=n_envs, each_step=stepped._sync)
    bulk._sync(t)
    for key in ("ep_start", "ep_end", "open_start", "last"):
        np.testing.assert_array_equal(getattr(stepped, key), getattr(bulk, key), err_msg=key)
    assert stepped.synced == bulk.synced == 120 * n_envs


class GenericHER(rk.HER):
    """HER whose per-step bookkeeping is the general (array) one."""

    def _take_one(self, t, c, g, n):
        self._take(t, c, np.array([g], np.int64), n)


@pytest.mark.parametrize("n_envs", [1, 2])
def test_per_step_bookkeeping_equals_the_general_one_after_overwrites(n_envs):
    t = rk.CircularArraySARTTrajectory(30, SPACE, gym.spaces.Discrete(2))
    fast = her(seed=5)
    general = GenericHER("future", 4, batch_size=64, seed=5, compute_reward=reward_fn)
    fill(t, n_envs, 80, seed=7, each_step=lambda t: (fast._sync(t), general._sync(t)))
    for key in ("ep_start", "ep_end", "open_start", "last"):
        np.testing.assert_array_equal(getattr(fast, key), getattr(general, key), err_msg=key)
    a, b = fast.sample(t, n_batches=3), general.sample(t, n_batches=3)
    for key in ("state", "next_state"):
        for sub in SPACE.spaces:
            np.testing.assert_array_equal(a[key][sub], b[key][sub])
    np.testing.assert_array_equal(a["reward"], b["reward"])


def test_structured_rows_by_index_array_are_the_fancy_indexed_rows():
    store = StructuredArray.zeros(
        gym.spaces.Dict({"a": gym.spaces.MultiBinary(3), "b": gym.spaces.Dict({"c": BOX})}), (6,)
    )
    store.arrays["a"][:] = np.arange(18).reshape(6, 3)
    store.arrays["b"].arrays["c"][:] = np.arange(6).reshape(6, 1)
    index = np.array([5, 0, 5, -1])
    got = store[index]
    np.testing.assert_array_equal(got["a"], store.arrays["a"][index])
    np.testing.assert_array_equal(got["b"]["c"], store.arrays["b"].arrays["c"][index])
    with pytest.raises(IndexError, match="out of bounds"):
        store[np.array([6])]


def space_of(dtype_box: type) -> gym.spaces.Dict:
    return gym.spaces.Dict({"bits": gym.spaces.MultiBinary((2, 2)),
                            "pos": gym.spaces.Box(-1, 1, (3,), dtype_box)})  # fmt: skip


def reference(obs: dict) -> torch.Tensor:
    """The per-key encoding: each key flattened and converted to float32, concatenated."""
    n = obs["bits"].shape[0]
    return torch.cat([obs[k].reshape(n, -1).to(torch.float32) for k in ("bits", "pos")], -1)


@pytest.mark.parametrize("dtypes", [(torch.float64, torch.float64), (torch.int8, torch.float64),
                                    (torch.int8, torch.int8)])  # fmt: skip
def test_combined_encoder_gives_the_per_key_numbers(dtypes):
    gen = torch.Generator().manual_seed(0)
    obs = {
        "bits": torch.randint(0, 2, (5, 2, 2), generator=gen).to(dtypes[0]),
        "pos": (torch.rand(5, 3, generator=gen, dtype=torch.float64) * 3).to(dtypes[1]),
    }
    enc = CombinedEncoder(space_of(np.float64))
    out = enc(obs)
    assert out.dtype == torch.float32
    assert torch.equal(out, reference(obs))


def test_combined_encoder_runs_key_encoders_hooks():
    enc = CombinedEncoder(space_of(np.float32))
    obs = {"bits": torch.ones(2, 2, 2), "pos": torch.zeros(2, 3)}
    seen = []
    handle = enc.encoders["pos"].register_forward_hook(lambda m, i, o: seen.append("pos"))
    assert torch.equal(enc(obs), reference(obs))
    assert seen == ["pos"]
    handle.remove()
    handle = torch.nn.modules.module.register_module_forward_hook(
        lambda m, i, o: seen.append(type(m).__name__)
    )
    try:
        enc(obs)
    finally:
        handle.remove()
    assert seen.count("MultiBinaryEncoder") == 1 and seen.count("FlattenEncoder") == 1
    enc(obs)
    assert len(seen) == 4  # no hook left: nothing more recorded


@pytest.mark.parametrize("array", [
    np.array([[1, -3], [0, 127]], np.int8),
    np.array([True, False, True]),
    np.array([1e-8, 3.141592653589793, -2.5e38, 1e30]),
    np.arange(6, dtype=np.int64).reshape(2, 3)[:, ::-1],
])  # fmt: skip
def test_value_batch_conversion_gives_torchs_numbers(array):
    got = _tensor(array, torch.float32, torch.device("cpu"))
    expected = torch.as_tensor(np.ascontiguousarray(array).astype(array.dtype))
    expected = expected.to(torch.uint8 if array.dtype == np.bool_ else expected.dtype)
    assert torch.equal(got, expected.to(torch.float32))
    assert got.dtype == torch.float32
