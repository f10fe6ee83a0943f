"""FrameStackReplay: each frame stored once, stacks rebuilt exactly, never across episodes."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from state_helpers import assert_same as same_state

import rlkit as rk
from rlkit.core.state import get_state, set_state
from rlkit.trajectories.frame_stack import FrameStackReplay

K = 4


class CountingFrames(gym.Env):
    """Frames of 2x3 pixels whose value counts the steps, episodes of `length` steps
    (terminated, or truncated when `truncate`); each episode's frames start at 100 * episode."""

    observation_space = gym.spaces.Box(0, 255, (2, 3), np.uint8)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, length: int = 5, truncate: bool = False) -> None:
        self.length, self.truncate, self.episode, self.t = length, truncate, -1, 0

    def _frame(self):
        return np.full((2, 3), (100 * self.episode + self.t) % 256, np.uint8)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.episode += 1
        self.t = 0
        return self._frame(), {}

    def step(self, action):
        self.t += 1
        end = self.t >= self.length
        return self._frame(), 1.0, end and not self.truncate, end and self.truncate, {}


def stacked(length: int = 5, truncate: bool = False) -> gym.Env:
    return gym.wrappers.FrameStackObservation(CountingFrames(length, truncate), K)


def record_both(env: rk.AbstractEnv, capacity: int, steps: int, **kwargs):
    """The same run recorded by a FrameStackReplay (through the Agent) and by a plain uint8
    replay of whole stacks (through a hook): what the env gave."""
    compact = FrameStackReplay(capacity, env.state_space, env.action_space, **kwargs)
    plain = rk.CircularArraySARTTrajectory(
        capacity, env.state_space, env.action_space, state_dtype=np.uint8
    )
    agent = rk.Agent(rk.RandomPolicy(seed=0), compact)
    rk.run(agent, env, rk.StopAfterNSteps(steps), Mirror(plain))
    return compact, plain


class Mirror(rk.AbstractHook):
    """Records every transition into a plain replay."""

    def __init__(self, plain):
        self.plain = plain

    def pre_act(self, policy, env, action):
        if isinstance(env, rk.AbstractVectorEnv):
            self.plain.begin_transitions(env.state, action)
        else:
            self.plain.begin_transition(env.state, action)

    def post_act(self, policy, env):
        if isinstance(env, rk.AbstractVectorEnv):
            self.plain.end_transitions(
                env.reward, env.is_terminated, env.is_truncated, env.final_state
            )
        else:
            self.plain.end_transition(env.reward, env.is_terminated, env.is_truncated, env.state)


def assert_same(compact, plain):
    assert len(compact) == len(plain) and compact.head == plain.head
    slots = plain.ordered_indices()
    np.testing.assert_array_equal(compact.state[slots], plain.state[slots])
    np.testing.assert_array_equal(compact.next_state[slots], plain.next_state[slots])
    for trace in ("action", "reward", "terminal", "truncated"):
        np.testing.assert_array_equal(getattr(compact, trace), getattr(plain, trace))


@pytest.mark.parametrize("truncate", [False, True])
def test_stacks_equal_what_the_env_gave_and_never_cross_episodes(truncate):
    env = rk.GymEnv(stacked(length=5, truncate=truncate), seed=0)
    compact, plain = record_both(env, 50, 23)
    assert_same(compact, plain)
    # an episode's first stack repeats its first frame; the second frame of episode 2 (value
    # 201) is stacked with three copies of 200, never with frames of episode 1
    first = np.flatnonzero(compact.state[np.arange(23)][:, -1, 0, 0] == 200)[0]
    assert compact.state[first][:, 0, 0].tolist() == [200] * 4
    assert compact.next_state[first][:, 0, 0].tolist() == [200, 200, 200, 201]
    # the real final observation of the episode is kept (also when truncated)
    last = first - 1
    assert compact.next_state[last][:, 0, 0].tolist() == [102, 103, 104, 105]


def test_wrapping_around_and_samplers():
    env = rk.GymEnv(stacked(length=7), seed=0)
    compact, plain = record_both(env, 40, 133)  # wraps three times
    assert_same(compact, plain)
    for sampler in (rk.BatchSampler(16, seed=3), rk.NStepBatchSampler(16, 3, 0.9, seed=3)):
        a = sampler.sample(compact)
        b = type(sampler)(**_settings(sampler)).sample(plain)
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])


def _settings(sampler):
    if isinstance(sampler, rk.NStepBatchSampler):
        return {"batch_size": 16, "n": 3, "gamma": 0.9, "seed": 3}
    return {"batch_size": 16, "seed": 3}


def test_vector_env():
    env = rk.VectorGymEnv([lambda: stacked(5), lambda: stacked(3), lambda: stacked(4)], seed=0)
    compact, plain = record_both(env, 30, 150)
    assert_same(compact, plain)
    assert compact.stride == 3


def test_short_episodes_grow_the_frame_ring():
    env = rk.GymEnv(stacked(length=1), seed=0)  # two frames per transition
    compact, plain = record_both(env, 20, 100)
    assert_same(compact, plain)
    assert compact.frame_capacity > 20 + 20 // 32 + 2 * K


def test_bytes_per_atari_transition():
    pytest.importorskip("ale_py")
    env = rk.GymEnv(rk.make_atari_env("ALE/Pong-v5"), seed=0)
    compact, plain = record_both(env, 300, 400)
    assert_same(compact, plain)
    frame = 84 * 84
    per_transition = compact.nbytes / compact.capacity
    assert per_transition <= 1.1 * frame, per_transition / frame
    assert plain.state.nbytes / plain.capacity == 4 * frame  # the plain one: 8 frames in all


def test_checkpoint_bit_exact():
    env = rk.GymEnv(stacked(length=6), seed=0)
    compact, _ = record_both(env, 25, 61)
    state = get_state(compact)
    other = FrameStackReplay(25, env.state_space, env.action_space)
    set_state(other, state)
    slots = compact.ordered_indices()
    np.testing.assert_array_equal(other.state[slots], compact.state[slots])
    np.testing.assert_array_equal(other.next_state[slots], compact.next_state[slots])
    a = rk.BatchSampler(8, seed=1).sample(compact)
    b = rk.BatchSampler(8, seed=1).sample(other)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    # and recording goes on identically
    frame = np.full((4, 2, 3), 7, np.uint8)
    for t in (compact, other):
        t.cut_episode()
        t.append(frame, 1, 0.5, False, False, frame)
    np.testing.assert_array_equal(get_state(compact)["frames"], get_state(other)["frames"])
    last = np.array([compact.head - 1])
    np.testing.assert_array_equal(other.next_state[last], frame[None])


def test_refuses_observations_that_are_not_frame_stacks():
    t = FrameStackReplay(10, state_shape=(2, 1, 1))
    with pytest.raises(ValueError, match="first observation must be 2 copies"):
        t.begin_transition(np.array([1, 2], np.uint8).reshape(2, 1, 1), 0)
    t = FrameStackReplay(10, state_shape=(2, 1, 1))
    t.begin_transition(np.ones((2, 1, 1), np.uint8), 0)
    with pytest.raises(ValueError, match="shifted by one frame"):
        t.end_transition(0.0, False, False, np.array([5, 6], np.uint8).reshape(2, 1, 1))
    with pytest.raises(TypeError, match="uint8 Box"):
        FrameStackReplay(10, gym.spaces.Box(-1.0, 1.0, (4, 3, 3)))
    with pytest.raises(ValueError, match="frame_capacity"):
        FrameStackReplay(10, state_shape=(4, 2, 2), frame_capacity=5)


class RandomFrames(gym.Env):
    """10x10 uint8 frames drawn from the env's generator; reward 1 for action 1 when the frame's
    mean is high; episodes end at random (terminated) or after 30 steps (truncated)."""

    observation_space = gym.spaces.Box(0, 255, (10, 10), np.uint8)
    action_space = gym.spaces.Discrete(2)

    def __init__(self):
        self.t = 0
        self.frame = np.zeros((10, 10), np.uint8)

    def _draw(self):
        self.frame = self.np_random.integers(0, 256, (10, 10), dtype=np.uint8)
        return self.frame

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._draw(), {}

    def step(self, action):
        reward = float(action == int(self.frame.mean() > 127.5))
        self.t += 1
        terminated = bool(self.np_random.random() < 0.05)
        return self._draw(), reward, terminated, self.t >= 30 and not terminated, {}


def pixel_dqn(seed: int = 0):
    """A small image DQN (MinAtar's CNN) on stacked random frames, replay in a FrameStackReplay."""
    from rlkit.approximators.neural import q_network

    env = rk.GymEnv(gym.wrappers.FrameStackObservation(RandomFrames(), K), seed=seed)
    net = q_network(env.state_space, env.action_space, (16,), cnn="minatar", seed=seed)
    import torch

    q = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    learner = rk.DQNLearner(
        q,
        target=rk.TargetNetwork(q, sync_every=50),
        sampler=rk.NStepBatchSampler(8, 3, 0.99, seed=seed),
        controller=rk.InsertSampleRatioController(40, 4, 1),
        double=True,
    )
    explorer = rk.EpsilonGreedyExplorer(0.1, seed=seed)
    replay = FrameStackReplay(120, env.state_space, env.action_space)
    return rk.Agent(rk.QBasedPolicy(learner, explorer), replay), env


class Boom(RuntimeError):
    pass


class Trap(rk.AbstractHook):
    def __init__(self, at=None):
        self.at, self.t = at, 0

    def post_act(self, policy, env):
        self.t += 1
        if self.t == self.at:
            raise Boom

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


def test_kill_and_resume_of_a_pixel_dqn_is_bit_exact(tmp_path):
    """Through the checkpoint files: replay (wrapped around), network, optimizer, generators,
    env and returns equal the uninterrupted run's."""
    pytest.importorskip("torch")
    from rlkit.hooks.checkpoint import CheckpointHook

    def run(folder, trap, resume=False):
        agent, env = pixel_dqn()
        hook = rk.TotalRewardPerEpisode() + trap + CheckpointHook(folder, every_n_steps=90)
        resume_from = folder if resume else None
        rk.run(agent, env, rk.StopAfterNSteps(300), hook, resume_from=resume_from)
        return agent, env, hook

    reference = run(tmp_path / "reference", Trap())
    with pytest.raises(Boom):
        run(tmp_path / "run", Trap(at=250))  # the last checkpoint: step 180
    resumed = run(tmp_path / "run", Trap(), resume=True)
    assert resumed[0].trajectory.n_inserted == 300 and resumed[0].trajectory.is_full
    assert resumed[0].policy.learner.gradient_steps > 0
    assert resumed[2][0].rewards == reference[2][0].rewards
    same_state(get_state(resumed[0]), get_state(reference[0]), "agent")
    same_state(get_state(resumed[1]), get_state(reference[1]), "env")
