"""``RainbowLearner``: C51 with double Q-learning, a dueling head, noisy linear layers, n-step
returns and prioritized replay (Hessel et al. 2018, "Rainbow").

Written with ``rk.build_policy``: the loss is :func:`rainbow_loss`, a pure function (C51's
:func:`~rlkit.learners.value_based.c51.categorical_cross_entropy`, weighted by the importance
weights); the class is built on :class:`RainbowBase` (C51's constructor, the noise generator).
What it learns from a batch, below, is new noise for the online and target networks, the
family's rule, then the new priorities (the per-sample cross-entropy, the "KL loss" priority of
the paper) for the off-policy driver to hand to the replay; PreExperiment checks that the
replay is prioritized. Double Q-learning is the default; the dueling head and the noisy layers
are the network's (``categorical_network(..., dueling=True, noisy=True)``), n-step returns the
sampler's (``rk.NStepBatchSampler``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...approximators.distributional import noise_off, noisy_layers
from ...approximators.neural import NeuralNetworkApproximator, TargetNetwork, torch_generator
from ...core.dispatch import update
from ...core.interfaces import AbstractEnv, AbstractLearner, AbstractVectorEnv
from ...core.stages import PreExperimentStage
from ...trajectories.circular import CircularArraySARTTrajectory
from ...trajectories.prioritized import PrioritizedCircularArraySARTTrajectory
from ..batch import Batch
from ..builder import build_policy
from .c51 import C51Base, categorical_cross_entropy
from .common import gradient_step

__all__ = ["RainbowLearner", "RainbowBase", "rainbow_loss", "NoiseFreeLearner"]


# ---- the loss ----
def rainbow_loss(
    policy: Any, model: Any, dist_class: None, batch: Batch
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """C51's cross-entropy per sample (:func:`categorical_cross_entropy`: double, n-step
    discount from the batch), scaled by the importance weights ``batch["weights"]`` and
    averaged; ``info`` holds ``Q(s, a)``, the expected targets and ``priority``, the
    per-sample cross-entropy (detached).

    Example:
        >>> import torch
        >>> from types import SimpleNamespace
        >>> from rlkit.learners.batch import Batch
        >>> net = torch.nn.Linear(1, 2, bias=False)  # 2 atoms x 1 action, logits 0, 0
        >>> _ = torch.nn.init.zeros_(net.weight)
        >>> policy = SimpleNamespace(n_atoms=2, support=torch.tensor([0.0, 1.0]), double=True,
        ...                          target=SimpleNamespace(model=net))
        >>> batch = Batch(state=torch.ones(2, 1), action=torch.tensor([0, 0]),
        ...               reward=torch.tensor([1.0, 0.0]), terminal=torch.tensor([1.0, 1.0]),
        ...               next_state=torch.ones(2, 1), discount=0.9,
        ...               weights=torch.tensor([1.0, 0.0]))
        >>> loss, info = rainbow_loss(policy, net, None, batch)  # -log 0.5 each, weights 1, 0
        >>> round(loss.item(), 4), [round(p, 4) for p in info["priority"].tolist()]
        (0.3466, [0.6931, 0.6931])
    """
    weights = batch.get("weights")
    if weights is None:
        raise TypeError(
            f"{type(policy).__name__}: the sampled batch has no importance weights; sample "
            f"from an rk.PrioritizedCircularArraySARTTrajectory"
        )
    per_sample, q, target = categorical_cross_entropy(policy, model, batch)
    loss = (weights * per_sample).mean()
    return loss, {"q": q, "target": target, "priority": per_sample.detach()}


# ---- acting without noise (greedy and deterministic modes) ----
class NoiseFreeLearner(AbstractLearner):
    """A learner's action values with every noisy layer at its mean: what ``rk.greedy`` and
    ``predict(deterministic=True)`` of a :class:`~rlkit.QBasedPolicy` act on (the learner's
    ``deterministic()``). It shares the learner (and so sees its training) and learns nothing;
    other attributes are the learner's.

    Example:
        >>> import torch, rlkit as rk
        >>> from rlkit.approximators.distributional import categorical_network
        >>> env = rk.GymEnv("CartPole-v1", seed=0)
        >>> net = categorical_network(env.state_space, env.action_space, (16,), n_atoms=11,
        ...                           dueling=True, noisy=True, seed=0)
        >>> learner = rk.RainbowLearner(
        ...     rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p)), n_atoms=11,
        ...     sampler=rk.BatchSampler(8, seed=0),
        ...     controller=rk.InsertSampleRatioController(10, 1, 1), seed=0)
        >>> env.reset(); learner.reset_noise()
        >>> greedy = learner.deterministic()
        >>> bool((greedy(env) == greedy(env)).all()), bool((greedy(env) != learner(env)).any())
        (True, True)
    """

    def __init__(self, learner: Any) -> None:
        self.learner = learner

    def __repr__(self) -> str:
        return f"NoiseFreeLearner({self.learner!r})"

    def __call__(self, env: Any) -> np.ndarray:
        with noise_off(self.learner.model):
            return self.learner(env)

    def __getattr__(self, name: str) -> Any:
        if name == "learner":  # not set yet (copying): no recursion
            raise AttributeError(name)
        return getattr(self.learner, name)


# ---- the learner ----
class RainbowBase(C51Base):
    """C51's constructor with ``double=True`` by default and the noise generator (``seed``)."""

    samples_ahead = False  # each gradient step changes the priorities the next one samples by

    def __init__(
        self,
        approximator: NeuralNetworkApproximator,
        *,
        sampler: Any,
        controller: Any,
        n_atoms: int = 51,
        v_min: float = -10.0,
        v_max: float = 10.0,
        gamma: float = 0.99,
        target: TargetNetwork | None = None,
        target_update_on: str = "env_step",
        double: bool = True,
        seed: int | np.random.SeedSequence | None = None,
    ) -> None:
        super().__init__(
            approximator,
            sampler=sampler,
            controller=controller,
            n_atoms=n_atoms,
            v_min=v_min,
            v_max=v_max,
            gamma=gamma,
            target=target,
            target_update_on=target_update_on,
            double=double,
        )
        self.noise_generator = torch_generator(seed)
        self._noisy = noisy_layers(self.model)
        self._target_noisy = [] if self.target is None else noisy_layers(self.target.model)

    def reset_noise(self, target: bool = False) -> None:
        """New noise in the online network's noisy layers (``target``: in the target
        network's), from ``noise_generator``."""
        for layer in self._target_noisy if target else self._noisy:
            layer.reset_noise(self.noise_generator)

    def deterministic(self) -> NoiseFreeLearner:
        """This learner acting with its noisy layers at their means (greedy mode)."""
        return NoiseFreeLearner(self)

    def due(self, env: AbstractEnv | AbstractVectorEnv) -> int:
        """The family's count (:meth:`ValueBasedLearner.due`), then new acting noise: each
        environment step acts with fresh noise (Fortunato et al. 2018, Algorithm 1)."""
        granted = super().due(env)
        self.reset_noise()
        return granted

    def state_dict(self) -> dict[str, Any]:
        """The family's state (the noise is a buffer of the networks) and the generator."""
        return {**super().state_dict(), "noise_generator": self.noise_generator.get_state()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved."""
        super().load_state_dict(state)
        self.noise_generator.set_state(state["noise_generator"])


_DOC = """Rainbow (Hessel et al. 2018): :class:`~rlkit.C51Learner`'s categorical loss with double
Q-learning (``double=True`` by default), on a network with a dueling head and noisy linear
layers (``rlkit.approximators.distributional.categorical_network(..., dueling=True,
noisy=True)``: factorised Gaussian noise, ``sigma0 = 0.5``), n-step returns
(``rk.NStepBatchSampler``) and a :class:`~rlkit.PrioritizedCircularArraySARTTrajectory` whose
priorities are each sample's cross-entropy loss (the paper's KL priority), importance-weighted.

Noise: the learner owns its generator (``seed``; saved in checkpoints, with the current noise,
a buffer of each layer). Each environment step draws new acting noise; each gradient step draws
new noise for the online and for the target network. ``rk.greedy(policy)`` and
``policy.predict(obs, deterministic=True)`` act with the layers' means (noise off, as
Dopamine's evaluation mode), and so do saved and exported policies. The noisy layers explore,
so the recipes set the explorer's epsilon to 0 (Dopamine's choice with noisy networks).

Args:
    approximator: a :class:`~rlkit.NeuralNetworkApproximator` (``n_atoms`` logits per action).
    sampler, controller, gamma, target, target_update_on: as for ``DQNLearner``.
    n_atoms, v_min, v_max: the support, as for ``C51Learner``.
    double: double Q-learning (default True).
    seed: the noise generator's seed.

Example:
    >>> import torch, rlkit as rk
    >>> from rlkit.approximators.distributional import categorical_network
    >>> env = rk.GymEnv("CartPole-v1", seed=0)
    >>> net = categorical_network(env.state_space, env.action_space, (32,), n_atoms=51,
    ...                           dueling=True, noisy=True, seed=0)
    >>> approx = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
    >>> learner = rk.RainbowLearner(
    ...     approx, n_atoms=51, v_min=0.0, v_max=100.0, seed=0,
    ...     sampler=rk.NStepBatchSampler(16, n=3, gamma=0.99, seed=0),
    ...     controller=rk.InsertSampleRatioController(50, 1, 1))
    >>> replay = rk.PrioritizedCircularArraySARTTrajectory(
    ...     500, env.state_space, env.action_space, alpha=0.5, beta=0.4, beta_steps=1000)
    >>> agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.0, seed=0)),
    ...                  replay)
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(100))
    >>> learner.gradient_steps, replay.n_sampled
    (50, 50)
"""


RainbowLearner = build_policy("RainbowLearner", loss_fn=rainbow_loss, base=RainbowBase, doc=_DOC)


# ---- learning from one batch: new noise, the family's rule, then the new priorities ----
@update.dispatch
def _(learner: RainbowLearner, batch: Batch, /):
    learner.reset_noise()
    learner.reset_noise(target=True)
    info = gradient_step(learner, batch)
    # the off-policy driver gives them to trajectory.update_priorities(batch["indices"], ...)
    batch["priorities"] = info["priority"]


# ---- PreExperiment: the network must fit the environment; replay must be prioritized ----
@update.dispatch
def _(
    learner: RainbowLearner,
    trajectory: PrioritizedCircularArraySARTTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: PreExperimentStage,
    /,
):
    learner.check(env)


@update.dispatch
def _(
    learner: RainbowLearner,
    trajectory: CircularArraySARTTrajectory,
    env: AbstractEnv | AbstractVectorEnv,
    stage: PreExperimentStage,
    /,
):
    raise TypeError(
        f"{type(learner).__name__}: needs an rk.PrioritizedCircularArraySARTTrajectory (it "
        f"updates priorities), got {type(trajectory).__name__}"
    )
