"""Tests of rlkit/learners/td.py: TD(0), SARSA, Expected SARSA, Q-learning, double Q-learning,
n-step returns, truncation, checkpoints and errors.

Learning tests reproduce Sutton & Barto (2018) results with fixed seeds; thresholds were measured
(see the comments) and leave a margin, they are not tuned to pass.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from learner_helpers import EpisodeReturns, Scripted, walk

import rlkit as rk
from rlkit.core.dispatch import collect_statistics
from rlkit.core.plan import build_plan
from rlkit.envs.toy.maximization_bias import LEFT
from rlkit.learners.tabular.td import (
    DoubleQLearningLearner,
    ExpectedSARSALearner,
    QLearningLearner,
    SARSALearner,
    TD0Learner,
    TDLearner,
)

# ---------------------------------------------------------------------------------------------
# helpers


class AfterEpisode(rk.AbstractHook):
    """Calls ``record(policy)`` after every episode (hooks run after the learner)."""

    def __init__(self, record) -> None:
        self.record = record

    def post_episode(self, policy, env) -> None:
        self.record(policy)


class Snapshots(rk.AbstractHook):
    """A copy of a table after every step (hooks run after the learner at PostAct)."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = table
        self.after_step: list[np.ndarray] = []

    def post_act(self, policy, env) -> None:
        self.after_step.append(self.table.copy())


class OneStepEnv(gym.Env):
    """State 0 --action--> state 1 with reward 1, then the episode ends: terminated or truncated.

    Three actions so SARSA's expectation differs from the max and from a single action."""

    def __init__(self, terminate: bool = True) -> None:
        self.terminate = terminate
        self.observation_space = gym.spaces.Discrete(2)
        self.action_space = gym.spaces.Discrete(3)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return 0, {}

    def step(self, action):
        return 1, 1.0, self.terminate, not self.terminate, {}


class ChainEnv(gym.Env):
    """A deterministic 4-state MDP without terminal states (episodes end by a time limit).

    Action 0 moves left (to max(s - 1, 0)) with reward +1 in state 0 and 0 elsewhere; action 1
    moves right (to min(s + 1, 3)) with reward +5 when it is taken in state 3, 0 elsewhere.
    Optimal with gamma = 0.9: walk right and stay at the right end."""

    n_states, n_actions = 4, 2

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Discrete(self.n_states)
        self.action_space = gym.spaces.Discrete(self.n_actions)

    @classmethod
    def model(cls, s: int, a: int) -> tuple[int, float]:
        if a == 0:
            return max(s - 1, 0), 1.0 if s == 0 else 0.0
        return min(s + 1, cls.n_states - 1), 5.0 if s == cls.n_states - 1 else 0.0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.s = 0
        return self.s, {}

    def step(self, action):
        self.s, reward = self.model(self.s, int(action))
        return self.s, reward, False, False, {}


def chain_optimal_q(gamma: float) -> np.ndarray:
    """Optimal Q of ChainEnv by value iteration."""
    q = np.zeros((ChainEnv.n_states, ChainEnv.n_actions))
    for _ in range(2000):
        v = q.max(axis=1)
        new = np.array(
            [
                [ChainEnv.model(s, a)[1] + gamma * v[ChainEnv.model(s, a)[0]] for a in range(2)]
                for s in range(ChainEnv.n_states)
            ]
        )
        if np.max(np.abs(new - q)) < 1e-13:
            return new
        q = new
    raise AssertionError("value iteration did not converge")


def true_walk_values(n_states: int, rewards) -> np.ndarray:
    env = gym.make("rlkit/RandomWalk1D-v0", n_states=n_states, rewards=rewards)
    return env.unwrapped.true_values()[1:-1]


def q_agent(learner: TDLearner, epsilon: float = 0.1, seed: int = 0, max_episodes: int = 1):
    explorer = rk.EpsilonGreedyExplorer(epsilon, seed=seed)
    return rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory(max_episodes))


def run_episodes(agent, env, n: int) -> list[float]:
    return rk.run(agent, env, rk.StopAfterNEpisodes(n), EpisodeReturns()).returns


def cliff_run(method: str, seed: int, episodes: int = 500, **kwargs):
    """S&B Example 6.6: alpha 0.5, epsilon 0.1, gamma 1. Returns (per-episode returns, Q)."""
    env = rk.GymEnv("CliffWalking-v1", seed=seed)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    if method == "double_qlearning":
        kwargs.setdefault("seed", seed)
    learner = TDLearner(q, method=method, gamma=1.0, **kwargs)
    return run_episodes(q_agent(learner, 0.1, seed), env, episodes), q


def td_prediction_rms(n: int, alpha: float, seed: int, episodes: int = 10) -> float:
    """S&B Figure 7.2: RMS error over the 19 states, averaged over the first ``episodes``."""
    env = walk(19, (-1.0, 1.0), seed=seed)
    v = rk.TabularVApproximator(env.state_space, init=0.0, step_size=alpha)
    learner = TDLearner(v, method="td0", n=n)
    agent = rk.Agent(
        rk.VBasedPolicy(learner, rk.RandomPolicy(seed=seed)), rk.VectorSARTTrajectory()
    )
    truth = true_walk_values(19, (-1.0, 1.0))

    errors = []

    class Rms(rk.AbstractHook):
        def post_episode(self, policy, env):
            errors.append(np.sqrt(np.mean((v.table[1:-1] - truth) ** 2)))

    rk.run(agent, env, rk.StopAfterNEpisodes(episodes), Rms())
    return float(np.mean(errors))


# ---------------------------------------------------------------------------------------------
# construction


@pytest.mark.parametrize(
    ("method", "cls"),
    [
        ("td0", TD0Learner),
        ("sarsa", SARSALearner),
        ("expected_sarsa", ExpectedSARSALearner),
        ("qlearning", QLearningLearner),
        ("double_qlearning", DoubleQLearningLearner),
    ],
)
def test_tdlearner_builds_the_method_subclass(method, cls):
    approximator = rk.TabularVApproximator(5) if method == "td0" else rk.TabularQApproximator(5, 2)
    learner = TDLearner(approximator, method=method)
    assert type(learner) is cls and isinstance(learner, TDLearner)
    assert learner.method == method
    direct = cls(approximator)  # subclasses are constructed directly too
    assert type(direct) is cls


def test_default_method_is_qlearning_and_public_name():
    learner = rk.TDLearner(rk.TabularQApproximator(3, 2), gamma=0.5, n=2)
    assert type(learner) is QLearningLearner
    assert (learner.gamma, learner.n) == (0.5, 2)


def test_explain_names_the_method_class():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    q = rk.TabularQApproximator(env.state_space, env.action_space)
    plan = build_plan(q_agent(TDLearner(q, method="sarsa")), env).describe()
    assert "update(SARSALearner, VectorSARTTrajectory, GymEnv, PreActStage)" in plan
    assert "update(SARSALearner, VectorSARTTrajectory, GymEnv, PostActStage)" in plan
    plan = build_plan(q_agent(TDLearner(q)), env).describe()
    assert "update(QLearningLearner, VectorSARTTrajectory, GymEnv, PostActStage)" in plan
    assert "QLearningLearner, VectorSARTTrajectory, GymEnv, PreActStage" not in plan


def test_qbasedpolicy_gives_its_explorer_to_the_learner():
    explorer = rk.EpsilonGreedyExplorer(0.1, seed=0)
    learner = TDLearner(rk.TabularQApproximator(3, 2), method="expected_sarsa")
    rk.QBasedPolicy(learner, explorer)
    assert learner.explorer is explorer


# ---------------------------------------------------------------------------------------------
# hand-computed updates


def test_n_step_td_prediction_by_hand():
    """5-state walk, actions right x3: states 3, 4, 5, then terminal 6; rewards 0, 0, 1.
    n=2, gamma=0.9, alpha=0.5, V initialised to 0.5."""
    env = walk(5, seed=0)
    v = rk.TabularVApproximator(env.state_space, init=0.5, step_size=0.5)
    learner = TDLearner(v, method="td0", n=2, gamma=0.9)
    agent = rk.Agent(rk.VBasedPolicy(learner, Scripted([1, 1, 1])), rk.VectorSARTTrajectory())
    snaps = rk.run(agent, env, rk.StopAfterNEpisodes(1), Snapshots(v.table))
    after = snaps.after_step
    assert len(after) == 3
    np.testing.assert_array_equal(after[0], np.full(7, 0.5))  # window of 2 not complete yet
    # step 2: tau=0, G = 0 + 0.9 * 0 + 0.81 * V(5) = 0.405 -> V(3) = 0.5 + 0.5 * (0.405 - 0.5)
    expected = np.full(7, 0.5)
    expected[3] = 0.5 + 0.5 * (0.81 * 0.5 - 0.5)
    np.testing.assert_allclose(after[1], expected, rtol=0, atol=1e-15)
    # step 3 terminates: flush tau=1 (G = 0 + 0.9 * 1) and tau=2 (G = 1), no bootstrap
    expected[4] = 0.5 + 0.5 * (0.9 - 0.5)
    expected[5] = 0.5 + 0.5 * (1.0 - 0.5)
    np.testing.assert_allclose(after[2], expected, rtol=0, atol=1e-15)
    assert learner.td_error == pytest.approx(0.5)


def test_n_step_sarsa_by_hand_updates_at_the_next_preact():
    """n=2 SARSA on the 5-state walk with actions left, right, right, right, right:
    states 3, 2, 3, 4, 5 -> 6; rewards 0, 0, 0, 0, 1; gamma 0.5, alpha 1, Q initialised to 1."""
    env = walk(5, seed=0)
    q = rk.TabularQApproximator(env.state_space, env.action_space, init=1.0, step_size=1.0)
    learner = TDLearner(q, method="sarsa", n=2, gamma=0.5)
    actions = [0, 1, 1, 1, 1]

    seen_at_preact: list[np.ndarray] = []

    class PreAct(rk.AbstractHook):  # hooks run after the learner at PreAct too
        def pre_act(self, policy, env, action):
            seen_at_preact.append(q.table.copy())

    policy = rk.QBasedPolicy(learner, rk.GreedyExplorer(seed=0))
    policy.act = Scripted(actions).act  # the scripted actions, the learner of a QBasedPolicy
    agent = rk.Agent(policy, rk.VectorSARTTrajectory())
    rk.run(agent, env, rk.StopAfterNEpisodes(1), PreAct())
    init = np.ones((7, 2))
    # PreAct of steps 0 and 1: no complete window yet
    np.testing.assert_array_equal(seen_at_preact[0], init)
    np.testing.assert_array_equal(seen_at_preact[1], init)
    # PreAct of step 2 (state 3, action 1): tau=0 -> Q(3, left) = 0 + 0.5 * 0 + 0.25 * Q(3, right)
    assert seen_at_preact[2][3, 0] == 0.25
    # PreAct of step 3 (state 4, action 1): tau=1 -> Q(2, right) = 0.25 * Q(4, right) = 0.25
    assert seen_at_preact[3][2, 1] == 0.25
    # PreAct of step 4 (state 5, action 1): tau=2 -> Q(3, right) = 0.25 * Q(5, right) = 0.25
    assert seen_at_preact[4][3, 1] == 0.25
    # the terminal step flushes tau=3 (Q(4, right) = 0 + 0.5 * 1) and tau=4 (Q(5, right) = 1)
    assert q.table[4, 1] == 0.5 and q.table[5, 1] == 1.0
    assert q.table[3, 0] == 0.25 and q.table[2, 1] == 0.25 and q.table[3, 1] == 0.25


@pytest.mark.parametrize(
    ("method", "truncated_target"),
    [
        # Q(1) = [2, 4, 0]; epsilon-greedy(0.5) probabilities [1/6, 2/3, 1/6]; gamma 0.5
        ("qlearning", 1.0 + 0.5 * 4.0),
        ("sarsa", 1.0 + 0.5 * (2.0 / 6 + 4.0 * 2 / 3)),  # no next action: the expectation
        ("expected_sarsa", 1.0 + 0.5 * (2.0 / 6 + 4.0 * 2 / 3)),
        ("double_qlearning", 1.0 + 0.5 * 4.0),  # Q2(1, argmax Q1(1)) with Q1 = Q2
    ],
)
@pytest.mark.parametrize("n", [1, 3])
def test_truncation_bootstraps_and_termination_does_not(method, truncated_target, n):
    for terminate, expected in ((True, 1.0), (False, truncated_target)):
        env = rk.GymEnv(OneStepEnv(terminate), seed=0)
        q = rk.TabularQApproximator(2, 3, step_size=1.0)
        q.table[1] = [2.0, 4.0, 0.0]
        kwargs = {}
        if method == "double_qlearning":
            q2 = rk.TabularQApproximator(2, 3, step_size=1.0)
            q2.table[1] = [2.0, 4.0, 0.0]
            kwargs = {"second_approximator": q2, "seed": 0}
        learner = TDLearner(q, method=method, gamma=0.5, n=n, **kwargs)
        agent = q_agent(learner, epsilon=0.5, seed=0)
        rk.run(agent, env, rk.StopAfterNEpisodes(1))
        action = agent.trajectory.action[0]
        tables = [q.table] + ([kwargs["second_approximator"].table] if kwargs else [])
        updated = [t[0, action] for t in tables if t[0, action] != 0.0]
        assert updated == [pytest.approx(expected, abs=1e-12)], (method, terminate)


def test_td0_truncation_bootstraps_and_termination_does_not():
    for terminate, expected in ((True, 1.0), (False, 1.0 + 0.5 * 3.0)):
        env = rk.GymEnv(OneStepEnv(terminate), seed=0)
        v = rk.TabularVApproximator(2, step_size=1.0)
        v.table[1] = 3.0
        learner = TDLearner(v, method="td0", gamma=0.5)
        rk.run(
            rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)), rk.VectorSARTTrajectory()),
            env,
            rk.StopAfterNEpisodes(1),
        )
        assert v.table[0] == expected


def test_time_limit_truncation_on_the_walk_bootstraps_from_the_real_final_state():
    """A 1-step time limit on the 5-state walk: every episode is cut after one step from the
    centre; the TD(0) target is V(final observation), which must be 2 or 4 (never 3, the reset
    state)."""
    env = walk(5, seed=0, max_episode_steps=1)
    v = rk.TabularVApproximator(env.state_space, init=0.0, step_size=1.0)
    v.table[:] = [0.0, 0.0, 10.0, 99.0, 20.0, 0.0, 0.0]
    learner = TDLearner(v, method="td0")
    agent = rk.Agent(rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0)), rk.VectorSARTTrajectory())
    rk.run(agent, env, rk.StopAfterNEpisodes(1))
    final = agent.trajectory.next_state[-1]
    assert agent.trajectory.truncated[-1] and final in (2, 4)
    assert v.table[3] == {2: 10.0, 4: 20.0}[final]


def test_qlearning_matches_a_hand_written_loop_bit_for_bit():
    """The lean one-step path computes exactly what a plain numpy Q-learning loop computes."""
    episodes, alpha, gamma = 30, 0.5, 0.9
    env = gym.make("CliffWalking-v1")
    explorer = rk.EpsilonGreedyExplorer(0.1, seed=3)
    table = np.zeros((48, 4))
    s, _ = env.reset(seed=0)
    for episode in range(episodes):
        if episode:
            s, _ = env.reset()
        done = False
        while not done:
            a = explorer(table[s])
            s2, r, terminated, truncated, _ = env.step(a)
            target = r if terminated else r + gamma * table[s2].max()
            table[s, a] += alpha * (target - table[s, a])
            s, done = s2, terminated or truncated
    q = rk.TabularQApproximator(48, 4, step_size=alpha)
    learner = TDLearner(q, gamma=gamma)
    agent = rk.Agent(
        rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=3)), rk.VectorSARTTrajectory()
    )
    rk.run(agent, rk.GymEnv("CliffWalking-v1", seed=0), rk.StopAfterNEpisodes(episodes))
    np.testing.assert_array_equal(q.table, table)


def test_episodes_are_never_mixed():
    """Keeping older episodes in the trajectory changes nothing: windows stop at episode starts."""
    tables = []
    for max_episodes in (1, 4):
        for method in ("sarsa", "expected_sarsa", "qlearning"):
            env = walk(5, seed=1)
            q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.3)
            learner = TDLearner(q, method=method, n=3, gamma=0.9)
            run_episodes(q_agent(learner, 0.5, seed=1, max_episodes=max_episodes), env, 30)
            tables.append(q.table.copy())
    for a, b in zip(tables[:3], tables[3:], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["sarsa", "qlearning", "double_qlearning"])
def test_a_run_stopped_mid_episode_continues_exactly(method):
    def make():
        env = walk(5, seed=2)
        q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.2)
        extra = {"seed": 5} if method == "double_qlearning" else {}
        learner = TDLearner(q, method=method, n=2, gamma=0.9, **extra)
        return env, q, q_agent(learner, 0.3, seed=2)

    env, q_once, agent = make()
    rk.run(agent, env, rk.StopAfterNSteps(500))
    mid_episode = []
    for split in (123, 124):  # episodes last >= 3 steps: one of the two splits is mid-episode
        env, q_split, agent = make()
        rk.run(agent, env, rk.StopAfterNSteps(split))
        mid_episode.append(not env.done)
        rk.run(agent, env, rk.StopAfterNSteps(500 - split))
        np.testing.assert_array_equal(q_once.table, q_split.table)
    assert any(mid_episode)


# ---------------------------------------------------------------------------------------------
# learning


def test_td0_on_the_5_state_walk_approaches_the_true_values():
    """S&B Example 6.2 with a small alpha (0.02): the RMS error over the 5 states, averaged over
    episodes 201-300 and 3 seeds, is below 0.05 (measured 0.028; 0.018-0.045 per seed). The
    initial error of V = 0.5 is 0.24; S&B Figure 6.2 shows about 0.05 for alpha = 0.05."""
    truth = true_walk_values(5, (0.0, 1.0))
    averaged = []
    for seed in range(3):
        env = walk(5, seed=seed)
        v = rk.TabularVApproximator(env.state_space, init=0.5, step_size=0.02)
        v.table[[0, -1]] = 0.0
        agent = rk.Agent(
            rk.VBasedPolicy(TDLearner(v, method="td0"), rk.RandomPolicy(seed=seed)),
            rk.VectorSARTTrajectory(),
        )
        errors: list[float] = []
        record = AfterEpisode(
            lambda policy, v=v, errors=errors: errors.append(
                np.sqrt(np.mean((v.table[1:-1] - truth) ** 2))
            )
        )
        rk.run(agent, env, rk.StopAfterNEpisodes(300), record)
        averaged.append(np.mean(errors[200:]))
    assert np.mean(averaged) < 0.05, averaged


def test_qlearning_reaches_the_optimal_q_of_a_small_mdp():
    """Uniformly random behaviour (epsilon 1), alpha 0.5, gamma 0.9, 20-step episodes cut by a
    time limit (truncation: bootstrapped, so the fixed point is the infinite-horizon optimum)."""
    gamma = 0.9
    env = rk.GymEnv(gym.wrappers.TimeLimit(ChainEnv(), max_episode_steps=20), seed=0)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    run_episodes(q_agent(TDLearner(q, gamma=gamma), epsilon=1.0, seed=0), env, 300)
    optimal = chain_optimal_q(gamma)
    np.testing.assert_allclose(q.table, optimal, rtol=0, atol=1e-6)
    assert optimal[3, 1] == pytest.approx(50.0)  # 5 / (1 - 0.9): stay at the right end


def test_n_step_qlearning_reaches_the_optimal_q_of_a_small_mdp():
    """n-step Q-learning with a max bootstrap is biased by exploring actions inside the window;
    with epsilon decaying linearly from 1 to 0 over the first 3000 of 12000 steps it becomes
    on-policy for the greedy policy and its values approach the optimal ones."""
    gamma = 0.9
    env = rk.GymEnv(gym.wrappers.TimeLimit(ChainEnv(), max_episode_steps=20), seed=0)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.1)
    explorer = rk.EpsilonGreedyExplorer(0.0, kind="linear", decay_steps=3000, seed=0)
    agent = rk.Agent(
        rk.QBasedPolicy(TDLearner(q, gamma=gamma, n=3), explorer), rk.VectorSARTTrajectory()
    )
    run_episodes(agent, env, 600)
    optimal = chain_optimal_q(gamma)
    assert np.array_equal(q.table.argmax(axis=1), optimal.argmax(axis=1))
    np.testing.assert_allclose(q.table.max(axis=1), optimal.max(axis=1), rtol=0.02)


@pytest.mark.slow  # about 1.5 s alone, more on a loaded machine
def test_sarsa_beats_qlearning_online_on_the_cliff():
    """S&B Example 6.6 (gymnasium CliffWalking-v1: stepping into the cliff gives -100 and sends
    the agent back to the start without ending the episode). Mean return over the last 100 of
    500 episodes, averaged over 5 seeds (measured): SARSA -26.2 (-24.0 .. -29.5 per seed),
    Q-learning -48.4 (-36.0 .. -58.1), Expected SARSA -20.7 (-17.1 .. -24.1); S&B: about -25 and
    -50. Q-learning's greedy path is the optimal one along the cliff: 13 steps, return -13."""
    late = {}
    for method in ("sarsa", "qlearning", "expected_sarsa"):
        late[method] = []
        for seed in range(5):
            returns, q = cliff_run(method, seed)
            late[method].append(np.mean(returns[-100:]))
            if method == "qlearning":
                assert greedy_cliff_return(q.table) == (13, -13.0)
    sarsa, qlearning, expected = (
        np.mean(late[m]) for m in ("sarsa", "qlearning", "expected_sarsa")
    )
    assert sarsa > -35 and qlearning < -40 and sarsa > qlearning + 15, late
    assert expected >= sarsa, late


def greedy_cliff_return(table: np.ndarray) -> tuple[int, float]:
    env = gym.make("CliffWalking-v1")
    s, _ = env.reset(seed=0)
    total, steps, done = 0.0, 0, False
    while not done and steps < 100:
        s, r, terminated, truncated, _ = env.step(int(np.argmax(table[s])))
        total, steps, done = total + r, steps + 1, terminated or truncated
    return steps, total


def test_n_step_td_beats_one_step_on_the_19_state_walk():
    """S&B Figure 7.2: RMS error over the 19 states averaged over the first 10 episodes and 20
    seeds, at alpha = 0.4: measured 0.41 for n = 1, 0.32 for n = 2, 0.28 for n = 4 (the book:
    about 0.45, 0.35, 0.3)."""
    seeds = range(20)
    one = np.mean([td_prediction_rms(1, 0.4, seed) for seed in seeds])
    four = np.mean([td_prediction_rms(4, 0.4, seed) for seed in seeds])
    assert four < one - 0.05, (one, four)


def left_fraction(method: str, seeds, episodes: int = 300) -> np.ndarray:
    """Per-episode fraction of runs that went left from A (S&B Figure 6.5 settings)."""
    lefts = np.zeros(episodes)
    for seed in seeds:
        env = rk.GymEnv("rlkit/MaximizationBias-v0", seed=seed)
        q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.1)
        extra = {"seed": seed} if method == "double_qlearning" else {}
        agent = q_agent(TDLearner(q, method=method, gamma=1.0, **extra), 0.1, seed, max_episodes=1)

        went_left: list[bool] = []
        record = AfterEpisode(
            lambda policy, went_left=went_left: went_left.append(
                policy.trajectory.action[policy.trajectory.episode_start] == LEFT
            )
        )
        rk.run(agent, env, rk.StopAfterNEpisodes(episodes), record)
        lefts += went_left
    return lefts / len(seeds)


def test_double_qlearning_reduces_the_maximization_bias():
    """S&B Example 6.7 / Figure 6.5 on rlkit/MaximizationBias-v0 (alpha 0.1, epsilon 0.1,
    gamma 1; legal actions from info["action_mask"]), 40 seeds. Fraction of left actions from A
    (measured): episodes 101-300, Q-learning 0.18, double Q-learning 0.09; episodes 1-100, 0.71
    and 0.19 (the epsilon-greedy optimum is 0.05)."""
    seeds = range(40)
    q_left = left_fraction("qlearning", seeds)
    double_left = left_fraction("double_qlearning", seeds)
    assert double_left[100:].mean() < q_left[100:].mean() - 0.03, (q_left, double_left)
    assert double_left[100:].mean() < 0.12, double_left
    assert double_left[:100].mean() < q_left[:100].mean() - 0.3, (q_left, double_left)


# ---------------------------------------------------------------------------------------------
# reproducibility, checkpoints, statistics


@pytest.mark.parametrize("method", ["sarsa", "expected_sarsa", "qlearning", "double_qlearning"])
def test_same_seed_same_returns_different_seed_different_returns(method):
    first, _ = cliff_run(method, seed=0, episodes=30)
    again, _ = cliff_run(method, seed=0, episodes=30)
    other, _ = cliff_run(method, seed=1, episodes=30)
    assert first == again
    assert first != other


def test_double_qlearning_coin_depends_on_its_seed():
    tables = []
    for seed in (0, 0, 1):
        env = walk(5, seed=0)
        q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
        learner = TDLearner(q, method="double_qlearning", seed=seed)
        run_episodes(q_agent(learner, 0.3, seed=0), env, 20)
        tables.append(np.concatenate([q.table, learner.second_approximator.table]))
    np.testing.assert_array_equal(tables[0], tables[1])
    assert not np.array_equal(tables[0], tables[2])


@pytest.mark.parametrize("method", ["td0", "sarsa", "qlearning", "double_qlearning"])
def test_state_dict_round_trip_resumes_bit_identically(method):
    def make(seed_offset=0):
        env = walk(5, seed=4)
        if method == "td0":
            approximator = rk.TabularVApproximator(env.state_space, step_size=0.1)
            learner = TDLearner(approximator, method="td0", n=2)
            policy = rk.VBasedPolicy(learner, rk.RandomPolicy(seed=4))
        else:
            approximator = rk.TabularQApproximator(
                env.state_space, env.action_space, step_size=None
            )
            extra = {"seed": 4} if method == "double_qlearning" else {}
            learner = TDLearner(approximator, method=method, n=2, gamma=0.9, **extra)
            policy = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.3, seed=4))
        return env, learner, policy

    env, straight, policy = make()
    returns = run_episodes(rk.Agent(policy, rk.VectorSARTTrajectory()), env, 40)

    env, first, policy = make()
    returns_a = run_episodes(rk.Agent(policy, rk.VectorSARTTrajectory()), env, 20)
    saved = policy.state_dict()
    # the walk itself is deterministic; RandomPolicy (td0's mapper) has no state_dict yet
    mapper_rng = policy.mapper.rng.bit_generator.state if method == "td0" else None
    fresh_env, resumed, fresh_policy = make()
    fresh_policy.load_state_dict(saved)
    if mapper_rng is not None:
        fresh_policy.mapper.rng.bit_generator.state = mapper_rng
    returns_b = run_episodes(rk.Agent(fresh_policy, rk.VectorSARTTrajectory()), fresh_env, 20)
    assert returns_a + returns_b == returns
    np.testing.assert_array_equal(resumed.approximator.table, straight.approximator.table)
    assert resumed.state_dict()["td_error"] == straight.state_dict()["td_error"]
    if method == "double_qlearning":
        np.testing.assert_array_equal(
            resumed.second_approximator.table, straight.second_approximator.table
        )


def test_load_state_dict_rejects_another_method():
    sarsa = TDLearner(rk.TabularQApproximator(3, 2), method="sarsa")
    qlearning = TDLearner(rk.TabularQApproximator(3, 2))
    with pytest.raises(ValueError, match="SARSALearner: incompatible checkpoint.*'qlearning'"):
        sarsa.load_state_dict(qlearning.state_dict())


def test_statistics_report_the_last_td_error():
    env = rk.GymEnv("CliffWalking-v1", seed=0)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    agent = q_agent(TDLearner(q))
    rk.run(agent, env, rk.StopAfterNSteps(1))
    stats = collect_statistics(agent)
    assert stats["learner/td_error"] == env.reward  # first step: all values 0, error = reward
    assert rk.statistics(agent.policy.learner) == {"td_error": env.reward}


# ---------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"gamma": 1.5},
            ValueError,
            r"QLearningLearner: gamma must be a number in \[0, 1\], got 1.5",
        ),
        ({"gamma": -0.1}, ValueError, r"gamma must be a number in \[0, 1\], got -0.1"),
        ({"gamma": "0.9"}, TypeError, "gamma must be a number"),
        ({"n": 0}, ValueError, "QLearningLearner: n must be a positive integer, got 0"),
        ({"n": 2.0}, ValueError, "n must be a positive integer, got 2.0"),
        ({"n": True}, ValueError, "n must be a positive integer, got True"),
        (
            {"method": "q_learning"},
            ValueError,
            r"TDLearner: unknown method 'q_learning'; expected one of \['double_qlearning', "
            r"'expected_sarsa', 'qlearning', 'sarsa', 'td0'\]",
        ),
        ({"method": "td0"}, TypeError, "method 'td0' needs a TabularVApproximator"),
        ({"explorer": object()}, TypeError, "explorer must have a prob"),
        ({"second_approximator": rk.TabularQApproximator(3, 2)}, TypeError, "only used by"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        TDLearner(rk.TabularQApproximator(3, 2), **kwargs)


def test_bad_approximators():
    with pytest.raises(TypeError, match="method 'sarsa' needs a TabularQApproximator"):
        TDLearner(rk.TabularVApproximator(3), method="sarsa")
    with pytest.raises(TypeError, match="needs a TabularQApproximator.*got str"):
        TDLearner("table")
    with pytest.raises(ValueError, match="second_approximator's table has shape"):
        TDLearner(
            rk.TabularQApproximator(3, 2),
            method="double_qlearning",
            second_approximator=rk.TabularQApproximator(4, 2),
        )
    q = rk.TabularQApproximator(3, 2)
    with pytest.raises(ValueError, match="different object"):
        TDLearner(q, method="double_qlearning", second_approximator=q)


def test_subclass_rejects_another_method():
    with pytest.raises(ValueError, match="SARSALearner: method must be 'sarsa'.*'qlearning'"):
        SARSALearner(rk.TabularQApproximator(3, 2), method="qlearning")
    with pytest.raises(ValueError, match="unknown method 'nope'"):
        SARSALearner(rk.TabularQApproximator(3, 2), method="nope")


def test_expected_sarsa_without_an_explorer_says_what_is_missing():
    env = walk(5, seed=0)
    q = rk.TabularQApproximator(env.state_space, env.action_space)
    learner = TDLearner(q, method="expected_sarsa")
    policy = rk.VBasedPolicy(learner, rk.RandomPolicy(seed=0))  # sets no explorer
    with pytest.raises(RuntimeError, match="ExpectedSARSALearner: needs the behaviour policy"):
        rk.run(rk.Agent(policy, rk.VectorSARTTrajectory()), env, rk.StopAfterNEpisodes(1))


@pytest.mark.parametrize("method", ["sarsa", "expected_sarsa", "qlearning", "double_qlearning"])
def test_tuple_states_index_the_table(method):
    """Blackjack's (player sum, dealer card, usable ace) states index a 3-D table directly."""
    env = rk.GymEnv("Blackjack-v1", seed=0)
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.1)
    extra = {"seed": 0} if method == "double_qlearning" else {}
    learner = TDLearner(q, method=method, **extra)
    run_episodes(q_agent(learner, 0.2, seed=0), env, 200)
    assert q.table.shape == (32, 11, 2, 2)
    assert np.count_nonzero(q.table) > 50
    assert learner(env).shape == (2,)
