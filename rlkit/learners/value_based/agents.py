"""``rk.DQN``, ``rk.QRDQN`` and ``rk.PrioritizedDQN``: a DQN-family agent in one line,
``rk.DQN.agent(env, seed=0, **hyperparameters)``, as ``rk.PPO.agent`` and ``rk.SAC.agent``.

The agent is the seven objects a DQN-family run composes: the Q-network's approximator (an MLP
trained by Adam), the learner, its target network, the replay sampler, the replay controller
(when to learn), the explorer (epsilon-greedy with a random warm-up) and the replay, built by
:mod:`.agent_parts` from the algorithm's hyperparameters (:mod:`.dqn_hyperparameters`,
Stable-Baselines3's defaults where none is given) and from the children of ``seed``
(:class:`~rlkit.learners.value_based.agent_parts.DQNSeeds`). The recipes (``experiments/dqn.py``)
build their agents through the same code, so ``rk.DQN.agent(env, seed=s, **recipe_parameters)``
on the recipe's environment learns the recipe's parameters bit for bit.

Differences from Stable-Baselines3 (see ``experiments/dqn.py``): ``train_freq``, ``learning_starts``
and ``target_update_interval`` count transitions, also with a vector env (SB3 counts vector
steps for ``train_freq``); training starts once the replay holds one batch; ``tau`` below 1
needs ``target_update_interval=1``.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ...approximators.cnn import is_image_space
from ...approximators.encoders import encoder_for
from ...approximators.neural import NeuralNetworkApproximator
from ...core.checks import non_negative_int
from ...policies.agent import Agent
from ...policies.q_based import QBasedPolicy
from ...trajectories.circular import CircularArraySARTTrajectory
from ...trajectories.her import HER
from ...trajectories.prioritized import PrioritizedCircularArraySARTTrajectory
from .agent_parts import (
    DQNSeeds,
    epsilon_explorer,
    image_settings,
    keeps_masks,
    q_approximator,
    replay_learner_settings,
)
from .dqn import DQNLearner
from .dqn_hyperparameters import (
    DQNHyperparameters,
    PrioritizedDQNHyperparameters,
    QRDQNHyperparameters,
    ValueBasedHyperparameters,
)
from .prioritized import PrioritizedDQNLearner
from .qr_dqn import QRDQNLearner

__all__ = [
    "ValueBasedAgent", "PrioritizedReplayAgent", "DQN", "QRDQN", "PrioritizedDQN",
    "check_env_spaces", "her_sampler", "state_dtype",
]  # fmt: skip


def check_env_spaces(owner: str, env: Any, any_observation: bool = False) -> None:
    """Refuse an env a DQN-family agent cannot act in, naming ``owner`` and the space: not
    an rlkit environment, actions not ``Discrete``, observations not a ``Box`` (images
    included: the agent builds a CNN for them, :func:`.agent_parts.image_settings`;
    ``any_observation``: or any space an encoder takes, :func:`rlkit.encoder_for`: Discrete,
    MultiBinary, MultiDiscrete, Dict, Tuple).

    Example:
        >>> import rlkit as rk
        >>> check_env_spaces("DQN", rk.GymEnv("Pendulum-v1"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        TypeError: DQN: needs a Discrete action space, got Box(-2.0, 2.0, (1,), float32); ...
    """
    if not hasattr(env, "state_space") or not hasattr(env, "action_space"):
        raise TypeError(
            f"{owner}: env must be an rlkit environment (rk.GymEnv or rk.VectorGymEnv), got "
            f"{type(env).__name__}: {env!r}; wrap it, e.g. rk.GymEnv('CartPole-v1', seed=0)"
        )
    if not isinstance(env.action_space, gym.spaces.Discrete):
        raise TypeError(
            f"{owner}: needs a Discrete action space, got {env.action_space}; for continuous "
            f"actions use rk.SAC.agent(env) or rk.TD3.agent(env)"
        )
    space = env.state_space
    if any_observation and not isinstance(space, gym.spaces.Box):
        encoder_for(space)  # a space no encoder takes: a TypeError naming it
        return
    if not isinstance(space, gym.spaces.Box):
        raise TypeError(
            f"{owner}: needs a Box observation space (arrays of numbers), got {space}; one-hot "
            f"encode discrete observations, or use a tabular learner (rk.TDLearner)"
        )


def state_dtype(env: Any) -> Any:
    """The dtype a replay stores ``env``'s observations in: ``uint8`` for images
    (``rlkit/approximators/cnn.py``: ``is_image_space``), else None (the replay's default).

    Example:
        >>> import rlkit as rk
        >>> state_dtype(rk.GymEnv("CartPole-v1")) is None
        True
    """
    return np.uint8 if is_image_space(env.state_space) else None


def her_sampler(owner: str, hp: Any, seed: np.random.SeedSequence, env: Any, replay: Any) -> HER:
    """``hp.her``'s strategy and ratio with ``hp.batch_size`` and ``seed``, relabelling with
    ``env``'s ``compute_reward``; a prioritized ``replay`` is refused (HER draws uniformly).

    Example:
        >>> import rlkit as rk
        >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
        >>> env = rk.GymEnv("rlkit/BitFlipping-v0", n_bits=4)
        >>> hp = DQNHyperparameters(her=rk.HER("final", 2), batch_size=64)
        >>> her_sampler("DQN", hp, DQNSeeds.of(0).sampler, env, None)
        HER(strategy='final', n_sampled_goal=2, batch_size=64)
    """
    if isinstance(replay, PrioritizedCircularArraySARTTrajectory):
        raise ValueError(
            f"{owner}: her={hp.her!r} draws transitions uniformly and cannot sample a "
            f"prioritized replay; use rk.DQN or rk.QRDQN"
        )
    return hp.her.configured(batch_size=hp.batch_size, seed=seed, env=env)


class ValueBasedAgent:
    """Base of the one-line DQN-family agents: ``X.agent(env, seed=0, **hyperparameters)``.

    A subclass names its hyperparameters' dataclass (``hyperparameters``), its learner's class
    and the hyperparameters that learner takes besides those every one takes
    (``learner_class``, ``learner_fields``), and says how its network and replay are built
    (:meth:`approximator`, :meth:`replay`); the explorer is epsilon-greedy with a random
    warm-up for every one. ``X.defaults()`` lists the hyperparameters and their defaults.

    Example:
        >>> import rlkit as rk
        >>> rk.DQN.defaults()["target_update_interval"], rk.QRDQN.defaults()["n_quantiles"]
        (10000, 200)
    """

    name: ClassVar[str] = "ValueBasedAgent"
    hyperparameters: ClassVar[type[ValueBasedHyperparameters]] = DQNHyperparameters
    #: whether observations of any space an encoder takes are accepted (else a non-image Box)
    any_observation: ClassVar[bool] = True
    #: the learner's class, and the hyperparameters it takes by name besides
    #: :func:`.agent_parts.replay_learner_settings`
    learner_class: ClassVar[type]
    learner_fields: ClassVar[tuple[str, ...]] = ()
    #: whether the learner draws from a generator of its own (seeded from the first child of
    #: the seed's network child, the network from the second)
    learner_seeded: ClassVar[bool] = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(
            f"{self.name} is not instantiated: build an agent with "
            f"rk.{self.name}.agent(env, seed=0, **hyperparameters)"
        )

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The hyperparameters and their default values."""
        return dataclasses.asdict(cls.hyperparameters())

    @classmethod
    def agent(
        cls, env: Any, *, seed: int | np.random.SeedSequence = 0, **hyperparameters: Any
    ) -> Agent:
        """A new learner for ``env`` (a single or vector env with ``Discrete`` actions and
        observations of any space an encoder takes, :func:`rlkit.encoder_for`; ``uint8``
        images ``(C, H, W)`` go through a CNN, ``cnn``: docs/how-to/images.md), inside
        ``rk.QBasedPolicy`` with its explorer, paired with its replay as an ``rk.Agent``.
        ``hyperparameters`` override the defaults (an unknown name or a bad value is refused,
        naming it). ``seed``: a non-negative integer, or a numpy ``SeedSequence`` (its next
        five children are spawned: :class:`DQNSeeds`)."""
        hp = cls.hyperparameters.of(cls.name, hyperparameters)
        check_env_spaces(cls.name, env, cls.any_observation)
        # images: the CNN body (and its paper's layer after it, unless hidden is given)
        hp = image_settings(cls.name, env.state_space, hp, "hidden" in hyperparameters)
        if not isinstance(seed, np.random.SeedSequence):
            seed = non_negative_int(cls.name, "seed", seed)
        seeds = DQNSeeds.of(seed)
        learner = cls.build_learner(env, hp, seeds)
        replay = cls.replay(env, hp)
        if hp.her is not None:  # hindsight relabelling: the sampler, seeded as the one it replaces
            learner.sampler = her_sampler(cls.name, hp, seeds.sampler, env, replay)
        policy = QBasedPolicy(learner, epsilon_explorer(hp, seeds.explorer))
        # rk.VecNormalize's statistics (live, frozen in the policy): predict, greedy evaluations
        # on raw envs and rk.save use them (rlkit/policies/normalized.py)
        normalizer = getattr(env, "observation_normalizer", None)
        if normalizer is not None:
            policy.observation_normalizer = normalizer
        return Agent(policy, replay)

    @classmethod
    def build_learner(cls, env: Any, hp: Any, seeds: DQNSeeds) -> Any:
        """The network's approximator (initialised from ``seeds.network``, or from its second
        child when the learner is ``learner_seeded``: the first seeds the learner) and its
        learner (sampling with ``seeds.sampler``)."""
        if not cls.learner_seeded:
            return cls.learner(cls.approximator(env, hp, seeds.network), hp, seeds.sampler)
        learner_seed, network_seed = seeds.network.spawn(2)
        return cls.learner(cls.approximator(env, hp, network_seed), hp, seeds.sampler, learner_seed)

    @classmethod
    def approximator(
        cls, env: Any, hp: Any, seed: np.random.SeedSequence
    ) -> NeuralNetworkApproximator:
        """The Q-network's approximator: one value per action."""
        return q_approximator(env, hp, seed)

    @classmethod
    def learner(
        cls,
        q: NeuralNetworkApproximator,
        hp: Any,
        sampler_seed: np.random.SeedSequence,
        seed: np.random.SeedSequence | None = None,
    ) -> Any:
        """A ``learner_class`` of ``q`` with the hyperparameters in ``learner_fields`` (``seed``:
        its own generator's, for those that have one)."""
        own = {name: getattr(hp, name) for name in cls.learner_fields}
        if seed is not None:
            own["seed"] = seed
        return cls.learner_class(q, **own, **replay_learner_settings(q, hp, sampler_seed))

    @classmethod
    def replay(cls, env: Any, hp: Any) -> Any:
        """The replay: ``buffer_size`` transitions, the oldest overwritten (images kept as
        ``uint8``, as the image recipes keep them); keeping the next states' legal-action masks
        when ``env`` exposes them (:func:`.agent_parts.keeps_masks`: ``legal_action_masks=False``
        opts out), so the target's max is masked."""
        return CircularArraySARTTrajectory(
            hp.buffer_size, env.state_space, env.action_space,
            legal_action_masks=keeps_masks(env, hp), state_dtype=state_dtype(env),
        )  # fmt: skip


class PrioritizedReplayAgent(ValueBasedAgent):
    """Base of the one-line agents on a prioritized replay (``rk.PrioritizedDQN``,
    ``rk.Rainbow``): ``alpha``, and ``beta`` annealed to ``beta_end`` over the run's gradient
    steps.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> type(rk.PrioritizedDQN.agent(env, seed=0).trajectory).__name__
        'PrioritizedCircularArraySARTTrajectory'
    """

    @classmethod
    def replay(cls, env: Any, hp: Any) -> PrioritizedCircularArraySARTTrajectory:
        """The prioritized replay, ``beta`` annealed over the run's gradient steps (images and
        masks: as :meth:`ValueBasedAgent.replay`)."""
        return PrioritizedCircularArraySARTTrajectory(
            hp.buffer_size,
            env.state_space,
            env.action_space,
            alpha=hp.alpha,
            beta=hp.beta,
            beta_end=hp.beta_end,
            beta_steps=max(hp.n_gradient_steps, 1),
            legal_action_masks=keeps_masks(env, hp),
            state_dtype=state_dtype(env),
        )


class DQN(ValueBasedAgent):
    """DQN (Mnih et al. 2015) in one line: ``rk.DQN.agent(env, seed=0, **hyperparameters)``, a
    :class:`~rlkit.DQNLearner` (target network, Huber loss) with Stable-Baselines3's defaults
    (:class:`~rlkit.learners.value_based.dqn_hyperparameters.DQNHyperparameters`: ``lr`` 1e-4,
    ``buffer_size`` 1e6, ``learning_starts`` 100, ``batch_size`` 32, ``gamma`` 0.99,
    ``train_freq`` 4, ``gradient_steps`` 1, ``target_update_interval`` 10,000, epsilon 1 ->
    0.05 over the first 10% of ``total_steps``, ``max_grad_norm`` 10, ``hidden`` (64, 64)),
    plus ``n_step``, ``double``, ``loss``, ``adam_eps``, ``device`` and ``compile``.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> agent = rk.DQN.agent(env, seed=0)
        >>> agent.policy.learner
        DQNLearner(NeuralNetworkApproximator(...), gamma=0.99, double=False, loss='huber', target=TargetNetwork(Sequential, sync_every=10000))
        >>> small = rk.DQN.agent(env, seed=0, learning_starts=50, total_steps=200)
        >>> _ = rk.run(small, env, rk.StopAfterNSteps(200))
        >>> small.policy.learner.gradient_steps  # every 4th step after the 50 random ones
        38

    On ``uint8`` image observations ``(C, H, W)`` the network starts with a CNN
    (``rlkit/approximators/cnn.py``; ``cnn``: the Nature CNN for frames of 36x36 or more,
    MinAtar's below) followed by its paper's layer (``hidden`` ``(512,)`` or ``(128,)`` unless
    given), and the replay keeps ``uint8`` (docs/how-to/images.md):

        >>> import torch
        >>> breakout = rk.GymEnv(rk.make_minatar_env("MinAtar/Breakout-v1"), seed=0)
        >>> q = rk.DQN.agent(breakout, seed=0, buffer_size=1000).policy.learner.model
        >>> q[0].cnn, q(torch.zeros(1, 4, 10, 10, dtype=torch.uint8)).shape
        ('minatar', torch.Size([1, 3]))
    """  # noqa: E501

    name = "DQN"
    hyperparameters = DQNHyperparameters
    learner_class = DQNLearner
    learner_fields = ("loss", "compile")


class PrioritizedDQN(PrioritizedReplayAgent):
    """Double DQN on prioritized replay (Schaul et al. 2016) in one line:
    ``rk.PrioritizedDQN.agent(env, seed=0, **hyperparameters)``, a
    :class:`~rlkit.PrioritizedDQNLearner` on an ``rk.PrioritizedCircularArraySARTTrajectory``
    with ``alpha`` 0.6 and ``beta`` 0.4 -> ``beta_end`` 1 over the run's gradient steps (the
    ``PrioritizedDQN_CartPole`` recipe's), the rest DQN's (``rk.DQN``, Stable-Baselines3's
    defaults) with ``double=True``.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> agent = rk.PrioritizedDQN.agent(env, seed=0, learning_starts=50, total_steps=200)
        >>> _ = rk.run(agent, env, rk.StopAfterNSteps(200))
        >>> agent.policy.learner.double, agent.policy.learner.gradient_steps
        (True, 38)
    """

    name = "PrioritizedDQN"
    hyperparameters = PrioritizedDQNHyperparameters
    learner_class = PrioritizedDQNLearner
    learner_fields = ("loss", "compile")


class QRDQN(ValueBasedAgent):
    """QR-DQN (Dabney et al. 2018) in one line: ``rk.QRDQN.agent(env, seed=0,
    **hyperparameters)``, a :class:`~rlkit.QRDQNLearner` with SB3-contrib's defaults
    (:class:`~rlkit.learners.value_based.dqn_hyperparameters.QRDQNHyperparameters`:
    ``n_quantiles`` 200, ``lr`` 5e-5, epsilon 1 -> 0.01 over 0.5% of ``total_steps``, no
    gradient clipping, Adam's epsilon ``0.01 / batch_size``; the rest DQN's).

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> agent = rk.QRDQN.agent(env, seed=0, n_quantiles=10, learning_starts=50)
        >>> _ = rk.run(agent, env, rk.StopAfterNSteps(100))
        >>> agent.policy.learner.n_quantiles, agent.policy.learner.gradient_steps
        (10, 13)
    """

    name = "QRDQN"
    hyperparameters = QRDQNHyperparameters
    learner_class = QRDQNLearner
    learner_fields = ("n_quantiles", "kappa", "compile")

    @classmethod
    def approximator(
        cls, env: Any, hp: Any, seed: np.random.SeedSequence
    ) -> NeuralNetworkApproximator:
        """The quantile network's approximator: ``n_quantiles`` values per action."""
        return q_approximator(env, hp, seed, n_quantiles=hp.n_quantiles)
