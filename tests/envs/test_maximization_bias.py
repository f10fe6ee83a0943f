import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.envs.toy.maximization_bias import MaximizationBiasEnv

ENV_ID = "rlkit/MaximizationBias-v0"
A, B, T = 0, 1, 2
LEFT, RIGHT = 0, 1


@pytest.mark.parametrize("kwargs", [{}, {"n_b_actions": 2}])
def test_passes_gymnasium_env_checker(kwargs, check_both):
    check_both(ENV_ID, **kwargs)


def test_strict_env_rejects_the_random_actions_check_env_steps():
    # gymnasium's checker steps action_space.sample() in A: 8 of the 10 are illegal there,
    # which is why the default is not strict (documented on the class)
    env = gym.make(ENV_ID, strict=True).unwrapped
    env.reset(seed=0)
    with pytest.raises(rk.InvalidActionError):
        env.step(5)


def test_public_name_and_spaces():
    assert rk.MaximizationBiasEnv is MaximizationBiasEnv
    env = gym.make(ENV_ID).unwrapped
    assert isinstance(env, MaximizationBiasEnv)
    assert env.observation_space == gym.spaces.Discrete(3)
    assert env.action_space == gym.spaces.Discrete(10)
    assert env.n_states == 3 and env.n_actions == 10
    assert (env.mean, env.std, env.strict) == (-0.1, 1.0, False)


def test_masks_in_info_and_action_mask():
    env = MaximizationBiasEnv(n_b_actions=4)
    obs, info = env.reset(seed=0)
    assert obs == A
    assert info["action_mask"].dtype == np.int8
    assert info["action_mask"].tolist() == [1, 1, 0, 0]
    assert env.action_mask().tolist() == [1, 1, 0, 0]
    assert env.action_mask(A).tolist() == [1, 1, 0, 0]
    assert env.action_mask(B).tolist() == [1, 1, 1, 1]
    assert env.action_mask(T).tolist() == [1, 1, 1, 1]
    obs, _, _, _, info = env.step(LEFT)
    assert obs == B and info["action_mask"].tolist() == [1, 1, 1, 1]
    assert env.action_mask().tolist() == [1, 1, 1, 1]
    # masks are fresh arrays: changing one changes nothing else
    info["action_mask"][:] = 0
    env.action_mask(A)[:] = 0
    assert env.action_mask(A).tolist() == [1, 1, 0, 0]
    assert env.action_mask(B).tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize("state", [3, -1, 1.0, "A"])
def test_action_mask_of_a_bad_state(state):
    with pytest.raises(ValueError, match="state must be 0 .A., 1 .B. or 2 .terminal., got"):
        MaximizationBiasEnv().action_mask(state)


def test_transitions_of_figure_6_5():
    env = MaximizationBiasEnv()
    env.reset(seed=0)
    assert env.step(RIGHT)[:4] == (T, 0.0, True, False)
    env.reset()
    assert env.step(LEFT)[:4] == (B, 0.0, False, False)
    obs, reward, terminated, truncated, _ = env.step(9)
    assert (obs, terminated, truncated) == (T, True, False)
    assert isinstance(reward, float) and reward != 0.0


def test_rewards_in_b_are_normal_with_the_given_mean_and_std():
    env = MaximizationBiasEnv(mean=-0.1, std=1.0)
    env.reset(seed=1)
    n = 20000
    rewards = np.empty(n)
    for i in range(n):
        env.reset()
        env.step(LEFT)
        rewards[i] = env.step(i % 10)[1]
    assert abs(rewards.mean() + 0.1) < 4 / np.sqrt(n)
    assert abs(rewards.std() - 1.0) < 0.03


def test_zero_std_gives_the_mean_exactly():
    env = MaximizationBiasEnv(mean=0.3, std=0.0)
    env.reset(seed=0)
    env.step(LEFT)
    assert env.step(0)[1] == 0.3


@pytest.mark.parametrize("action", [2, 5, 9])
def test_illegal_actions_in_a_raise_with_the_value(action):
    env = MaximizationBiasEnv(strict=True)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=rf"action {action} is illegal in state A; expected 0"):
        env.step(action)
    assert env.s == A  # nothing happened


@pytest.mark.parametrize("action", [10, -1, 1.5, None, True])
def test_actions_outside_the_space_raise(action):
    env = MaximizationBiasEnv(strict=False)
    env.reset(seed=0)
    with pytest.raises(rk.InvalidActionError, match=rf"action {action!r} is outside"):
        env.step(action)


def test_not_strict_moves_right_on_any_other_action_in_a():
    env = MaximizationBiasEnv(strict=False)
    env.reset(seed=0)
    assert env.step(7)[:3] == (T, 0.0, True)
    assert env.action_mask(A).tolist() == [1, 1] + [0] * 8  # the mask still says so


def test_terminal_state_is_a_no_op():
    env = MaximizationBiasEnv()
    env.reset(seed=0)
    env.step(RIGHT)
    assert env.step(4)[:4] == (T, 0.0, True, False)


def test_model_has_the_legal_actions_and_the_expected_reward():
    env = MaximizationBiasEnv(n_b_actions=6, mean=-0.3)
    assert sorted(env.P) == [A, B, T]
    assert env.P[A] == {LEFT: [(1.0, B, 0.0, False)], RIGHT: [(1.0, T, 0.0, True)]}
    assert env.P[B] == {a: [(1.0, T, -0.3, True)] for a in range(6)}
    assert env.P[T] == {a: [(1.0, T, 0.0, True)] for a in range(6)}
    for s in (A, B, T):
        assert sorted(env.P[s]) == np.flatnonzero(env.action_mask(s)).tolist()


def test_dynamic_programming_on_the_model_gives_the_true_values():
    env = MaximizationBiasEnv()
    v = np.zeros(3)
    for _ in range(3):  # undiscounted optimal values by value iteration over the legal actions
        q = {
            s: {a: sum(p * (r + v[n] * (not d)) for p, n, r, d in ts) for a, ts in env.P[s].items()}
            for s in env.P
        }
        v = np.array([max(q[s].values()) for s in (A, B, T)])
    assert q[A][LEFT] == pytest.approx(-0.1) and q[A][RIGHT] == 0.0
    assert v.tolist() == pytest.approx([0.0, -0.1, 0.0])


def left_share_from_a(double, runs=100, episodes=20, seed=0):
    """% left from A of epsilon-greedy (Double) Q-learning, alpha 0.1, eps 0.1 (Figure 6.5)."""
    rng = np.random.default_rng(seed)
    left = np.zeros(episodes)
    for _ in range(runs):
        env = MaximizationBiasEnv()
        env.reset(seed=int(rng.integers(2**31)))
        q = np.zeros((2, 3, 10))
        for episode in range(episodes):
            s, info = env.reset()
            done = False
            while not done:
                legal = np.flatnonzero(info["action_mask"])
                values = (q[0] + q[1])[s, legal] if double else q[0, s, legal]
                if rng.random() < 0.1:
                    a = int(rng.choice(legal))
                else:
                    a = int(rng.choice(legal[values == values.max()]))
                left[episode] += s == A and a == LEFT
                nxt, reward, done, _, info = env.step(a)
                i = int(rng.integers(2)) if double else 0
                target = reward
                if not done:
                    nxt_legal = np.flatnonzero(info["action_mask"])
                    if double:
                        best = nxt_legal[np.argmax(q[i, nxt, nxt_legal])]
                        target += q[1 - i, nxt, best]
                    else:
                        target += q[0, nxt, nxt_legal].max()
                q[i, s, a] += 0.1 * (target - q[i, s, a])
                s = nxt
    return left / runs


def test_q_learning_shows_the_maximization_bias_of_figure_6_5():
    q_learning = left_share_from_a(double=False)
    double_q = left_share_from_a(double=True)
    # the optimal epsilon-greedy policy goes left 5% of the time; Q-learning's max over the noisy
    # estimates of B makes it go left far more often in the early episodes, Double Q-learning not
    assert q_learning[5:].mean() > 0.6
    assert q_learning[5:].mean() > double_q[5:].mean() + 0.2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_b_actions": 1}, "n_b_actions must be an integer >= 2, got 1"),
        ({"std": -1.0}, "std must be a non-negative finite number, got -1.0"),
        ({"mean": float("nan")}, "mean must be a finite number, got nan"),
        ({"std": "wide"}, "std must be a non-negative finite number, got 'wide'"),
        ({"render_mode": "human"}, "render_mode must be None or one of"),
    ],
)
def test_bad_construction_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        MaximizationBiasEnv(**kwargs)


def test_ansi_render():
    env = gym.make(ENV_ID, render_mode="ansi")
    env.reset(seed=0)
    assert env.render() == "T <- B <- A -> T   in A\n"
    env.step(LEFT)
    assert env.render() == "T <- B <- A -> T   in B  (action 0, reward +0.000)\n"


def test_same_seed_gives_identical_rewards():
    def rewards(seed):
        env = gym.make(ENV_ID)
        env.reset(seed=seed)
        out = []
        for a in range(50):
            env.reset()
            env.step(LEFT)
            out.append(env.step(a % 10)[1])
        return out

    assert rewards(4) == rewards(4)
    assert rewards(4) != rewards(5)


def test_state_dict_round_trip():
    env = MaximizationBiasEnv()
    env.reset(seed=2)
    env.step(LEFT)
    other = MaximizationBiasEnv()
    other.load_state_dict(env.state_dict())
    assert other.s == B
    mine, theirs = other.step(3), env.step(3)
    assert mine[:4] == theirs[:4]
    np.testing.assert_array_equal(mine[4]["action_mask"], theirs[4]["action_mask"])
    with pytest.raises(ValueError, match="state 5 is not 0, 1 or 2"):
        other.load_state_dict({**env.state_dict(), "s": 5})
