"""Hindsight experience replay recipes (docs/how-to/observations.md): DQN with ``rk.HER`` on
the bit-flipping task (``rlkit/BitFlipping-v0``, :mod:`rlkit.envs.toy.bit_flipping`).

* ``HER_DQN_BitFlipping``: 15 bits (the HER paper's task that DQN alone does
  not solve: the reward is -1 until every bit equals the goal), DQN built by the one-liner
  ``rk.DQN.agent(env, her=rk.HER("future", 4), ...)``: one hidden layer of 256 (the HER
  paper's), Adam 1e-3, batch 256, replay 100k, learning from 1,000 steps, one gradient step per
  step, gamma 0.98 (the paper's), target synced every 1,000 steps, epsilon 1 -> 0.05 over the
  first 10% of 20k steps. ``--set her=false`` runs the same DQN without relabelling;
  ``--set random_goal=true`` draws a random goal each episode (the HER paper's task; the goal
  is all ones otherwise, Stable-Baselines3's). The contrast: with random goals, plain DQN
  stays at 0 successes on seeds 0-2 where HER reaches 0.99-1.00; with the fixed goal it
  learns on some seeds from the starts random flips solve (benchmarks/
  results_structure_her.txt). Differences from the HER paper: one environment and
  epsilon-greedy exploration with a fixed schedule instead of its epochs/cycles of 16 episodes
  and 40 optimisation steps; from Stable-Baselines3's ``HerReplayBuffer``: none in the sampling
  (``future`` goals, ratio 4/5, complete episodes only, stored ``terminal``).

* ``HER_SAC_BitFlipping``: SAC with ``rk.HER("future", 4)``
  on the continuous bit-flipping task (``continuous=True``: ``Box(-1, 1, (n_bits,))`` actions,
  a bit flips where its action is above 0), 8 bits, built by
  ``rk.SAC.agent(env, her=rk.HER("future", 4), ...)``: MLPs 64-64, Adam 1e-3, batch 256,
  replay 100k, learning from 1,000 steps, gamma 0.95, tau 0.005, the entropy coefficient
  learned (SB3's defaults otherwise), 6k steps; ``--set her=false``: the same SAC without
  relabelling. A smaller claim than the DQN recipe's 15 bits, sized to a short test: it shows
  that HER works with SAC, not that SAC needs it there (plain SAC also solves 8 bits in 6k
  steps, greedy success 1.00 on seed 0).

* ``HER_SAC_FetchReach``: SAC with ``rk.HER("future", 4)`` on gymnasium-robotics'
  ``FetchReach-v4`` (the ``robotics`` extra: ``pip install 'gymnasium-robotics>=1.4'``; a
  missing package is a ``ModuleNotFoundError`` with that command), rl-baselines3-zoo's
  ``FetchReach-v1`` entry of ``hyperparams/sac.yml`` (revision c94924e5): 20k steps,
  ``MultiInputPolicy`` (rlkit: the Dict encoder, one encoder per key concatenated), replay
  1M, batch 256, gamma 0.95, Adam 1e-3, learning from 1,000 steps, the entropy coefficient
  learned, MLPs 64-64, ``HerReplayBuffer`` with ``future`` goals and ``n_sampled_goal`` 4; tau
  0.005, one gradient step per step and two critics (SB3's defaults, which the entry keeps),
  and the entry's ``normalize: True``: the run is in ``rk.VecNormalize`` with the zoo's
  arguments (SB3's defaults, observations and rewards, every key of the Dict observation,
  ``gamma`` the algorithm's 0.95) over a one-env ``rk.VectorGymEnv``; the replay stores raw
  transitions and each batch is normalised when it is drawn, after relabelling
  (docs/how-to/normalization.md); ``predict``, greedy evaluation and ``rk.save`` use the
  training statistics, frozen. Difference: the env is gymnasium-robotics' ``FetchReach-v4``
  (the zoo's ``-v1`` is the retired mujoco-py one). ``--set her=false``: the same SAC without
  relabelling; ``--set normalize=false``: without ``VecNormalize`` (the recipe before it had
  it); ``--set env=FetchReachDense-v4`` (or another gymnasium-robotics goal env) changes the
  task. Measured against SB3 in
  benchmarks/structure_fetch.py (benchmarks/results_structure_fetch.txt). Checkpoints hold
  the statistics, the raw replay, HER's state and MuJoCo's physics
  (rlkit/envs/mujoco_state.py): a run resumed from one, even in the middle of an episode,
  repeats the uninterrupted run bit for bit (tests/experiments/test_fetch_resume.py).

A greedy success rate (the fraction of episodes that reach the goal) is the return above
``-n_bits``: :func:`success_rate`; for FetchReach, :func:`fetch_success_rate` (the final
step's ``info["is_success"]``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

import rlkit as rk
from rlkit.core import checks
from rlkit.core.seeding import int_seed, spawn_seeds

from .continuous import SACParams
from .dqn import DQNParams, RecipeSeeds

__all__ = [
    "HERDQNParams",
    "HERDQN_BITFLIPPING",
    "FetchReachSACParams",
    "HERSAC_FETCHREACH",
    "success_rate",
    "fetch_success_rate",
    "bit_flipping_env",
    "fetch_env",
]

BIT_FLIPPING = "rlkit/BitFlipping-v0"


@dataclass(frozen=True)
class HERDQNParams(DQNParams):
    """DQN's recipe hyperparameters (:class:`~experiments.dqn.DQNParams`) and the goal task's:
    ``n_bits``, ``her`` (False: plain DQN, the same budget), ``strategy`` and
    ``n_sampled_goal`` (``rk.HER``'s), ``random_goal`` (True: a random goal each episode, the
    HER paper's task; False: all ones, Stable-Baselines3's).

    Example:
        >>> HERDQNParams(**{**vars(HERDQN_BITFLIPPING), "her": False}).her
        False
    """

    n_bits: int = 15
    her: bool = True
    strategy: str = "future"
    n_sampled_goal: int = 4
    random_goal: bool = False

    #: the DQNParams fields that are not rk.DQN.agent hyperparameters
    RUN_ONLY: ClassVar[tuple[str, ...]] = (
        "n_envs", "n_bits", "her", "strategy", "n_sampled_goal", "random_goal",
    )  # fmt: skip

    def check(self, owner: str) -> None:
        """DQNParams' checks, ``n_bits`` and the HER settings (``rk.HER`` names bad ones)."""
        super().check(owner)
        checks.positive_int(owner, "n_bits", self.n_bits)
        checks.instance_of(owner, "her", self.her, bool, "True or False")
        checks.instance_of(owner, "random_goal", self.random_goal, bool, "True or False")
        rk.HER(self.strategy, self.n_sampled_goal)

    def agent_hyperparameters(self) -> dict[str, Any]:
        """What ``rk.DQN.agent`` takes (the recipe's fields but the run-only ones), ``her``
        as an ``rk.HER`` or None."""
        fields = {k: v for k, v in vars(self).items() if k not in self.RUN_ONLY}
        her = rk.HER(self.strategy, self.n_sampled_goal) if self.her else None
        return {**fields, "her": her}


HERDQN_BITFLIPPING = HERDQNParams(
    total_steps=20_000,
    lr=1e-3,
    batch_size=256,
    buffer_size=100_000,
    learning_starts=1000,
    gamma=0.98,
    target_update_interval=1000,
    train_freq=1,
    gradient_steps=1,
    exploration_fraction=0.1,
    exploration_final_eps=0.05,
    hidden=(256,),
)


@dataclass(frozen=True)
class _GoalSACParams(SACParams):
    """SAC's recipe hyperparameters and the HER settings shared by the goal-task recipes:
    ``her`` (False: plain SAC), ``strategy``, ``n_sampled_goal``."""

    her: bool = True
    strategy: str = "future"
    n_sampled_goal: int = 4

    run_fields: ClassVar[tuple[str, ...]] = (
        *SACParams.run_fields, "her", "strategy", "n_sampled_goal",
    )  # fmt: skip

    def check(self, owner: str) -> None:
        """SACParams' checks and the HER settings (``rk.HER`` names bad ones)."""
        super().check(owner)
        checks.instance_of(owner, "her", self.her, bool, "True or False")
        rk.HER(self.strategy, self.n_sampled_goal)


@dataclass(frozen=True)
class HERSACParams(_GoalSACParams):
    """SAC's recipe hyperparameters (:class:`~experiments.continuous.SACParams`) and the goal
    task's: ``n_bits``, ``her`` (False: plain SAC), ``strategy``, ``n_sampled_goal``.

    Example:
        >>> sorted(HERSAC_BITFLIPPING.algorithm_config())[:3]
        ['batch_size', 'buffer_size', 'ent_coef']
    """

    n_bits: int = 8

    run_fields: ClassVar[tuple[str, ...]] = (*_GoalSACParams.run_fields, "n_bits")

    def check(self, owner: str) -> None:
        """The goal-task checks and ``n_bits``."""
        super().check(owner)
        checks.positive_int(owner, "n_bits", self.n_bits)


HERSAC_BITFLIPPING = HERSACParams(
    total_steps=6000,
    lr=1e-3,
    batch_size=256,
    buffer_size=100_000,
    learning_starts=1000,
    gamma=0.95,
    hidden=(64, 64),
)


@dataclass(frozen=True)
class FetchReachSACParams(_GoalSACParams):
    """SAC's recipe hyperparameters (:class:`~experiments.continuous.SACParams`) and the goal
    task's: ``env`` (a gymnasium-robotics goal env id), ``her`` (False: plain SAC),
    ``strategy``, ``n_sampled_goal``, ``normalize`` (True: the run is in ``rk.VecNormalize``
    with the learner's ``gamma``, rl-baselines3-zoo's ``normalize: True``).

    Example:
        >>> HERSAC_FETCHREACH.env, HERSAC_FETCHREACH.hidden, HERSAC_FETCHREACH.gamma
        ('FetchReach-v4', (64, 64), 0.95)
        >>> HERSAC_FETCHREACH.normalize
        True
    """

    env: str = "FetchReach-v4"
    #: run in ``rk.VecNormalize`` (gamma the learner's): rl-baselines3-zoo's ``normalize: True``
    normalize: bool = False

    run_fields: ClassVar[tuple[str, ...]] = (*_GoalSACParams.run_fields, "env", "normalize")

    def check(self, owner: str) -> None:
        """The goal-task checks, ``env`` and ``normalize``."""
        super().check(owner)
        checks.instance_of(owner, "normalize", self.normalize, bool, "True or False")
        if not isinstance(self.env, str) or not self.env:
            raise ValueError(
                f"{owner}: env must be a gymnasium-robotics goal env id such as "
                f"'FetchReach-v4', got {self.env!r}"
            )


# rl-baselines3-zoo hyperparams/sac.yml, FetchReach-v1 (revision c94924e5)
HERSAC_FETCHREACH = FetchReachSACParams(
    total_steps=20_000,
    lr=1e-3,
    batch_size=256,
    buffer_size=1_000_000,
    learning_starts=1000,
    gamma=0.95,
    hidden=(64, 64),
    normalize=True,  # the zoo's normalize: True: VecNormalize(env, gamma=0.95)
)


def bit_flipping_env(
    n_bits: int, seed: Any, n_envs: int = 1, continuous: bool = False, random_goal: bool = False
) -> rk.GymEnv | rk.VectorGymEnv:
    """The bit-flipping env (``n_envs`` sub-envs when above 1), seeded from ``seed`` (a
    ``SeedSequence``); ``random_goal``: a random goal each episode (else all ones).

    Example:
        >>> bit_flipping_env(4, np.random.SeedSequence(0)).state_space["desired_goal"].n
        4
    """
    kwargs = {"n_bits": n_bits, "continuous": continuous}
    if random_goal:  # only when set: the fixed-goal env's kwargs (and checkpoints) as before
        kwargs["random_goal"] = True
    if n_envs == 1:
        return rk.GymEnv(BIT_FLIPPING, seed=int_seed(seed), **kwargs)
    return rk.VectorGymEnv(BIT_FLIPPING, n_envs, seed=int_seed(seed), **kwargs)


def success_rate(
    policy: Any,
    n_bits: int,
    n_episodes: int = 100,
    seed: int = 0,
    continuous: bool = False,
    random_goal: bool = False,
) -> float:
    """The fraction of ``n_episodes`` greedy episodes (``rk.evaluate``, on a fresh env seeded
    from ``seed``, a random goal each episode if ``random_goal``) that reach the goal: those
    whose return is above ``-n_bits``.

    Example:
        >>> success_rate(rk.RandomPolicy(seed=0), n_bits=15, n_episodes=5)
        0.0
    """
    extra = {"random_goal": True} if random_goal else {}
    env = rk.GymEnv(BIT_FLIPPING, n_bits=n_bits, continuous=continuous, **extra)
    returns = np.asarray(rk.evaluate(policy, env, n_episodes, seed=seed).returns)
    return float(np.mean(returns > -n_bits))


def fetch_env(
    env_id: str, seed: Any, n_envs: int = 1, normalize_gamma: float | None = None
) -> rk.GymEnv | rk.VectorGymEnv | rk.VecNormalize:
    """The gymnasium-robotics goal env ``env_id`` (``n_envs`` sub-envs when above 1), seeded
    from ``seed`` (a ``SeedSequence``); with ``normalize_gamma`` it is in ``rk.VecNormalize``
    with that discount (rl-baselines3-zoo's ``normalize: True``: observations, every Dict key,
    and rewards) over an ``rk.VectorGymEnv``, even of one env. ``ModuleNotFoundError`` with
    the pip command when gymnasium-robotics is not installed.

    Example:
        >>> fetch_env("FetchReach-v4", np.random.SeedSequence(0)).state_space["desired_goal"]
        Box(-inf, inf, (3,), float64)
        >>> fetch_env("FetchReach-v4", np.random.SeedSequence(0), normalize_gamma=0.95).gamma
        0.95
    """
    from rlkit.envs.robotics import require_robotics

    require_robotics(f"the env {env_id!r}")
    if normalize_gamma is not None:
        env = rk.VectorGymEnv(env_id, n_envs, seed=int_seed(seed))
        return rk.VecNormalize(env, gamma=normalize_gamma)
    if n_envs == 1:
        return rk.GymEnv(env_id, seed=int_seed(seed))
    return rk.VectorGymEnv(env_id, n_envs, seed=int_seed(seed))


def fetch_success_rate(
    policy: Any, env_id: str = "FetchReach-v4", n_episodes: int = 100, seed: int = 0
) -> float:
    """The fraction of ``n_episodes`` greedy episodes of ``policy`` on a fresh ``env_id``
    (episode ``i`` reset with ``seed + i``) whose last step has ``info["is_success"]``
    (gymnasium-robotics' success: the gripper within 5 cm of the goal at the end).

    Example:
        >>> agent = rk.SAC.agent(fetch_env("FetchReach-v4", np.random.SeedSequence(0)), seed=0)
        >>> 0.0 <= fetch_success_rate(agent, n_episodes=2) <= 1.0
        True
    """
    from rlkit.envs.robotics import require_robotics

    require_robotics(f"the env {env_id!r}")
    import gymnasium as gym

    env = gym.make(env_id)
    successes = []
    for episode in range(n_episodes):
        obs, info = env.reset(seed=seed + episode)
        done = False
        while not done:
            action = policy.predict(obs)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        successes.append(bool(info.get("is_success", False)))
    env.close()
    return float(np.mean(successes))


@rk.experiment
def HER_DQN_BitFlipping(
    seed: int = 0, p: HERDQNParams = HERDQN_BITFLIPPING
) -> rk.Experiment:
    """DQN with hindsight experience replay on 15-bit flipping (``her=false``: plain DQN;
    ``random_goal=true``: a random goal each episode)."""
    s = RecipeSeeds.of(seed)
    env = bit_flipping_env(p.n_bits, s.env, p.n_envs, random_goal=p.random_goal)
    agent = rk.DQN.agent(env, seed=seed, **p.agent_hyperparameters())
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode(),
        description=(HER_DQN_BitFlipping.__doc__ or "").strip(),
        threads=1,
    )


def _goal_sac_experiment(
    p: _GoalSACParams, env: Any, policy_seed: Any, doc: str | None
) -> rk.Experiment:
    """SAC (with ``rk.HER(p.strategy, p.n_sampled_goal)`` unless ``p.her`` is False) on the
    goal env ``env`` for ``p.total_steps`` steps, recording training returns."""
    her = rk.HER(p.strategy, p.n_sampled_goal) if p.her else None
    agent = rk.SAC.agent(
        env, seed=int_seed(policy_seed), her=her, device=p.device, compile=p.compile,
        **p.algorithm_config(),
    )  # fmt: skip
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode(),
        description=(doc or "").strip(),
        threads=1,
    )


@rk.experiment
def HER_SAC_BitFlipping(
    seed: int = 0, p: HERSACParams = HERSAC_BITFLIPPING
) -> rk.Experiment:
    """SAC with hindsight experience replay on 8-bit flipping with continuous actions
    (``her=false``: plain SAC)."""
    p.check("HER_SAC_BitFlipping")
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env = bit_flipping_env(p.n_bits, env_seed, p.n_envs, continuous=True)
    return _goal_sac_experiment(p, env, policy_seed, HER_SAC_BitFlipping.__doc__)


@rk.experiment
def HER_SAC_FetchReach(
    seed: int = 0, p: FetchReachSACParams = HERSAC_FETCHREACH
) -> rk.Experiment:
    """SAC with hindsight experience replay on gymnasium-robotics' FetchReach-v4 with
    rl-baselines3-zoo's settings, in rk.VecNormalize as the zoo's normalize: True (the robotics
    extra; ``her=false``: plain SAC; ``normalize=false``: no VecNormalize)."""
    from rlkit.envs.robotics import require_robotics

    require_robotics("HER_SAC_FetchReach")
    p.check("HER_SAC_FetchReach")
    env_seed, policy_seed = spawn_seeds(seed, 2)
    env = fetch_env(p.env, env_seed, p.n_envs, p.gamma if p.normalize else None)
    return _goal_sac_experiment(p, env, policy_seed, HER_SAC_FetchReach.__doc__)
