import numpy as np
import pytest

import rlkit as rk
from rlkit.trajectories.circular import CircularArraySARTTrajectory
from rlkit.trajectories.prioritized import PrioritizedCircularArraySARTTrajectory
from rlkit.trajectories.samplers import BatchSampler, NStepBatchSampler

KEYS = {"state", "action", "reward", "terminal", "next_state", "n", "indices"}


def episodes(capacity: int, flags: list[str], rewards=None) -> CircularArraySARTTrajectory:
    """Transition ``i`` has state ``i``, next state ``i + 100``, reward ``rewards[i]`` (default
    ``i + 1``) and flags from ``flags[i]``: '.' none, 'T' terminal, 'C' truncated (cut)."""
    t = CircularArraySARTTrajectory(capacity, state_shape=())
    for i, flag in enumerate(flags):
        reward = i + 1.0 if rewards is None else rewards[i]
        t.append(i, i % 3, reward, flag == "T", flag == "C", i + 100)
    return t


def all_windows(t, n: int, gamma: float, draws: int = 400) -> dict[int, tuple]:
    """index -> (reward, n, terminal, next_state) for every stored slot (sampled until seen)."""
    sampler = NStepBatchSampler(len(t), n, gamma, seed=0)
    seen: dict[int, tuple] = {}
    for _ in range(draws):
        b = sampler.sample(t)
        for row in zip(
            *(b[k].tolist() for k in ("indices", "reward", "n", "terminal", "next_state")),
            strict=True,
        ):
            seen[row[0]] = row[1:]
    assert sorted(seen) == sorted(t.ordered_indices().tolist())
    return seen


def reference_nstep(t, slot: int, n: int, gamma: float) -> tuple:
    """The n-step window from ``slot``, walking the stored transitions in order."""
    order = t.ordered_indices().tolist()
    position = order.index(slot)
    total, m = 0.0, 0
    for k in range(n):
        if position + k >= len(order):
            break
        i = order[position + k]
        total += gamma**k * float(t.reward[i])
        m += 1
        if t.terminal[i] or t.truncated[i]:
            break
    last = order[position + m - 1]
    return total, m, bool(t.terminal[last]), float(t.next_state[last])


# ---- BatchSampler ----
def test_batch_keys_shapes_and_values():
    env = rk.GymEnv("CartPole-v1", seed=0)
    t = CircularArraySARTTrajectory(500, env.state_space, env.action_space)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(200))
    batch = BatchSampler(64, seed=0).sample(t)
    assert set(batch) == KEYS
    assert batch["state"].shape == (64, 4) and batch["state"].dtype == np.float32
    assert batch["next_state"].shape == (64, 4) and batch["action"].dtype == np.int64
    assert batch["reward"].dtype == np.float32 and batch["terminal"].dtype == bool
    assert batch["n"].dtype == np.int64 and (batch["n"] == 1).all()
    i = batch["indices"]
    assert ((0 <= i) & (i < 200)).all()
    for key in ("state", "action", "reward", "terminal", "next_state"):
        np.testing.assert_array_equal(batch[key], getattr(t, key)[i])
    batch["state"][:] = 99.0  # a batch is a copy
    assert not (t.state == 99.0).any()


def test_uniform_with_replacement():
    t = episodes(8, list("." * 13))  # wrapped around: slots hold transitions 8..12 and 5..7
    sampler = BatchSampler(8, seed=1)
    counts = np.zeros(8)
    draws = 2000
    for _ in range(draws):
        counts += np.bincount(sampler.sample(t)["indices"], minlength=8)
    # each slot is drawn with probability 1/8: 2000 counts, binomial std ~ 33.5 per 16000 draws
    std = np.sqrt(draws * 8 * (1 / 8) * (7 / 8))
    assert np.abs(counts - draws).max() < 4.5 * std
    assert any(len(set(sampler.sample(t)["indices"].tolist())) < 8 for _ in range(20))


def test_too_few_transitions():
    t = episodes(100, list("." * 10))
    with pytest.raises(
        ValueError,
        match="CircularArraySARTTrajectory holds 10 transitions, fewer than batch_size 64",
    ):
        BatchSampler(64).sample(t)
    with pytest.raises(ValueError, match="holds 0 transitions, fewer than batch_size 1"):
        NStepBatchSampler(1, 3, 0.9).sample(CircularArraySARTTrajectory(5, state_shape=()))
    assert BatchSampler(10, seed=0).sample(t)["state"].shape == (10,)


@pytest.mark.parametrize("batch_size", [0, -1, 2.0, True, None])
def test_bad_batch_size(batch_size):
    with pytest.raises(ValueError, match=r"BatchSampler: batch_size must be a positive integer"):
        BatchSampler(batch_size)
    with pytest.raises(ValueError, match=r"NStepBatchSampler: batch_size must be a positive"):
        NStepBatchSampler(batch_size, 3, 0.9)


def test_bad_n_and_gamma():
    with pytest.raises(ValueError, match=r"NStepBatchSampler: n must be a positive integer, got 0"):
        NStepBatchSampler(32, 0, 0.9)
    for gamma in (-0.1, 1.5, float("nan"), "0.9", None):
        message = r"NStepBatchSampler: gamma must be a number in \[0, 1\], got"
        with pytest.raises(ValueError, match=message):
            NStepBatchSampler(32, 3, gamma)


def test_same_seed_same_batches():
    t = episodes(50, list(".....T" * 8))
    for make in (
        lambda s: BatchSampler(16, seed=s),
        lambda s: NStepBatchSampler(16, 3, 0.9, seed=s),
    ):
        a, b, c = make(7), make(7), make(8)
        for _ in range(3):
            ba, bb, bc = a.sample(t), b.sample(t), c.sample(t)
            for key in ba:
                np.testing.assert_array_equal(ba[key], bb[key])
        assert not np.array_equal(ba["indices"], bc["indices"])
    generator = np.random.default_rng(5)
    np.testing.assert_array_equal(
        BatchSampler(16, seed=generator).sample(t)["indices"],
        BatchSampler(16, seed=np.random.default_rng(5)).sample(t)["indices"],
    )


# ---- NStepBatchSampler on hand-computed episodes ----
def test_n_step_returns_with_termination():
    t = episodes(10, list("...T"), rewards=[1.0, 2.0, 3.0, 4.0])
    got = all_windows(t, 3, 0.5)
    assert got[0] == (1 + 0.5 * 2 + 0.25 * 3, 3, False, 102.0)
    assert got[1] == (2 + 0.5 * 3 + 0.25 * 4, 3, True, 103.0)
    assert got[2] == (3 + 0.5 * 4, 2, True, 103.0)
    assert got[3] == (4.0, 1, True, 103.0)


def test_n_step_returns_with_truncation_bootstrap():
    t = episodes(10, list("..C."), rewards=[1.0, 2.0, 3.0, 4.0])
    got = all_windows(t, 3, 0.5)
    assert got[0] == (1 + 0.5 * 2 + 0.25 * 3, 3, False, 102.0)
    assert got[1] == (2 + 0.5 * 3, 2, False, 102.0)  # cut: bootstrap from next_state of 2
    assert got[2] == (3.0, 1, False, 102.0)
    assert got[3] == (4.0, 1, False, 103.0)  # the most recent transition: cut at the head


def test_n_step_windows_stop_at_the_write_head():
    t = episodes(10, list("T...."))
    got = all_windows(t, 4, 1.0)
    assert got[0] == (1.0, 1, True, 100.0)
    assert got[1] == (2 + 3 + 4 + 5.0, 4, False, 104.0)
    assert got[2] == (3 + 4 + 5.0, 3, False, 104.0)  # never into unwritten slots 5..9
    assert got[4] == (5.0, 1, False, 104.0)


def test_n_step_windows_across_the_end_of_the_arrays():
    t = episodes(5, list("..T....."))  # 8 transitions in 5 slots: slots hold 5, 6, 7, 3, 4
    np.testing.assert_array_equal(t.state, [5, 6, 7, 3, 4])
    got = all_windows(t, 3, 0.5)
    # slot 3 (transition 3): 4 + 0.5 * 5 + 0.25 * 6 over slots 3, 4, 0
    assert got[3] == (4 + 0.5 * 5 + 0.25 * 6, 3, False, 105.0)
    assert got[4] == (5 + 0.5 * 6 + 0.25 * 7, 3, False, 106.0)
    assert got[0] == (6 + 0.5 * 7 + 0.25 * 8, 3, False, 107.0)
    assert got[1] == (7 + 0.5 * 8, 2, False, 107.0)  # slot 2 is the newest: never wraps to 3
    assert got[2] == (8.0, 1, False, 107.0)


def test_n_step_windows_skip_the_slot_being_rewritten():
    t = episodes(5, list("......."))  # head at slot 2, the oldest transition
    t.begin_transition(7, 0)  # PreAct overwrites slot 2
    got = all_windows(t, 5, 1.0)
    assert 2 not in got
    assert got[3] == (4 + 5 + 6 + 7.0, 4, False, 106.0)  # slots 3, 4, 0, 1
    assert got[1] == (7.0, 1, False, 106.0)


def test_gamma_zero_and_one():
    t = episodes(10, list("....T"))
    assert all_windows(t, 3, 0.0)[1] == (2.0, 3, False, 103.0)
    assert all_windows(t, 3, 1.0)[1] == (2 + 3 + 4.0, 3, False, 103.0)


@pytest.mark.parametrize("case", range(12))
def test_n_step_matches_a_reference_on_random_buffers(case):
    rng = np.random.default_rng(case)
    capacity = int(rng.integers(3, 12))
    count = int(rng.integers(3, 3 * capacity))
    flags = rng.choice(list(".....TC"), size=count).tolist()
    t = episodes(capacity, flags, rewards=rng.normal(size=count).round(3).tolist())
    if rng.random() < 0.5:
        t.begin_transition(count, 0)
    n, gamma = int(rng.integers(1, 6)), float(rng.choice([0.0, 0.5, 0.9, 1.0]))
    for slot, (reward, m, terminal, next_state) in all_windows(t, n, gamma).items():
        ref = reference_nstep(t, slot, n, gamma)
        assert reward == pytest.approx(ref[0], rel=1e-6, abs=1e-6)
        assert (m, terminal, next_state) == ref[1:]


def test_one_step_equals_batch_sampler():
    t = episodes(20, list("..T...C..." * 3))
    a, b = BatchSampler(16, seed=3).sample(t), NStepBatchSampler(16, 1, 0.99, seed=3).sample(t)
    assert set(a) == set(b) == KEYS
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
        assert a[key].dtype == b[key].dtype


def test_n_step_batch_from_a_run():
    env = rk.GymEnv("CartPole-v1", seed=2, max_episode_steps=25)
    t = CircularArraySARTTrajectory(300, env.state_space, env.action_space)
    rk.run(rk.Agent(rk.RandomPolicy(seed=2), t), env, rk.StopAfterNSteps(500))
    batch = NStepBatchSampler(64, 3, 0.99, seed=0).sample(t)
    assert set(batch) == KEYS
    assert batch["state"].shape == batch["next_state"].shape == (64, 4)
    assert batch["reward"].dtype == np.float32 and batch["n"].dtype.kind == "i"
    assert set(batch["n"].tolist()) <= {1, 2, 3} and (batch["n"] == 3).any()
    # CartPole pays 1 per step: the return is the discounted count of steps
    np.testing.assert_allclose(batch["reward"], (1 - 0.99 ** batch["n"]) / (1 - 0.99), rtol=1e-6)


# ---- prioritized trajectories ----
def test_samplers_on_a_prioritized_trajectory_return_weights():
    t = PrioritizedCircularArraySARTTrajectory(50, state_shape=())
    for i in range(30):
        t.append(i, 0, 1.0, i % 7 == 6, False, i + 1)
    for sampler in (BatchSampler(8, seed=0), NStepBatchSampler(8, 3, 0.9, seed=0)):
        batch = sampler.sample(t)
        assert set(batch) == KEYS | {"weights"}
        assert batch["weights"].dtype == np.float32 and batch["weights"].shape == (8,)
        np.testing.assert_array_equal(batch["state"], t.state[batch["indices"]])


# ---- several batches at once ----
@pytest.mark.parametrize("prioritized", [False, True])
@pytest.mark.parametrize("n_step", [False, True])
def test_n_batches_equals_that_many_single_draws(prioritized, n_step):
    cls = PrioritizedCircularArraySARTTrajectory if prioritized else CircularArraySARTTrajectory
    t = cls(30, state_shape=(2,))
    for i in range(45):  # wrapped around
        t.append([i, -i], i % 2, float(i), i % 11 == 10, i % 17 == 16, [i + 1, -i])

    def make():
        return NStepBatchSampler(8, 3, 0.9, seed=5) if n_step else BatchSampler(8, seed=5)

    single, several = make(), make()
    one_by_one = [single.sample(t) for _ in range(4)]
    together = several.sample(t, n_batches=4)
    assert set(together) == set(one_by_one[0])
    for key, value in together.items():
        assert value.shape[0] == 32
        np.testing.assert_array_equal(value, np.concatenate([b[key] for b in one_by_one]))
    # the generators end in the same state: the next draws agree too
    np.testing.assert_array_equal(single.sample(t)["indices"], several.sample(t)["indices"])


@pytest.mark.parametrize("n_batches", [0, -1, 1.5, True])
def test_bad_n_batches(n_batches):
    t = episodes(10, ["."] * 10)
    with pytest.raises(ValueError, match="BatchSampler: n_batches must be a positive integer"):
        BatchSampler(4, seed=0).sample(t, n_batches=n_batches)


# ---- checkpoints ----
@pytest.mark.parametrize("prioritized", [False, True])
@pytest.mark.parametrize("n_step", [False, True])
def test_resumed_buffer_and_sampler_give_identical_samples(prioritized, n_step):
    def make(seed):
        cls = PrioritizedCircularArraySARTTrajectory if prioritized else CircularArraySARTTrajectory
        trajectory = cls(40, state_shape=(2,))
        sampler = NStepBatchSampler(8, 3, 0.9, seed=seed) if n_step else BatchSampler(8, seed=seed)
        return trajectory, sampler

    def go(trajectory, sampler, start, stop):
        batches = []
        for i in range(start, stop):
            trajectory.append([i, -i], i % 2, float(i), i % 11 == 10, i % 17 == 16, [i + 1, -i])
            if len(trajectory) >= 8:
                batch = sampler.sample(trajectory)
                if prioritized:
                    trajectory.update_priorities(batch["indices"], batch["reward"] % 5)
                batches.append(batch)
        return batches

    t, s = make(0)
    go(t, s, 0, 60)
    saved_t, saved_s = t.state_dict(), s.state_dict()
    expected = go(t, s, 60, 100)
    t2, s2 = make(123)
    t2.load_state_dict(saved_t)
    s2.load_state_dict(saved_s)
    got = go(t2, s2, 60, 100)
    assert len(got) == len(expected) == 40
    for a, b in zip(expected, got, strict=True):
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])


def test_sampler_load_state_dict_rejects_other_settings():
    saved = NStepBatchSampler(8, 3, 0.9).state_dict()
    with pytest.raises(
        ValueError, match="NStepBatchSampler: checkpoint has n=3, this sampler has 4"
    ):
        NStepBatchSampler(8, 4, 0.9).load_state_dict(saved)
    with pytest.raises(ValueError, match="checkpoint has batch_size=8, this sampler has 16"):
        NStepBatchSampler(16, 3, 0.9).load_state_dict(saved)
    with pytest.raises(ValueError, match="BatchSampler: checkpoint has batch_size=16"):
        BatchSampler(8).load_state_dict(BatchSampler(16).state_dict())
