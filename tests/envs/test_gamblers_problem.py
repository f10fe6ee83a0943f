import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.envs.toy.gamblers_problem import GamblersProblemEnv

ENV_ID = "rlkit/GamblersProblem-v0"


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"goal": 2}, {"start_capital": 50}],
)
def test_passes_gymnasium_env_checker(kwargs, check_both):
    check_both(ENV_ID, **kwargs)


def test_public_name_and_spaces():
    assert rk.GamblersProblemEnv is GamblersProblemEnv
    env = gym.make(ENV_ID).unwrapped
    assert isinstance(env, GamblersProblemEnv)
    assert env.observation_space == gym.spaces.Discrete(101)
    assert env.action_space == gym.spaces.Discrete(51)
    assert env.n_states == 101 and env.n_actions == 51
    assert (env.p_heads, env.goal, env.strict) == (0.4, 100, False)
    assert env.terminal_states == (0, 100)
    odd = GamblersProblemEnv(goal=7)
    assert odd.observation_space.n == 8 and odd.action_space.n == 4


@pytest.mark.parametrize(
    ("state", "legal"),
    [(0, [0]), (100, [0]), (1, [1]), (99, [1]), (50, list(range(1, 51))), (30, list(range(1, 31))),
     (70, list(range(1, 31)))],
)  # fmt: skip
def test_legal_stakes(state, legal):
    env = GamblersProblemEnv()
    mask = env.action_mask(state)
    assert mask.dtype == np.int8 and mask.shape == (51,)
    assert np.flatnonzero(mask).tolist() == legal
    assert sorted(env.P[state]) == legal


def test_mask_in_info_follows_the_capital():
    env = GamblersProblemEnv()
    obs, info = env.reset(seed=0, options={"capital": 10})
    assert obs == 10 and np.flatnonzero(info["action_mask"]).tolist() == list(range(1, 11))
    assert env.action_mask().tolist() == info["action_mask"].tolist()
    obs, _, _, _, info = env.step(10)
    assert obs in (0, 20)
    assert info["action_mask"].tolist() == env.action_mask(obs).tolist()
    info["action_mask"][:] = 0  # fresh arrays
    assert env.action_mask(obs).sum() > 0


def test_model_of_example_4_3():
    env = GamblersProblemEnv(p_heads=0.25)
    assert env.P[30][10] == [(0.25, 40, 0.0, False), (0.75, 20, 0.0, False)]
    assert env.P[60][40] == [(0.25, 100, 1.0, True), (0.75, 20, 0.0, False)]
    assert env.P[10][10] == [(0.25, 20, 0.0, False), (0.75, 0, 0.0, True)]
    assert env.P[50][50] == [(0.25, 100, 1.0, True), (0.75, 0, 0.0, True)]
    assert env.P[0] == {0: [(1.0, 0, 0.0, True)]}
    assert env.P[100] == {0: [(1.0, 100, 0.0, True)]}
    for s, row in env.P.items():
        for transitions in row.values():
            assert sum(p for p, *_ in transitions) == 1.0
            for _, nxt, reward, terminated in transitions:
                assert reward == (1.0 if nxt == 100 and s != 100 else 0.0)
                assert terminated == (nxt in (0, 100))


def value_iteration(env, theta=1e-12):
    """Undiscounted value iteration with plain numpy over the legal stakes of P."""
    n, m = env.n_states, env.n_actions
    p = np.zeros((n, m, n))
    r = np.zeros((n, m))
    legal = np.zeros((n, m), dtype=bool)
    for s, row in env.P.items():
        for a, transitions in row.items():
            legal[s, a] = True
            for prob, nxt, reward, terminated in transitions:
                r[s, a] += prob * reward
                if not terminated:
                    p[s, a, nxt] += prob
    v = np.zeros(n)
    for _ in range(10_000):
        q = np.where(legal, r + p @ v, -np.inf)
        new = q.max(axis=1)
        if np.max(np.abs(new - v)) < theta:
            return new, q
        v = new
    raise AssertionError("value iteration did not converge")


def test_value_iteration_on_the_model_gives_the_book_values():
    v, q = value_iteration(GamblersProblemEnv(p_heads=0.4))
    assert v[50] == pytest.approx(0.4, abs=1e-9)
    assert v[25] == pytest.approx(0.16, abs=1e-9)
    assert v[75] == pytest.approx(0.4 + 0.6 * 0.4, abs=1e-9)
    assert v[0] == v[100] == 0.0  # terminal
    assert np.all(np.diff(v[:100]) > 0)  # more capital, better odds
    # bold play at 50 and 25 is optimal (Figure 4.3)
    assert np.flatnonzero(q[50] > q[50].max() - 1e-9).tolist() == [50]
    assert 25 in np.flatnonzero(q[25] > q[25].max() - 1e-9).tolist()


def test_betting_everything_at_50_wins_with_p_heads():
    env = GamblersProblemEnv()
    env.reset(seed=0)
    n = 4000
    wins = 0
    for _ in range(n):
        env.reset(options={"capital": 50})
        obs, reward, terminated, truncated, _ = env.step(50)
        assert terminated and not truncated and obs in (0, 100)
        assert reward == (1.0 if obs == 100 else 0.0)
        wins += obs == 100
    assert abs(wins / n - 0.4) < 4 * np.sqrt(0.24 / n)


def test_start_capital():
    env = GamblersProblemEnv(goal=10)
    starts = {env.reset(seed=seed)[0] for seed in range(200)}
    assert starts == set(range(1, 10))  # uniformly random in 1..goal-1 by default
    assert GamblersProblemEnv().reset(seed=3)[0] == GamblersProblemEnv().reset(seed=3)[0]
    fixed = GamblersProblemEnv(start_capital=20)
    assert fixed.reset(seed=0)[0] == 20
    assert fixed.reset(options={"capital": 99})[0] == 99
    assert fixed.reset()[0] == 20


@pytest.mark.parametrize("capital", [0, 100, -3, 12.0])
def test_bad_start_capital(capital):
    message = rf"start_capital must be a capital in 1..99, got {capital}"
    with pytest.raises(ValueError, match=message):
        GamblersProblemEnv(start_capital=capital)
    with pytest.raises(ValueError, match=r'options\["capital"\] must be a capital in 1..99'):
        GamblersProblemEnv().reset(options={"capital": capital})


@pytest.mark.parametrize(("capital", "stake"), [(30, 0), (30, 31), (70, 31), (1, 2)])
def test_illegal_stakes_raise_with_the_value(capital, stake):
    env = GamblersProblemEnv(strict=True)
    env.reset(seed=0, options={"capital": capital})
    with pytest.raises(ValueError, match=rf"stake {stake} is illegal with capital {capital}"):
        env.step(stake)
    assert env.s == capital


@pytest.mark.parametrize("stake", [51, -1, 1.5, None, True])
def test_stakes_outside_the_space_raise(stake):
    env = GamblersProblemEnv(strict=False)
    env.reset(seed=0)
    with pytest.raises(rk.InvalidActionError, match=rf"stake {stake!r} is outside"):
        env.step(stake)


def test_terminal_capitals_allow_only_the_zero_stake():
    env = GamblersProblemEnv(p_heads=1.0, strict=True)
    env.reset(seed=0, options={"capital": 50})
    assert env.step(50)[:3] == (100, 1.0, True)
    assert env.step(0)[:3] == (100, 0.0, True)  # a no-op
    with pytest.raises(rk.InvalidActionError, match="stake 1 is illegal with capital 100"):
        env.step(1)


def test_not_strict_clips_the_stake():
    env = GamblersProblemEnv(p_heads=0.0, strict=False)
    env.reset(seed=0, options={"capital": 30})
    assert env.step(45)[0] == 0  # clipped to 30, lost
    env.reset(options={"capital": 30})
    assert env.step(0)[0] == 29  # clipped to 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"p_heads": 1.5}, r"GamblersProblemEnv: p_heads must be a number in \[0, 1\], got 1.5"),
        ({"p_heads": "x"}, r"p_heads must be a number in \[0, 1\], got 'x'"),
        ({"goal": 1}, "goal must be an integer >= 2, got 1"),
        ({"render_mode": "human"}, "render_mode must be None or one of"),
    ],
)
def test_bad_construction_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GamblersProblemEnv(**kwargs)


def test_ansi_render():
    env = gym.make(ENV_ID, render_mode="ansi", p_heads=1.0)
    env.reset(seed=0, options={"capital": 40})
    assert env.render() == "capital 40/100\n"
    env.step(10)
    assert env.render() == "capital 50/100  (staked 10)\n"


def test_state_dict_round_trip():
    env = GamblersProblemEnv()
    env.reset(seed=9, options={"capital": 50})
    env.step(1)
    other = GamblersProblemEnv()
    other.load_state_dict(env.state_dict())
    assert other.s == env.s
    for _ in range(10):
        if env.s in (0, 100):
            break
        mine, theirs = other.step(1), env.step(1)
        assert mine[:4] == theirs[:4]
    assert other.reset()[0] == env.reset()[0]  # same generator: same random start
    with pytest.raises(ValueError, match="capital 101 is outside 0..100"):
        other.load_state_dict({**env.state_dict(), "s": 101})
