"""``rk.C51``, ``rk.IQN`` and ``rk.Rainbow``: the distributional learners in one line,
``rk.C51.agent(env, seed=0, **hyperparameters)``, built as ``rk.DQN.agent`` (:mod:`.agents`:
the same seed's children, explorer, replay sampler and controller), each with its own network
(``rlkit/approximators/distributional.py``) and learner. Like ``rk.DQN.agent`` they take
observations of any space an encoder takes (``Dict``, ``Tuple``, ``Discrete``, ...:
:func:`rlkit.encoder_for`, the encoder ``q_network`` puts first) and ``uint8`` images
``(C, H, W)``, through a CNN body (``cnn``: by default the Nature CNN for frames of 36x36 or
more, MinAtar's below; docs/how-to/images.md). The recipes of
``experiments/distributional.py`` build their agents through them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...approximators.distributional import categorical_network, iqn_network
from ...approximators.neural import NeuralNetworkApproximator
from .agent_parts import network_approximator
from .agents import PrioritizedReplayAgent, ValueBasedAgent
from .c51 import C51Learner
from .dqn_hyperparameters import C51Hyperparameters, IQNHyperparameters, RainbowHyperparameters
from .iqn import IQNLearner
from .rainbow import RainbowLearner

__all__ = ["C51", "IQN", "Rainbow"]


class C51(ValueBasedAgent):
    """C51 (Bellemare et al. 2017) in one line: ``rk.C51.agent(env, seed=0,
    **hyperparameters)``, a :class:`~rlkit.C51Learner` on a categorical MLP with
    :class:`~rlkit.learners.value_based.dqn_hyperparameters.C51Hyperparameters` (51 atoms on
    ``[-100, 100]``, the rest Stable-Baselines3's DQN defaults).

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> agent = rk.C51.agent(env, seed=0, learning_starts=50, hidden=(32,))
        >>> _ = rk.run(agent, env, rk.StopAfterNSteps(100))
        >>> agent.policy.learner.n_atoms, agent.policy.learner.gradient_steps
        (51, 13)
    """

    name = "C51"
    hyperparameters = C51Hyperparameters
    learner_class = C51Learner
    learner_fields = ("n_atoms", "v_min", "v_max")

    @classmethod
    def approximator(
        cls, env: Any, hp: Any, seed: np.random.SeedSequence
    ) -> NeuralNetworkApproximator:
        """The categorical network: ``n_atoms`` logits per action."""
        net = categorical_network(
            env.state_space, env.action_space, hp.hidden, n_atoms=hp.n_atoms, seed=seed,
            cnn=hp.cnn,
        )  # fmt: skip
        return network_approximator(net, hp)


class IQN(ValueBasedAgent):
    """IQN (Dabney et al. 2018) in one line: ``rk.IQN.agent(env, seed=0, **hyperparameters)``,
    an :class:`~rlkit.IQNLearner` with
    :class:`~rlkit.learners.value_based.dqn_hyperparameters.IQNHyperparameters` (Dopamine's
    fractions, the rest Stable-Baselines3's DQN defaults). The network's seed and the learner's
    (its sampled fractions) are the two children of the seed's network child.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> agent = rk.IQN.agent(env, seed=0, learning_starts=50, hidden=(32,), n_tau=8,
        ...                      n_tau_target=8)
        >>> _ = rk.run(agent, env, rk.StopAfterNSteps(100))
        >>> agent.policy.learner.n_tau, agent.policy.learner.gradient_steps
        (8, 13)
    """

    name = "IQN"
    hyperparameters = IQNHyperparameters
    learner_class = IQNLearner
    learner_fields = ("n_tau", "n_tau_target", "kappa")
    learner_seeded = True

    @classmethod
    def approximator(
        cls, env: Any, hp: Any, seed: np.random.SeedSequence
    ) -> NeuralNetworkApproximator:
        """The IQN network (cosine embedding of the fractions)."""
        net = iqn_network(
            env.state_space, env.action_space, hp.hidden, n_cos=hp.n_cos, n_acting=hp.n_acting,
            seed=seed, cnn=hp.cnn,
        )  # fmt: skip
        return network_approximator(net, hp)


class Rainbow(PrioritizedReplayAgent):
    """Rainbow (Hessel et al. 2018) in one line: ``rk.Rainbow.agent(env, seed=0,
    **hyperparameters)``, a :class:`~rlkit.RainbowLearner` (C51, double, 3-step returns) on a
    categorical network with a dueling head of noisy streams and a prioritized replay, with
    :class:`~rlkit.learners.value_based.dqn_hyperparameters.RainbowHyperparameters`. The noise's
    seed and the network's are the two children of the seed's network child.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> agent = rk.Rainbow.agent(env, seed=0, learning_starts=50, hidden=(32,))
        >>> _ = rk.run(agent, env, rk.StopAfterNSteps(100))
        >>> agent.policy.learner.double, agent.policy.learner.gradient_steps
        (True, 13)
        >>> breakout = rk.GymEnv(rk.make_minatar_env("MinAtar/Breakout-v1"), seed=0)
        >>> rainbow = rk.Rainbow.agent(breakout, seed=0, buffer_size=1000)  # MinAtar's CNN
        >>> rainbow.policy.learner.model[0].cnn, rainbow.trajectory.state.dtype
        ('minatar', dtype('uint8'))
    """

    name = "Rainbow"
    hyperparameters = RainbowHyperparameters
    learner_class = RainbowLearner
    learner_fields = ("n_atoms", "v_min", "v_max")
    learner_seeded = True

    @classmethod
    def approximator(
        cls, env: Any, hp: Any, seed: np.random.SeedSequence
    ) -> NeuralNetworkApproximator:
        """The categorical network with a dueling head of noisy streams."""
        net = categorical_network(
            env.state_space, env.action_space, hp.hidden, n_atoms=hp.n_atoms, dueling=True,
            noisy=True, sigma0=hp.sigma0, seed=seed, cnn=hp.cnn,
        )  # fmt: skip
        return network_approximator(net, hp)
