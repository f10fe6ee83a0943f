"""The parts of a DQN-family agent, built from its hyperparameters and seed: what
``rk.DQN.agent`` and its relatives (:mod:`.agents`) assemble, and what the recipes
(``experiments/dqn.py``, ``experiments/distributional.py``) build through them.

``p`` is any object with the hyperparameters' attributes (a
:class:`~rlkit.learners.value_based.dqn_hyperparameters.DQNHyperparameters`, or a recipe's
parameters): ``hidden``, ``lr``, ``adam_eps``, ``max_grad_norm``, ``device``, ``batch_size``,
``n_step``, ``gamma``, ``learning_starts``, ``train_freq``, ``gradient_steps``,
``exploration_*``, ``total_steps``, ``target_update_interval`` (and ``tau``, 1 when absent).

Every generator comes from one seed's children (:class:`DQNSeeds`); the network is initialised
from a local ``torch.Generator``, so nothing depends on torch's global random state.

Example:
    >>> import rlkit as rk
    >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
    >>> hp = DQNHyperparameters(learning_starts=1000, batch_size=64)
    >>> replay_controller(hp).warmup_steps, replay_sampler(hp, DQNSeeds.of(0).sampler).batch_size
    (1000, 64)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from ...approximators.cnn import cnn_hidden, image_cnn, is_image_space
from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork, q_network
from ...core.seeding import spawn_seeds
from ...envs.masks import find_action_masks
from ...trajectories.controller import InsertSampleRatioController
from ...trajectories.samplers import BatchSampler, NStepBatchSampler
from .warmup_explorer import RandomWarmupEpsilonGreedy

__all__ = [
    "DQNSeeds",
    "adam",
    "network_approximator",
    "image_settings",
    "q_approximator",
    "target_network",
    "replay_sampler",
    "replay_controller",
    "replay_learner_settings",
    "epsilon_explorer",
    "exposes_action_masks",
    "keeps_masks",
]


@dataclass(frozen=True)
class DQNSeeds:
    """A seed's children, one per generator: environment, explorer, replay sampler, network
    initialisation, evaluation (``numpy.random.SeedSequence.spawn``). ``rk.DQN.agent`` uses the
    explorer's, the sampler's and the network's; the recipes also seed their environment and
    their evaluation from the others, so a recipe and the one-liner given the same seed (and
    the recipe's environment) learn the same parameters.

    Example:
        >>> DQNSeeds.of(0).env.spawn_key, DQNSeeds.of(0).network.spawn_key
        ((0,), (3,))
    """

    env: np.random.SeedSequence
    explorer: np.random.SeedSequence
    sampler: np.random.SeedSequence
    network: np.random.SeedSequence
    evaluation: np.random.SeedSequence

    @classmethod
    def of(cls, seed: int | np.random.SeedSequence) -> DQNSeeds:
        """The five children of ``seed``."""
        return cls(*spawn_seeds(seed, 5))


def adam(params: Any, lr: float, eps: float = 1e-8) -> torch.optim.Optimizer:
    """Adam, fused into one kernel per step where torch supports it (the same algorithm as
    ``torch.optim.Adam``'s default implementation, about twice as fast for small networks).

    Example:
        >>> import torch
        >>> adam(torch.nn.Linear(2, 1).parameters(), lr=1e-3).defaults["lr"]
        0.001
    """
    params = list(params)
    try:
        return torch.optim.Adam(params, lr=lr, eps=eps, fused=True)
    except (RuntimeError, TypeError, ValueError):  # an older torch or an unsupported device
        return torch.optim.Adam(params, lr=lr, eps=eps)


def network_approximator(net: torch.nn.Module, p: Any) -> NeuralNetworkApproximator:
    """``net`` trained by Adam with ``p``'s rate (``lr``) and epsilon (``adam_eps``), its
    gradient norm clipped at ``p.max_grad_norm`` (None: not clipped), on ``p.device``.

    Example:
        >>> import torch
        >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
        >>> network_approximator(torch.nn.Linear(4, 2), DQNHyperparameters()).max_grad_norm
        10.0
    """
    return NeuralNetworkApproximator(
        net,
        lambda params: adam(params, lr=p.lr, eps=p.adam_eps),
        device=p.device,
        max_grad_norm=p.max_grad_norm,
    )


def image_settings(owner: str, space: Any, p: Any, hidden_given: bool) -> Any:
    """``p`` for observations of ``space``: on images (``rlkit/approximators/cnn.py``:
    ``is_image_space``) with ``cnn`` the body :func:`~rlkit.approximators.cnn.image_cnn` picks
    (``p.cnn`` when set: the Nature CNN for frames of 36x36 or more, MinAtar's below) and,
    unless ``hidden_given``, ``hidden`` the paper's layer after that body (``(512,)``,
    ``(128,)``: Stable-Baselines3's ``CnnPolicy`` is the Nature CNN's 512 features then the
    output layer); other spaces keep ``p`` (a ``cnn`` set for a ``Box`` that is not an image is
    refused naming ``owner`` and the space; on a ``Dict`` it names the body of image keys).

    Example:
        >>> import gymnasium as gym, numpy as np
        >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
        >>> frames = gym.spaces.Box(0, 1, (4, 10, 10), np.uint8)
        >>> hp = image_settings("DQN", frames, DQNHyperparameters(), hidden_given=False)
        >>> hp.cnn, hp.hidden
        ('minatar', (128,))
    """
    cnn = getattr(p, "cnn", None)
    boxed = isinstance(space, gym.spaces.Box) and space.shape != ()
    if not (is_image_space(space) or (cnn is not None and boxed)):
        return p
    cnn = image_cnn(owner, space, cnn)
    return dataclasses.replace(p, cnn=cnn, hidden=p.hidden if hidden_given else cnn_hidden(cnn))


def q_approximator(
    env: Any, p: Any, seed: np.random.SeedSequence, *, n_quantiles: int | None = None
) -> NeuralNetworkApproximator:
    """A ReLU MLP of ``p.hidden`` layers (one value per action, or ``n_quantiles`` per action)
    for ``env``'s spaces, after the CNN body ``p.cnn`` on image observations (and on image
    keys of a ``Dict``; absent or None: an MLP, image keys' bodies chosen by size),
    initialised from ``seed``, as :func:`network_approximator`.

    Example:
        >>> import rlkit as rk
        >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
        >>> q = q_approximator(rk.GymEnv("CartPole-v1"), DQNHyperparameters(), DQNSeeds.of(0).network)
        >>> q.model(torch.zeros(1, 4)).shape
        torch.Size([1, 2])
    """  # noqa: E501
    net = q_network(
        env.state_space, env.action_space, p.hidden, n_quantiles=n_quantiles, seed=seed,
        cnn=getattr(p, "cnn", None),
    )  # fmt: skip
    return network_approximator(net, p)


def target_network(q: NeuralNetworkApproximator, p: Any) -> TargetNetwork:
    """Stable-Baselines3's target network: a hard copy every ``p.target_update_interval``
    environment steps (``tau`` 1), or Polyak averaging with ``p.tau`` at every step.

    Example:
        >>> import torch
        >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
        >>> q = network_approximator(torch.nn.Linear(4, 2), DQNHyperparameters())
        >>> target_network(q, DQNHyperparameters(target_update_interval=500))
        TargetNetwork(Linear, sync_every=500)
    """
    tau = getattr(p, "tau", 1.0)
    if tau == 1.0:
        return TargetNetwork(q, sync_every=p.target_update_interval)
    return TargetNetwork(q, tau=tau)


def replay_sampler(p: Any, seed: np.random.SeedSequence) -> BatchSampler | NStepBatchSampler:
    """Batches of ``p.batch_size`` transitions (``p.n_step``-step returns when above 1).

    Example:
        >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
        >>> replay_sampler(DQNHyperparameters(n_step=3), DQNSeeds.of(0).sampler).n
        3
    """
    if p.n_step > 1:
        return NStepBatchSampler(p.batch_size, p.n_step, p.gamma, seed=seed)
    return BatchSampler(p.batch_size, seed=seed)


def replay_controller(p: Any) -> InsertSampleRatioController:
    """``p.gradient_steps`` gradient steps every ``p.train_freq`` steps once the replay holds
    ``p.learning_starts`` transitions and at least one batch (Stable-Baselines3 would sample a
    batch with replacement from fewer; this only matters when ``learning_starts`` is below
    ``batch_size``).

    Example:
        >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
        >>> replay_controller(DQNHyperparameters(learning_starts=0)).warmup_steps
        32
    """
    return InsertSampleRatioController(
        max(p.learning_starts, p.batch_size), p.train_freq, p.gradient_steps
    )


def replay_learner_settings(
    q: NeuralNetworkApproximator, p: Any, sampler_seed: np.random.SeedSequence
) -> dict[str, Any]:
    """What every DQN-family learner of the one-liners takes alike: ``q``'s target network,
    ``double``, the replay sampler, the controller and ``gamma`` (keyword arguments).

    Example:
        >>> import numpy as np, rlkit as rk
        >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
        >>> hp, seed = DQNHyperparameters(), np.random.SeedSequence(0)
        >>> q = q_approximator(rk.GymEnv("CartPole-v1"), hp, seed)
        >>> sorted(replay_learner_settings(q, hp, seed))
        ['controller', 'double', 'gamma', 'sampler', 'target']
    """
    return {
        "target": target_network(q, p),
        "double": p.double,
        "sampler": replay_sampler(p, sampler_seed),
        "controller": replay_controller(p),
        "gamma": p.gamma,
    }


def epsilon_explorer(
    p: Any,
    seed: np.random.SeedSequence,
    *,
    schedule: str = "linear",
    random_warmup: bool = True,
) -> RandomWarmupEpsilonGreedy:
    """Epsilon from ``p.exploration_initial_eps`` to ``p.exploration_final_eps``, linearly over
    ``exploration_fraction * total_steps`` steps (``schedule="linear"``) or exponentially with
    that time constant (``"exp"``); with ``random_warmup`` the first ``learning_starts`` actions
    are uniformly random (Stable-Baselines3).

    Example:
        >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
        >>> e = epsilon_explorer(DQNHyperparameters(total_steps=1000), DQNSeeds.of(0).explorer)
        >>> [round(e.epsilon_at(t), 3) for t in (0, 99, 100, 1000)]  # decays over 100 steps
        [1.0, 1.0, 0.05, 0.05]
    """
    return RandomWarmupEpsilonGreedy(
        p.exploration_final_eps,
        random_steps=p.learning_starts if random_warmup else 0,
        kind=schedule,
        epsilon_start=p.exploration_initial_eps,
        decay_steps=max(int(p.exploration_fraction * p.total_steps), 1),
        seed=seed,
    )


def exposes_action_masks(env: Any) -> bool:
    """Whether ``env`` reports legal-action masks (the env contract's ``legal_action_mask``),
    known before its first reset: a ``GymEnv`` whose gymnasium env (or a wrapper of it) has
    sb3-contrib's ``action_masks()``, a ``VectorGymEnv`` of a registered id whose environment
    class has it, or any env whose ``legal_action_mask`` is already set (after a reset: how an
    env that reports ``info["action_mask"]`` is found). An env made with ``use_masking=False``
    reports none.

    Example:
        >>> import rlkit as rk
        >>> exposes_action_masks(rk.GymEnv("rlkit/InvalidActionGrid-v0"))
        True
        >>> exposes_action_masks(rk.VectorGymEnv("rlkit/InvalidActionGrid-v0", 2))
        True
        >>> exposes_action_masks(rk.GymEnv("CartPole-v1"))
        False
    """
    if not getattr(env, "use_masking", True):
        return False
    if getattr(env, "legal_action_mask", None) is not None:
        return True
    inner = getattr(env, "env", None)  # GymEnv: the gymnasium env it wraps
    if isinstance(inner, gym.Env):
        return find_action_masks(inner) is not None
    env_id = getattr(env, "id", None)  # VectorGymEnv of a registered id
    if isinstance(env_id, str):
        return _registered_masks(env_id)
    return False


def _registered_masks(env_id: str) -> bool:
    """Whether the class a registered id makes has ``action_masks()`` (without making it)."""
    from gymnasium.envs.registration import load_env_creator

    try:
        creator = gym.spec(env_id).entry_point
        creator = load_env_creator(creator) if isinstance(creator, str) else creator
    except (gym.error.Error, ImportError, AttributeError, ValueError):
        return False
    return callable(getattr(creator, "action_masks", None))


def keeps_masks(env: Any, p: Any) -> bool:
    """Whether a one-liner's replay keeps the next states' legal-action masks (the masked
    target max): ``p.legal_action_masks`` when it is True or False, else (None, or a recipe's
    parameters without it) whether ``env`` exposes masks (:func:`exposes_action_masks`).

    Example:
        >>> import rlkit as rk
        >>> from rlkit.learners.value_based.dqn_hyperparameters import DQNHyperparameters
        >>> grid = rk.GymEnv("rlkit/InvalidActionGrid-v0")
        >>> keeps_masks(grid, DQNHyperparameters()), keeps_masks(
        ...     grid, DQNHyperparameters(legal_action_masks=False))
        (True, False)
    """
    explicit = getattr(p, "legal_action_masks", None)
    return exposes_action_masks(env) if explicit is None else bool(explicit)

