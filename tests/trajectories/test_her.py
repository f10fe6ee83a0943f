"""rk.HER: relabelling at sample time on hand-written episodes (future/final/episode goals only
from the same episode, rewards recomputed with compute_reward, the relabel fraction), vector
envs with interleaved sub-env episodes, truncated and running episodes, an overwritten episode
start, bad input and checkpoints."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk

BOX = gym.spaces.Box(-1e6, 1e6, (1,), np.float32)
SPACE = gym.spaces.Dict({"observation": BOX, "achieved_goal": BOX, "desired_goal": BOX})
GOAL = -7.0  # every stored desired goal: never achieved


def reward_fn(achieved, desired, info):
    """0 where the goals are equal, else -1 (vectorised); checks it gets one info per row."""
    achieved, desired = np.asarray(achieved), np.asarray(desired)
    assert len(info) == len(achieved)
    return np.where(np.any(achieved != desired, axis=-1), -1.0, 0.0)


def obs(code: float) -> dict[str, np.ndarray]:
    """An observation whose achieved goal (and observation) is ``code``."""
    return {"observation": np.array([code]), "achieved_goal": np.array([code]),
            "desired_goal": np.array([GOAL])}  # fmt: skip


def code(episode: int, step: int) -> float:
    """The achieved goal after ``step`` steps of ``episode`` (unique)."""
    return 1000.0 * episode + step


def write_episode(t, episode: int, length: int, *, end: str = "terminal") -> None:
    """``length`` transitions of ``episode``; the last one ``terminal`` / ``truncated`` / not
    ending (``"running"``)."""
    for step in range(length):
        last = step == length - 1
        t.append(obs(code(episode, step)), 0, -1.0, last and end == "terminal",
                 last and end == "truncated", obs(code(episode, step + 1)))  # fmt: skip


def trajectory(capacity: int = 1000) -> rk.CircularArraySARTTrajectory:
    return rk.CircularArraySARTTrajectory(capacity, SPACE, gym.spaces.Discrete(2))


def her(strategy: str = "future", n: int = 4, batch: int = 500, seed: int = 0) -> rk.HER:
    return rk.HER(strategy, n, batch_size=batch, seed=seed, compute_reward=reward_fn)


def split(batch):
    """Per row: (episode, step) of the transition, and the goal's (episode, step)."""
    state = batch["state"]["observation"][:, 0]
    goal = batch["state"]["desired_goal"][:, 0]
    return state // 1000, state % 1000, goal // 1000, goal % 1000


def test_future_goals_come_from_later_steps_of_the_same_episode():
    t = trajectory()
    for episode, length in enumerate([5, 3, 8, 1, 6]):
        write_episode(t, episode, length, end="terminal" if episode % 2 else "truncated")
    sampler = her("future", 4)
    batch = sampler.sample(t, n_batches=20)
    assert sampler.n_virtual == 400  # int(500 * 4 / 5): the first rows of each batch
    virtual = np.tile(np.arange(500) < 400, 20)
    episode, step, goal_episode, goal_step = split(batch)
    assert (goal_episode[virtual] == episode[virtual]).all()
    assert (goal_step[virtual] >= step[virtual] + 1).all()  # a later next achieved goal
    assert (batch["state"]["desired_goal"][~virtual] == GOAL).all()  # real rows untouched
    np.testing.assert_array_equal(
        batch["next_state"]["desired_goal"], batch["state"]["desired_goal"]
    )
    # every later step of an episode is drawn: of step 0 of episode 2 (8 steps), goals 1..8
    first = virtual & (episode == 2) & (step == 0)
    assert set(goal_step[first].astype(int)) == set(range(1, 9))
    # rewards: recomputed where relabelled, 0 exactly where the goal is the next achieved one
    expected = np.where(goal_step == step + 1, 0.0, -1.0)
    np.testing.assert_array_equal(batch["reward"][virtual], expected[virtual])
    assert (batch["reward"][~virtual] == -1.0).all()
    # terminal: the stored flag (Stable-Baselines3 does not recompute it)
    np.testing.assert_array_equal(batch["terminal"], t.terminal[batch["indices"]])


def test_final_and_episode_strategies():
    t = trajectory()
    lengths = [4, 7, 2]
    for episode, length in enumerate(lengths):
        write_episode(t, episode, length)
    episode, step, goal_episode, goal_step = split(her("final", 1, batch=400).sample(t))
    virtual = np.arange(400) < 200  # n_sampled_goal 1: half
    assert (goal_episode[virtual] == episode[virtual]).all()
    ends = np.array(lengths)[episode.astype(int)]
    assert (goal_step[virtual] == ends[virtual]).all()  # the last step's next achieved goal
    episode, step, goal_episode, goal_step = split(her("episode", 4, batch=2000).sample(t))
    virtual = np.arange(2000) < 1600
    assert (goal_episode[virtual] == episode[virtual]).all()
    earlier = virtual & (goal_step <= step)
    assert earlier.any()  # any step of the episode, earlier ones too
    assert set(goal_step[virtual & (episode == 1)].astype(int)) == set(range(1, 8))


def test_zero_sampled_goals_relabels_nothing():
    t = trajectory()
    write_episode(t, 0, 5)
    batch = her("future", 0, batch=50).sample(t)
    assert (batch["state"]["desired_goal"] == GOAL).all()


def test_running_episodes_are_not_sampled_until_they_end():
    t = trajectory()
    write_episode(t, 0, 3)
    write_episode(t, 1, 4, end="running")
    sampler = her()
    episode, *_ = split(sampler.sample(t, n_batches=4))
    assert set(episode.tolist()) == {0.0}
    # the running episode ends later: its transitions (seen running before) become drawable
    t.append(obs(code(1, 4)), 0, -1.0, True, False, obs(code(1, 5)))
    episode, step, goal_episode, goal_step = split(sampler.sample(t, n_batches=4))
    assert set(episode.tolist()) == {0.0, 1.0}
    assert (goal_episode[:400] == episode[:400]).all()


def test_an_episode_cut_by_a_reset_after_it_was_seen_running_is_closed():
    t = trajectory()
    write_episode(t, 0, 3, end="running")
    sampler = her()
    with pytest.raises(RuntimeError, match="HER: the replay holds no complete episode yet"):
        sampler.sample(t)
    t.cut_episode()  # PreEpisode of a new episode: the last transition is marked truncated
    write_episode(t, 1, 2, end="running")
    episode, step, goal_episode, goal_step = split(sampler.sample(t, n_batches=4))
    assert set(episode.tolist()) == {0.0}
    virtual = np.tile(np.arange(500) < 400, 4)
    assert (goal_episode[virtual] == 0).all() and (goal_step[virtual] <= 3).all()


def test_a_truncated_episode_ends_its_goals():
    t = trajectory()
    write_episode(t, 0, 6, end="truncated")
    write_episode(t, 1, 6)
    episode, step, goal_episode, goal_step = split(her("future", 4).sample(t, n_batches=4))
    virtual = np.tile(np.arange(500) < 400, 4)
    assert (goal_episode[virtual] == episode[virtual]).all()
    assert goal_step[virtual & (episode == 0)].max() == 6


def test_vector_env_interleaved_sub_env_episodes_never_mix():
    t = trajectory()
    # two sub-envs stepped together: sub-env 0's episodes last 3 steps, sub-env 1's 5
    steps = {0: 0, 1: 0}
    episodes = {0: 0, 1: 1}
    lengths = {0: 3, 1: 5}
    for _ in range(23):
        states, nexts, terms, truncs = [], [], [], []
        for c in (0, 1):
            e, s = episodes[c], steps[c]
            states.append(code(e, s))
            nexts.append(code(e, s + 1))
            end = s + 1 == lengths[c]
            terms.append(end and c == 0)
            truncs.append(end and c == 1)
            steps[c] = 0 if end else s + 1
            episodes[c] = e + 2 if end else e
        stack = lambda codes: {k: np.array(v) for k, v in  # noqa: E731
                               {"observation": [[x] for x in codes],
                                "achieved_goal": [[x] for x in codes],
                                "desired_goal": [[GOAL]] * 2}.items()}  # fmt: skip
        t.begin_transitions(stack(states), np.zeros(2, np.int64))
        t.end_transitions(np.full(2, -1.0), np.array(terms), np.array(truncs), stack(nexts))
    sampler = her("future", 4)
    episode, step, goal_episode, goal_step = split(sampler.sample(t, n_batches=20))
    virtual = np.tile(np.arange(500) < 400, 20)
    assert (goal_episode[virtual] == episode[virtual]).all()
    assert (goal_step[virtual] >= step[virtual] + 1).all()
    assert set((episode % 2).tolist()) == {0.0, 1.0}  # both sub-envs' episodes drawn
    assert ((episode % 2 == 0) & virtual <= (goal_step <= 3)).all()  # sub-env 0: 3 steps
    # the episodes still running at the end (sub-env 0: 2 of 3 steps, sub-env 1: 3 of 5) are
    # not drawn
    running = {episodes[0], episodes[1]}
    assert not set(episode.tolist()) & running


def test_an_episode_whose_start_was_overwritten_is_not_drawn():
    t = trajectory(capacity=10)
    sampler = her("future", 4, batch=200)
    write_episode(t, 0, 4)
    sampler.sample(t)
    write_episode(t, 1, 4)
    write_episode(t, 2, 4)  # 12 transitions in 10 slots: episode 0's first two overwritten
    episode, step, goal_episode, goal_step = split(sampler.sample(t, n_batches=5))
    assert set(episode.tolist()) == {1.0, 2.0}
    assert (goal_episode == episode)[np.tile(np.arange(200) < 160, 5)].all()
    # a long gap without sampling (more transitions than the capacity) works too
    for e in range(3, 9):
        write_episode(t, e, 3)
    episode, step, goal_episode, goal_step = split(sampler.sample(t, n_batches=5))
    assert set(episode.tolist()) <= {6.0, 7.0, 8.0}  # 8 slots of 3 whole episodes... and 6's
    assert (goal_episode == episode)[np.tile(np.arange(200) < 160, 5)].all()


def test_same_seed_same_batches_and_n_batches_equal_separate_calls():
    t = trajectory()
    for episode in range(6):
        write_episode(t, episode, 4)
    a = her(seed=3).sample(t, n_batches=3)
    b_sampler = her(seed=3)
    b = [b_sampler.sample(t) for _ in range(3)]
    np.testing.assert_array_equal(a["indices"], np.concatenate([x["indices"] for x in b]))
    np.testing.assert_array_equal(
        a["state"]["desired_goal"], np.concatenate([x["state"]["desired_goal"] for x in b])
    )


def test_state_dict_resumes_the_same_draws():
    t = trajectory(capacity=50)
    for episode in range(8):
        write_episode(t, episode, 4)
    write_episode(t, 8, 2, end="running")
    a = her(seed=1)
    a.sample(t)
    saved = a.state_dict()
    b = her(seed=99)
    b.load_state_dict(saved)
    for _ in range(2):
        write_episode(t, 9, 5)
        x, y = a.sample(t), b.sample(t)
        for key in ("indices", "reward"):
            np.testing.assert_array_equal(x[key], y[key])
        np.testing.assert_array_equal(x["state"]["desired_goal"], y["state"]["desired_goal"])
    with pytest.raises(ValueError, match="HER: checkpoint has strategy='future', this sampler"):
        her("final").load_state_dict(saved)


# ---- bad input, named ----
def test_bad_strategy_and_n_sampled_goal():
    with pytest.raises(ValueError, match=r"HER: strategy must be one of \['future', 'final', "):
        rk.HER("later")
    with pytest.raises(ValueError, match="HER: n_sampled_goal must be a non-negative integer.*-1"):
        rk.HER("future", -1)
    with pytest.raises(TypeError, match="HER: compute_reward must be callable"):
        rk.HER(compute_reward=3)


def test_env_without_goal_keys_is_refused_naming_its_keys():
    with pytest.raises(ValueError, match=r"'CartPole-v1' has observations with keys none"):
        rk.HER(env=rk.GymEnv("CartPole-v1"))
    space = gym.spaces.Dict({"observation": BOX, "goal": BOX})

    class NoGoals:
        state_space = space
        name = "NoGoals"

    with pytest.raises(ValueError, match=r"keys \['goal', 'observation'\]"):
        rk.HER(env=NoGoals())


def test_env_without_compute_reward_is_refused():
    class NoReward:
        state_space = SPACE
        name = "NoReward"

    with pytest.raises(ValueError, match="HER: the env 'NoReward' has no compute_reward"):
        rk.HER(env=NoReward())
    with pytest.raises(ValueError, match="HER: no compute_reward"):
        rk.HER().sample(trajectory())


def test_a_replay_without_goals_or_prioritized_is_refused():
    t = rk.CircularArraySARTTrajectory(10, gym.spaces.Box(-1, 1, (2,)), gym.spaces.Discrete(2))
    with pytest.raises(ValueError, match="HER: the replay's observations must be dicts"):
        her().sample(t)
    p = rk.PrioritizedCircularArraySARTTrajectory(10, SPACE, gym.spaces.Discrete(2))
    with pytest.raises(TypeError, match="HER: cannot sample from Prioritized"):
        her().sample(p)


def test_bit_flipping_vector_env_relabels_with_the_env_reward():
    env = rk.VectorGymEnv("rlkit/BitFlipping-v0", 2, seed=0, n_bits=5)
    t = rk.CircularArraySARTTrajectory(500, env.state_space, env.action_space)
    rk.run(rk.Agent(rk.RandomPolicy(seed=0), t), env, rk.StopAfterNSteps(60))
    sampler = rk.HER("final", 4, batch_size=64, seed=0, env=env)
    batch = sampler.sample(t)
    achieved = batch["next_state"]["achieved_goal"]
    desired = batch["state"]["desired_goal"]
    expected = -np.any(achieved != desired, axis=1).astype(np.float32)
    np.testing.assert_array_equal(batch["reward"], expected)
    assert sampler.stride == 2
