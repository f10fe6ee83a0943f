"""Tests of rlkit/learners/monte_carlo.py: first/every-visit prediction, control, off-policy
prediction with ordinary and weighted importance sampling, truncation, checkpoints and errors.

Thresholds of the learning tests were measured with the fixed seeds below (see the comments) and
leave a margin; they are not tuned to pass.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from learner_helpers import EpisodeReturns, Scripted, walk

import rlkit as rk
from rlkit.learners.tabular.monte_carlo import MonteCarloLearner

# ---------------------------------------------------------------------------------------------
# helpers


class AfterEpisode(rk.AbstractHook):
    """Calls ``record()`` after every episode (hooks run after the learner at PostEpisode)."""

    def __init__(self, record) -> None:
        self.record = record

    def post_episode(self, policy, env) -> None:
        self.record()


TRUE_5 = gym.make("rlkit/RandomWalk1D-v0").unwrapped.true_values()[1:-1]  # 1/6 .. 5/6


def prediction_rms(step_size, kind: str, seed: int, episodes: int) -> np.ndarray:
    """RMS error over the 5 states of the walk after every episode (random policy, V = 0.5)."""
    env = walk(seed=seed)
    v = rk.TabularVApproximator(env.state_space, init=0.5, step_size=step_size)
    learner = MonteCarloLearner(v, kind=kind)
    errors: list[float] = []
    record = AfterEpisode(lambda: errors.append(np.sqrt(np.mean((v.table[1:-1] - TRUE_5) ** 2))))
    agent = rk.Agent(
        rk.VBasedPolicy(learner, rk.RandomPolicy(seed=seed)), rk.VectorSARTTrajectory()
    )
    rk.run(agent, env, rk.StopAfterNEpisodes(episodes), record)
    return np.array(errors)


def right_biased(state, action) -> float:
    """Target policy of the off-policy tests: right with probability 0.7."""
    return 0.7 if action == 1 else 0.3


def uniform(state, action) -> float:
    """Behaviour policy of the off-policy tests (rk.RandomPolicy on two actions)."""
    return 0.5


def walk_values_under(prob_right: float) -> np.ndarray:
    """Exact values of the 5-state walk's positions 1..5 under 'right with prob_right'."""
    model = gym.make("rlkit/RandomWalk1D-v0").unwrapped.P
    p, r = np.zeros((7, 7)), np.zeros(7)
    for s in range(1, 6):
        for a, pa in ((0, 1 - prob_right), (1, prob_right)):
            _, nxt, reward, terminated = model[s][a][0]
            r[s] += pa * reward
            if not terminated:
                p[s, nxt] += pa
    return np.linalg.solve(np.eye(5) - p[1:6, 1:6], r[1:6])


def off_policy_estimates(sampling: str, seeds, episodes: int) -> np.ndarray:
    """Estimates of V(3) under ``right_biased`` from uniformly random episodes, after every
    episode: shape (len(seeds), episodes)."""
    estimates = []
    for seed in seeds:
        env = walk(seed=seed)
        v = rk.TabularVApproximator(env.state_space, init=0.0, step_size=None)
        learner = MonteCarloLearner(
            v, sampling=sampling, target_prob=right_biased, behaviour_prob=uniform
        )
        values: list[float] = []
        agent = rk.Agent(
            rk.VBasedPolicy(learner, rk.RandomPolicy(seed=seed)), rk.VectorSARTTrajectory()
        )
        rk.run(
            agent,
            env,
            rk.StopAfterNEpisodes(episodes),
            AfterEpisode(lambda v=v, values=values: values.append(float(v.table[3]))),
        )
        estimates.append(values)
    return np.array(estimates)


# ---------------------------------------------------------------------------------------------
# hand-computed episodes (learn() is what PostEpisode calls with the current episode)

# 5-state walk, actions left, right x5 would be: states 3, 2, 3, 4, 5 -> 6, rewards 0, 0, 0, 0, 1
STATES, ACTIONS, REWARDS = [3, 2, 3, 4, 5], [0, 1, 1, 1, 1], [0.0, 0.0, 0.0, 0.0, 1.0]
GAMMA = 0.9
RETURNS = [GAMMA**4, GAMMA**3, GAMMA**2, GAMMA, 1.0]  # G_0 .. G_4


def test_first_visit_and_every_visit_by_hand():
    first = rk.TabularVApproximator(7, step_size=None)
    MonteCarloLearner(first, kind="first_visit", gamma=GAMMA).learn(STATES, ACTIONS, REWARDS)
    every = rk.TabularVApproximator(7, step_size=None)
    MonteCarloLearner(every, kind="every_visit", gamma=GAMMA).learn(STATES, ACTIONS, REWARDS)
    expected = np.zeros(7)
    expected[[2, 4, 5]] = RETURNS[1], RETURNS[3], RETURNS[4]
    expected[3] = RETURNS[0]  # first visit of state 3 only
    np.testing.assert_allclose(first.table, expected, rtol=0, atol=1e-15)
    expected[3] = (RETURNS[0] + RETURNS[2]) / 2  # both visits, averaged
    np.testing.assert_allclose(every.table, expected, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(every.counts, [0, 0, 1, 2, 1, 1, 0])


def test_first_visit_of_state_action_pairs_by_hand():
    q = rk.TabularQApproximator(7, 2, step_size=None)
    MonteCarloLearner(q, kind="first_visit", gamma=GAMMA).learn(STATES, ACTIONS, REWARDS)
    # (3, left) at t=0, (3, right) at t=2: different pairs, each a first visit
    assert q.table[3, 0] == pytest.approx(RETURNS[0]) and q.table[3, 1] == pytest.approx(RETURNS[2])


def test_constant_step_size_moves_towards_the_return():
    v = rk.TabularVApproximator(7, init=0.5, step_size=0.1)
    MonteCarloLearner(v, kind="first_visit", gamma=GAMMA).learn(STATES, ACTIONS, REWARDS)
    assert v.table[5] == pytest.approx(0.5 + 0.1 * (1.0 - 0.5))
    assert v.table[3] == pytest.approx(0.5 + 0.1 * (RETURNS[0] - 0.5))


def test_learns_only_at_post_episode_from_the_current_episode():
    env = walk(seed=0)
    v = rk.TabularVApproximator(env.state_space, init=0.0, step_size=None)
    learner = MonteCarloLearner(v, kind="every_visit", gamma=GAMMA)
    during: list[np.ndarray] = []

    class DuringEpisode(rk.AbstractHook):
        def post_act(self, policy, env):
            during.append(v.table.copy())

    trajectory = rk.VectorSARTTrajectory(max_episodes=3)  # older episodes stay in the lists
    agent = rk.Agent(rk.VBasedPolicy(learner, Scripted(ACTIONS + [1, 1, 1])), trajectory)
    rk.run(agent, env, rk.StopAfterNEpisodes(2), DuringEpisode())
    assert all(not t.any() for t in during[:5])  # nothing learned during the first episode
    # second episode: right x3 from 3 -> states 3, 4, 5, returns 0.81, 0.9, 1
    expected = np.zeros(7)
    expected[2] = RETURNS[1]
    expected[3] = (RETURNS[0] + RETURNS[2] + GAMMA**2) / 3
    expected[4] = (RETURNS[3] + GAMMA) / 2
    expected[5] = 1.0
    np.testing.assert_allclose(v.table, expected, rtol=0, atol=1e-15)
    assert rk.statistics(learner) == {"episode_return": pytest.approx(GAMMA**2)}


def test_weighted_importance_sampling_by_hand():
    """Two steps, states 0 then 1, actions 0 then 1, rewards 1 then 2, gamma 1;
    pi(0) = 0.5, pi(1) = 1, b = 0.5 everywhere: ratios 1 (t=0) and 2 (t=1)."""

    def pi(state, action):
        return 0.5 if action == 0 else 1.0

    def b(state, action):
        return 0.5

    episode = ([0, 1], [0, 1], [1.0, 2.0])
    v = rk.TabularVApproximator(2, step_size=None)
    learner = MonteCarloLearner(v, sampling="weighted", target_prob=pi, behaviour_prob=b)
    learner.learn(*episode)
    # V: W includes the action taken at t. t=1: G=2, W=2; t=0: G=3, W=2*1=2
    np.testing.assert_array_equal(learner.weights, [2.0, 2.0])
    np.testing.assert_array_equal(v.table, [3.0, 2.0])
    learner.learn(*episode)  # the same episode again: the weighted average stays, C doubles
    np.testing.assert_array_equal(learner.weights, [4.0, 4.0])
    np.testing.assert_array_equal(v.table, [3.0, 2.0])

    q = rk.TabularQApproximator(2, 2, step_size=None)
    learner = MonteCarloLearner(q, sampling="weighted", target_prob=pi, behaviour_prob=b)
    learner.learn(*episode)
    # Q (S&B 5.6): t=1: C(1,1) += 1, Q = 2, then W = 2; t=0: C(0,0) += 2, Q = 3
    assert learner.weights[1, 1] == 1.0 and learner.weights[0, 0] == 2.0
    assert q.table[1, 1] == 2.0 and q.table[0, 0] == 3.0


def test_ordinary_importance_sampling_by_hand():
    def pi(state, action):
        return 0.5 if action == 0 else 1.0

    def b(state, action):
        return 0.5

    episode = ([0, 1], [0, 1], [1.0, 2.0])
    v = rk.TabularVApproximator(2, step_size=None)
    MonteCarloLearner(v, sampling="ordinary", target_prob=pi, behaviour_prob=b).learn(*episode)
    np.testing.assert_array_equal(v.table, [2 * 3.0, 2 * 2.0])  # rho * G
    q = rk.TabularQApproximator(2, 2, step_size=None)
    MonteCarloLearner(q, sampling="ordinary", target_prob=pi, behaviour_prob=b).learn(*episode)
    assert q.table[1, 1] == 2.0 and q.table[0, 0] == 2 * 3.0  # the pair's own action: no ratio


def test_weighted_sampling_stops_weighting_after_a_zero_ratio():
    """A target that never takes action 0: nothing before an action-0 step is learned
    (weighted), while ordinary sampling averages in zeros."""

    def never_left(state, action):
        return 0.0 if action == 0 else 1.0

    episode = ([0, 1, 2], [1, 0, 1], [1.0, 1.0, 1.0])
    for sampling, expected in (("weighted", [0.0, 0.0, 1.0]), ("ordinary", [0.0, 0.0, 2.0])):
        v = rk.TabularVApproximator(3, step_size=None)
        MonteCarloLearner(
            v, sampling=sampling, target_prob=never_left, behaviour_prob=uniform
        ).learn(*episode)
        np.testing.assert_array_equal(v.table, expected)
        if sampling == "ordinary":
            np.testing.assert_array_equal(v.counts, [1, 1, 1])  # zero-weight returns counted


def test_truncated_episodes_use_the_observed_return():
    """A one-step time limit on the walk: every episode is cut after one step with reward 0, so
    Monte Carlo (which cannot bootstrap) moves V(3) toward 0 whatever V(2), V(4) are."""
    env = walk(seed=0, max_episode_steps=1)
    v = rk.TabularVApproximator(env.state_space, init=0.5, step_size=None)
    learner = MonteCarloLearner(v, kind="every_visit")
    agent = rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)), rk.VectorSARTTrajectory())
    rk.run(agent, env, rk.StopAfterNEpisodes(3))
    assert agent.trajectory.truncated[-1]
    assert v.table[3] == 0.0 and v.counts[3] == 3


# ---------------------------------------------------------------------------------------------
# learning


def test_every_visit_sample_averages_approach_the_true_values():
    """RMS error over the 5 states of the walk, averaged over episodes 501-1000 and 3 seeds
    (measured): every-visit 0.022 (0.014-0.030 per seed), first-visit 0.017 (0.014-0.023).
    The initial error (V = 0.5) is 0.24."""
    every = np.mean(
        [prediction_rms(None, "every_visit", seed, 1000)[500:].mean() for seed in range(3)]
    )
    first = np.mean(
        [prediction_rms(None, "first_visit", seed, 1000)[500:].mean() for seed in range(3)]
    )
    assert every < 0.04 and first < 0.04, (every, first)


def test_constant_alpha_monte_carlo_approaches_the_true_values():
    """Constant-alpha (0.01) every-visit MC: RMS error averaged over episodes 501-1000 and 3
    seeds is 0.051 (0.048-0.055 per seed, measured; the noise floor of a constant step size);
    S&B Figure 6.2 shows about 0.07 for alpha 0.01 after 100 episodes, still falling."""
    errors = [prediction_rms(0.01, "every_visit", seed, 1000) for seed in range(3)]
    late = np.mean([e[500:].mean() for e in errors])
    early = np.mean([e[:10].mean() for e in errors])
    assert late < 0.075 and late < early / 2, (early, late)


def test_monte_carlo_control_finds_the_optimal_greedy_policy():
    """3-state walk with rewards 1 (left end) and 2 (right end), gamma 0.5, on-policy
    first-visit MC control with epsilon-greedy (0.1) behaviour. Optimal: left in state 1 (1
    now beats 0.5 * ... later), right in states 2 and 3 (value iteration below)."""
    gamma = 0.5
    env = walk(3, (1.0, 2.0), seed=0)
    model = env.env.unwrapped.P
    optimal = np.zeros((5, 2))
    for _ in range(100):
        optimal = np.array(
            [
                [
                    sum(
                        p * (r + (0 if t else gamma * optimal[s2].max()))
                        for p, s2, r, t in model[s][a]
                    )
                    for a in (0, 1)
                ]
                for s in range(5)
            ]
        )
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=None)
    learner = MonteCarloLearner(q, gamma=gamma)
    explorer = rk.EpsilonGreedyExplorer(0.1, seed=0)
    agent = rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory())
    rk.run(agent, env, rk.StopAfterNEpisodes(300))
    assert q.table[1:4].argmax(axis=1).tolist() == optimal[1:4].argmax(axis=1).tolist() == [0, 1, 1]


def test_off_policy_importance_sampling_converges_and_weighted_has_lower_variance():
    """Estimate V(3) of the 5-state walk under 'right with probability 0.7' (true 0.927) from
    uniformly random episodes, 20 seeds x 200 episodes (first-visit, sample averages).
    Measured MSE after 10 / 100 / 200 episodes: ordinary 0.099 / 0.017 / 0.0043, weighted
    0.0016 / 0.0003 / 0.0001 (S&B Figure 5.3's shape); mean final estimates 0.941 and 0.928."""
    truth = walk_values_under(0.7)[2]
    seeds = range(20)
    ordinary = off_policy_estimates("ordinary", seeds, 200)
    weighted = off_policy_estimates("weighted", seeds, 200)
    for estimates in (ordinary, weighted):
        mse = ((estimates - truth) ** 2).mean(axis=0)
        assert mse[-1] < mse[9] / 3, mse[[9, -1]]  # converging
        assert abs(estimates[:, -1].mean() - truth) < 0.05
    for k in (9, 99, 199):  # variance across seeds after 10, 100 and 200 episodes
        assert weighted[:, k].var() < ordinary[:, k].var() / 4, k


@pytest.mark.parametrize("kind", ["first_visit", "every_visit"])
def test_same_seed_same_returns_different_seed_different_returns(kind):
    def returns(seed):
        env = walk(5, seed=seed)
        q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.1)
        agent = rk.Agent(
            rk.QBasedPolicy(
                MonteCarloLearner(q, kind=kind, gamma=0.9), rk.EpsilonGreedyExplorer(0.2, seed=seed)
            ),
            rk.VectorSARTTrajectory(),
        )
        hook = rk.run(agent, env, rk.StopAfterNEpisodes(30), EpisodeReturns())
        return hook.returns, agent.trajectory.state

    first, again, other = returns(0), returns(0), returns(1)
    assert first == again
    assert first != other


# ---------------------------------------------------------------------------------------------
# checkpoints and errors


@pytest.mark.parametrize("sampling", [None, "ordinary", "weighted"])
def test_state_dict_round_trip(sampling):
    def make():
        v = rk.TabularVApproximator(7, step_size=None)
        probs = {} if sampling is None else {"target_prob": right_biased, "behaviour_prob": uniform}
        return MonteCarloLearner(v, kind="every_visit", sampling=sampling, **probs)

    straight, first = make(), make()
    for learner in (straight, first):
        learner.learn(STATES, ACTIONS, REWARDS)
    resumed = make()
    resumed.load_state_dict(first.state_dict())
    for learner in (straight, resumed):
        learner.learn([3, 4, 5], [1, 1, 1], [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(resumed.approximator.table, straight.approximator.table)
    np.testing.assert_array_equal(resumed.approximator.counts, straight.approximator.counts)
    if sampling == "weighted":
        np.testing.assert_array_equal(resumed.weights, straight.weights)
    assert resumed.state_dict()["episode_return"] == straight.episode_return


def test_load_state_dict_rejects_other_settings():
    v = rk.TabularVApproximator(7, step_size=None)
    weighted = MonteCarloLearner(
        v, sampling="weighted", target_prob=right_biased, behaviour_prob=uniform
    )
    plain = MonteCarloLearner(rk.TabularVApproximator(7, step_size=None))
    with pytest.raises(ValueError, match="incompatible checkpoint: expected sampling 'weighted'"):
        weighted.load_state_dict(plain.state_dict())


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"kind": "all_visits"}, ValueError, "kind must be one of.*got 'all_visits'"),
        (
            {"gamma": 1.5},
            ValueError,
            r"MonteCarloLearner: gamma must be a number in \[0, 1\], got 1.5",
        ),
        ({"gamma": None}, TypeError, "gamma must be a number"),
        ({"sampling": "importance"}, ValueError, "sampling must be one of.*got 'importance'"),
        ({"sampling": "ordinary"}, TypeError, "sampling='ordinary' needs target_prob"),
        (
            {"sampling": "ordinary", "target_prob": right_biased},
            TypeError,
            "needs behaviour_prob",
        ),
        ({"target_prob": right_biased}, ValueError, "only used with sampling"),
        (
            {"sampling": "weighted", "target_prob": right_biased, "behaviour_prob": uniform},
            ValueError,
            "needs an approximator with step_size=None, got step_size=0.1",
        ),
    ],
)
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        MonteCarloLearner(rk.TabularVApproximator(7, step_size=0.1), **kwargs)


def test_bad_approximator():
    with pytest.raises(TypeError, match="MonteCarloLearner: approximator must be a Tabular"):
        MonteCarloLearner(np.zeros(7))


def test_tuple_states_of_blackjack():
    """First visits of tuple states (S&B Example 5.1's setting). With gamma 1 and the only
    reward at the end, every first visit averages in the episode's final reward, so
    sum(V * counts) = sum over episodes of (distinct states) x (return)."""
    env = rk.GymEnv("Blackjack-v1", seed=0)
    v = rk.TabularVApproximator(env.state_space, step_size=None)
    learner = MonteCarloLearner(v, kind="first_visit")
    agent = rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)), rk.VectorSARTTrajectory())
    expected = []

    def record(policy):
        t = policy.trajectory
        states = t.state[t.episode_start :]
        expected.append((len(set(states)), sum(t.reward[t.episode_start :])))

    rk.run(agent, env, rk.StopAfterNEpisodes(200), AfterEpisode(lambda: record(agent)))
    assert v.counts.sum() == sum(n for n, _ in expected) >= 200
    assert np.sum(v.table * v.counts) == pytest.approx(sum(n * g for n, g in expected))
