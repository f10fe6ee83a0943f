"""DQN from pixels: ``DQN_MinAtarBreakout`` (and the other MinAtar games with ``--set
env=MinAtar/<Game>-v1``) and ``DQN_Pong`` (Atari; a benchmark on a CPU: days).

Observations are ``uint8`` images laid out channels first (``rlkit/approximators/cnn.py``);
the network is ``q_network(..., cnn=...)``: MinAtar's small CNN (Young & Tian 2019: 16 3x3
convolutions, 128 units) or the Nature-DQN CNN (Mnih et al. 2015), pixels scaled to [0, 1]
inside it, so replay keeps ``uint8`` and the learner hands ``uint8`` batches to the network.

``DQN_MinAtarBreakout`` uses the DQN settings of Obando-Ceron & Castro's "Revisiting Rainbow"
(2021) study on MinAtar, built on Dopamine: replay of 100k transitions, batch 32, Adam
(lr 1e-4, eps 3.125e-4), Huber loss, discount 0.99, training every 4 steps after 1000,
target network synced every 1000 steps, epsilon from 1 to 0.01 over 250k steps; no frame
stacking (MinAtar's channels are the objects, Young & Tian), sticky actions 0.1 and difficulty
ramping as MinAtar's defaults; 10M steps (``total_steps``). Differences: Dopamine holds epsilon
at 1 for the first 1000 steps and then decays it over 250k steps, here the 250k count from the
first step (Stable-Baselines3's convention, as every DQN recipe); returns are the training
episodes' (Dopamine reports those too).

``DQN_Pong`` uses rl-baselines3-zoo's Atari DQN (``hyperparams/dqn.yml``, atari): 10M steps,
replay 100k, batch 32, Adam lr 1e-4, training every 4 steps after 100k, target synced every
1000 steps, epsilon 1 -> 0.01 over the first 10%, gradient norm clipped at 10, on
``ALE/Pong-v5`` with ``frameskip=1`` and ``repeat_action_probability=0`` (zoo's
``PongNoFrameskip-v4``) through ``rk.make_atari_env`` (``AtariPreprocessing`` with frame skip
4, episodic life, fire reset, rewards clipped to their sign, 4 stacked frames), replay in an
``rk.FrameStackReplay`` (one 84x84 frame per transition).

``Rainbow_MinAtarBreakout`` is Rainbow (C51, double Q-learning, a dueling head of noisy
streams, 3-step returns, prioritized replay) with the same study's Rainbow settings on
MinAtar: the DQN settings above, and 51 atoms on ``[-100, 100]`` (Dopamine's ``vmax = 100``
for MinAtar), 3-step returns, noisy layers (factorised, ``sigma0 = 0.5``) and no
epsilon-greedy (the noise explores, Dopamine's ``identity_epsilon``), priorities ``|loss| **
0.5`` with importance weights ``beta = 0.5`` held fixed (Dopamine: ``1 / sqrt(p)``
normalised by their max, new transitions at the largest priority), MinAtar's CNN and its
128-unit layer (``categorical_network(..., cnn="minatar")``,
``rlkit/approximators/distributional.py``). Differences from Dopamine: the first
``learning_starts`` actions are uniformly random (Stable-Baselines3's warm-up, as every
recipe here; Dopamine acts with the noisy network from the first step), the noisy layers
are the head's streams only (the 128-unit layer is deterministic, as in
``Rainbow_CartPole``), the loss is the cross-entropy of the projected target
(``rk.RainbowLearner``) and the target network is synced every 1000 environment steps.
Dopamine's own ``labs/environments/minatar/rainbow_breakout.gin`` (its "simplified" Rainbow:
no noise, no dueling, no double) uses Adam's rate 2.5e-4; the recipe keeps the study's 1e-4,
the same as ``DQN_MinAtarBreakout``'s, so the two recipes differ only in the algorithm.

The one-line agents build the same networks on image observations: ``rk.DQN.agent(env,
seed=s, **hyperparameters)`` and ``rk.Rainbow.agent`` with ``DQN_MinAtarBreakout``'s and
``Rainbow_MinAtarBreakout``'s parameters, on the recipe's environment, learn the recipe's
parameters bit for bit (``tests/learners/test_image_agents.py``).

Swapping the learner (Rainbow, C51) is one function: :func:`image_dqn_experiment` takes a
``make_learner(q, p, seeds)`` and a ``model`` (the network builder); the env, the replay, the
explorer and the hooks stay.

A missing package says what to install: ``pip install 'minatar>=1.0.15'`` or
``pip install 'ale-py>=0.9' 'opencv-python-headless>=4.8'`` (the ``atari`` and ``minatar``
extras of rlkit).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import rlkit as rk
from rlkit.core import checks
from rlkit.core.optional import require_torch
from rlkit.core.seeding import int_seed

from .dqn import DQNParams, RecipeSeeds, adam, replay_sampler, zoo_controller, zoo_explorer

__all__ = [
    "ImageDQNParams",
    "ImageRainbowParams",
    "MINATAR_DQN",
    "MINATAR_RAINBOW",
    "PONG_DQN",
    "image_env",
    "image_q_approximator",
    "image_replay",
    "image_dqn_experiment",
    "image_rainbow_experiment",
]

_CNNS = ("nature", "minatar")


@dataclass(frozen=True)
class ImageDQNParams(DQNParams):
    """A pixel DQN recipe's parameters: :class:`~experiments.dqn.DQNParams` and the game
    (``env``, an ``ALE/...`` or ``MinAtar/...`` id), the CNN (``cnn``: ``"nature"`` or
    ``"minatar"``; ``hidden`` is its fully connected part) and, for Atari, ``frame_stack``.

    Example:
        >>> MINATAR_DQN.cnn, MINATAR_DQN.hidden, PONG_DQN.frame_stack
        ('minatar', (128,), 4)
    """

    env: str = "MinAtar/Breakout-v1"
    cnn: str = "minatar"
    frame_stack: int = 4  # Atari only: frames per observation (MinAtar is not stacked)
    sticky_actions: float = 0.0  # Atari only: the ALE's repeat_action_probability

    @property
    def is_atari(self) -> bool:
        """Whether ``env`` is an Atari game (``ALE/...``)."""
        return self.env.startswith("ALE/")

    def check(self, owner: str) -> None:
        """:meth:`DQNParams.check`, and the game, the CNN and the frame stack."""
        super().check(owner)
        if not isinstance(self.env, str) or not self.env.startswith(("ALE/", "MinAtar/")):
            raise ValueError(
                f"{owner}: env must be an Atari id 'ALE/<Game>-v5' or a MinAtar id "
                f"'MinAtar/<Game>-v1' (Asterix, Breakout, Freeway, Seaquest, SpaceInvaders), "
                f"got {self.env!r}"
            )
        if self.cnn not in _CNNS:
            raise ValueError(f"{owner}: cnn must be one of {list(_CNNS)}, got {self.cnn!r}")
        checks.positive_int(owner, "frame_stack", self.frame_stack)
        checks.unit_interval(owner, "sticky_actions", self.sticky_actions)


# Obando-Ceron & Castro 2021 ("Revisiting Rainbow"), Dopamine's DQN on MinAtar
MINATAR_DQN = ImageDQNParams(
    total_steps=10_000_000,
    lr=1e-4,
    adam_eps=3.125e-4,
    batch_size=32,
    buffer_size=100_000,
    learning_starts=1000,
    gamma=0.99,
    target_update_interval=1000,
    train_freq=4,
    gradient_steps=1,
    exploration_fraction=250_000 / 10_000_000,
    exploration_final_eps=0.01,
    max_grad_norm=None,
    hidden=(128,),
    env="MinAtar/Breakout-v1",
    cnn="minatar",
)
# rl-baselines3-zoo hyperparams/dqn.yml, atari (Stable-Baselines3's DQN defaults otherwise)
PONG_DQN = ImageDQNParams(
    total_steps=10_000_000,
    lr=1e-4,
    batch_size=32,
    buffer_size=100_000,
    learning_starts=100_000,
    gamma=0.99,
    target_update_interval=1000,
    train_freq=4,
    gradient_steps=1,
    exploration_fraction=0.1,
    exploration_final_eps=0.01,
    max_grad_norm=10.0,
    hidden=(512,),
    env="ALE/Pong-v5",
    cnn="nature",
)


@dataclass(frozen=True)
class ImageRainbowParams(ImageDQNParams):
    """A pixel Rainbow recipe's parameters: :class:`ImageDQNParams` and Rainbow's support
    (``n_atoms``, ``v_min``, ``v_max``), noise (``sigma0``), prioritized replay (``alpha``;
    ``beta`` annealed to ``beta_end`` over the run's gradient steps, held when equal) and
    ``double`` Q-learning.

    Example:
        >>> MINATAR_RAINBOW.n_atoms, MINATAR_RAINBOW.n_step, MINATAR_RAINBOW.v_max
        (51, 3, 100.0)
    """

    n_atoms: int = 51
    v_min: float = -100.0
    v_max: float = 100.0
    sigma0: float = 0.5
    alpha: float = 0.5
    beta: float = 0.5
    beta_end: float = 0.5
    double: bool = True

    def check(self, owner: str) -> None:
        """:meth:`ImageDQNParams.check`, and the support, the noise and the priorities."""
        super().check(owner)
        from rlkit.approximators.distributional import check_support

        check_support(owner, self.n_atoms, self.v_min, self.v_max)
        checks.finite_float(owner, "sigma0", self.sigma0, low=0.0)
        checks.finite_float(owner, "alpha", self.alpha, low=0.0)
        checks.unit_interval(owner, "beta", self.beta)
        checks.unit_interval(owner, "beta_end", self.beta_end)
        checks.instance_of(owner, "double", self.double, bool, "True or False")


# Obando-Ceron & Castro 2021 ("Revisiting Rainbow"), Rainbow on MinAtar: DQN's settings above,
# and C51's support, 3-step returns, noisy dueling streams, prioritized replay, no epsilon
MINATAR_RAINBOW = ImageRainbowParams(
    **{
        **MINATAR_DQN.__dict__,
        "n_step": 3,
        "exploration_initial_eps": 0.0,
        "exploration_final_eps": 0.0,
    }
)


def _make(p: ImageDQNParams) -> Callable[[], Any]:
    """A function making one (sub-)environment of ``p.env``."""
    if p.is_atari:
        return lambda: rk.make_atari_env(
            p.env, frame_stack=p.frame_stack, repeat_action_probability=p.sticky_actions
        )
    return lambda: rk.make_minatar_env(p.env)


def image_env(
    p: ImageDQNParams, seed: np.random.SeedSequence, owner: str
) -> rk.GymEnv | rk.VectorGymEnv:
    """The training environment of ``p.env`` (``p.n_envs`` sub-envs of a sync
    ``rk.VectorGymEnv`` when above 1), seeded from ``seed``; a missing package is a
    ``ModuleNotFoundError`` naming ``owner`` and the pip command."""
    from rlkit.envs.images import require_atari, require_minatar

    (require_atari if p.is_atari else require_minatar)(owner)
    make = _make(p)
    if p.n_envs == 1:
        return rk.GymEnv(make(), seed=int_seed(seed))
    return rk.VectorGymEnv([make] * p.n_envs, seed=int_seed(seed))


def image_q_approximator(
    env: rk.AbstractEnv, p: ImageDQNParams, seed: np.random.SeedSequence, **head: Any
) -> rk.NeuralNetworkApproximator:
    """``p.cnn``'s body and a ReLU MLP of ``p.hidden`` (``head``: ``dueling``,
    ``n_quantiles``), initialised from ``seed``, trained by Adam with ``p``'s settings."""
    require_torch("the image recipes")
    from rlkit.approximators.neural import q_network

    net = q_network(
        env.state_space, env.action_space, p.hidden, cnn=p.cnn, seed=seed, **head
    )
    return rk.NeuralNetworkApproximator(
        net,
        lambda params: adam(params, lr=p.lr, eps=p.adam_eps),
        device=p.device,
        max_grad_norm=p.max_grad_norm,
    )


def image_replay(env: rk.AbstractEnv, p: ImageDQNParams) -> rk.CircularArraySARTTrajectory:
    """Replay of ``p.buffer_size`` transitions keeping ``uint8``: an ``rk.FrameStackReplay``
    (one frame per transition) for stacked Atari frames, a ``uint8`` ring buffer for MinAtar."""
    if p.is_atari and p.frame_stack > 1:
        return rk.FrameStackReplay(p.buffer_size, env.state_space, env.action_space)
    return rk.CircularArraySARTTrajectory(
        p.buffer_size, env.state_space, env.action_space, state_dtype=np.uint8
    )


def dqn_learner(q: rk.NeuralNetworkApproximator, p: ImageDQNParams, s: RecipeSeeds) -> Any:
    """DQN (target network, Huber loss) with ``p``'s schedules."""
    return rk.DQNLearner(
        q,
        target=rk.TargetNetwork(q, sync_every=p.target_update_interval),
        sampler=replay_sampler(p, s.sampler),
        controller=zoo_controller(p),
        gamma=p.gamma,
    )


def image_dqn_experiment(
    p: ImageDQNParams,
    seed: int,
    owner: str,
    make_learner: Callable[..., Any] = dqn_learner,
    model: Callable[..., rk.NeuralNetworkApproximator] = image_q_approximator,
) -> rk.Experiment:
    """``make_learner(model(env, p, seed), p, seeds)`` in a ``QBasedPolicy`` with the zoo's
    epsilon-greedy explorer, on ``p.env``, with :func:`image_replay`, for ``p.total_steps``
    steps, recording training returns; torch on one thread."""
    s = RecipeSeeds.of(seed)
    env = image_env(p, s.env, owner)
    learner = make_learner(model(env, p, s.network), p, s)
    return _q_experiment(learner, image_replay(env, p), env, p, s)


def image_rainbow_experiment(p: ImageRainbowParams, seed: int, owner: str) -> rk.Experiment:
    """Rainbow on ``p.env``: ``rk.Rainbow``'s learner (``rk.Rainbow.learner``, seeded as the
    one-liner seeds it) on ``categorical_network(..., dueling=True, noisy=True, cnn=p.cnn)``,
    a ``uint8`` prioritized replay, the zoo's explorer (epsilon 0 after the random warm-up),
    for ``p.total_steps`` steps, recording training returns; torch on one thread.

    Example:
        >>> from dataclasses import replace
        >>> exp = image_rainbow_experiment(replace(MINATAR_RAINBOW, total_steps=50), 0, "demo")
        >>> type(exp.policy.policy.learner).__name__, exp.policy.trajectory.state.dtype
        ('RainbowLearner', dtype('uint8'))
    """
    require_torch("the image recipes")
    from rlkit.approximators.distributional import categorical_network
    from rlkit.learners.value_based.agent_parts import network_approximator

    s = RecipeSeeds.of(seed)
    env = image_env(p, s.env, owner)
    learner_seed, network_seed = s.network.spawn(2)
    net = categorical_network(
        env.state_space, env.action_space, p.hidden, n_atoms=p.n_atoms, dueling=True,
        noisy=True, sigma0=p.sigma0, seed=network_seed, cnn=p.cnn,
    )  # fmt: skip
    learner = rk.Rainbow.learner(network_approximator(net, p), p, s.sampler, learner_seed)
    replay = rk.PrioritizedCircularArraySARTTrajectory(
        p.buffer_size, env.state_space, env.action_space, alpha=p.alpha, beta=p.beta,
        beta_end=p.beta_end, beta_steps=max(p.n_gradient_steps, 1), state_dtype=np.uint8,
    )  # fmt: skip
    return _q_experiment(learner, replay, env, p, s)


def _q_experiment(
    learner: Any, replay: Any, env: rk.AbstractEnv, p: ImageDQNParams, s: RecipeSeeds
) -> rk.Experiment:
    """The common tail of the image DQN and Rainbow recipes: ``learner`` in a ``QBasedPolicy``
    with the zoo's epsilon-greedy explorer (seeded by ``s.explorer``), recording into
    ``replay``, on ``env`` for ``p.total_steps`` steps, recording training returns; torch on
    one thread."""
    agent = rk.Agent(rk.QBasedPolicy(learner, zoo_explorer(p, s.explorer)), replay)
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode(),
        threads=1,
    )


# ---- recipes ----


@rk.experiment
def DQN_MinAtarBreakout(seed: int = 0, p: ImageDQNParams = MINATAR_DQN) -> rk.Experiment:
    """DQN on MinAtar Breakout (--set env=MinAtar/<Game>-v1 for the others) with
    "Revisiting Rainbow"'s settings: MinAtar's CNN, 10M steps."""
    return image_dqn_experiment(p, seed, "DQN_MinAtarBreakout")


@rk.experiment
def DQN_Pong(seed: int = 0, p: ImageDQNParams = PONG_DQN) -> rk.Experiment:
    """DQN on Atari Pong (ALE/Pong-v5, 4 stacked 84x84 frames) with rl-baselines3-zoo's
    settings: the Nature CNN, 10M steps (a benchmark: days on a CPU)."""
    return image_dqn_experiment(p, seed, "DQN_Pong")


@rk.experiment
def Rainbow_MinAtarBreakout(
    seed: int = 0, p: ImageRainbowParams = MINATAR_RAINBOW
) -> rk.Experiment:
    """Rainbow on MinAtar Breakout (--set env=MinAtar/<Game>-v1 for the others) with
    "Revisiting Rainbow"'s settings: 51 atoms on [-100, 100], noisy dueling streams, double,
    3-step, prioritized; MinAtar's CNN, 10M steps."""
    return image_rainbow_experiment(p, seed, "Rainbow_MinAtarBreakout")
