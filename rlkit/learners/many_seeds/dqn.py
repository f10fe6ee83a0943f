"""``ManySeedsDQN``: DQN for several seeds at once, stacked parameters and one update for all.

Each seed ``s`` owns what a single DQN run of that seed owns: its ``QBasedPolicy(DQNLearner,
explorer)`` (``policies[i]``, built exactly as the seed's single run builds it: its network
initialisation, its replay sampler and its generator, its epsilon-greedy explorer and its
generator, its target network, its replay controller, i.e. ``learning_starts``, ``train_freq``
and ``gradient_steps``), its replay (a :class:`~rlkit.learners.many_seeds.replay.SeedBlocksReplay`
holds one per seed) and a block of a :class:`~rlkit.envs.seed_blocks.SeedBlocksEnv`. All seeds
step in lock-step, so their schedules coincide: every seed counts the same transitions, syncs
its target network and takes its gradient steps at the same environment steps.

The online and target networks' parameters are stacked
(:class:`~rlkit.learners.many_seeds.stacked.StackedModel`: batched matrix products for
``q_network``'s MLPs, ``vmap`` of ``functional_call`` for other networks). Acting is one forward
pass for every seed's sub-envs, then each seed's explorer chooses the actions of its own rows.
Learning, at PostAct (the off-policy driver's rule, rlkit/learners/drivers/off_policy.py): each
due gradient step draws every seed's batch from its own replay with its own sampler (the
learner's ``batches``: the same batches a single run draws), computes every seed's TD loss at
once (:func:`td_losses`: ``dqn_loss``'s target ``r + (1 - terminal) * gamma**n *
Q_target(s', a*)``, Huber or MSE, double DQN when the learners are), back-propagates the sum
of the seeds' losses once (the seeds share no parameter, so each seed's gradient is its own
loss's), clips each seed's gradient by its own norm (``rk.optimizers``
``PerSeedClippedGradient``) and takes one Adam step on the stacked parameters (Adam is
element-wise: each seed steps as alone). Each seed's target network is synced from its own
online network (one ``Synchronization`` on the stacked tensors).

Differences from N single runs: a seed's numbers can differ from its single run by float
rounding (batched matrix products, the per-seed clipping's norm), so runs are equal in
distribution, not bit for bit; a seed's result does not depend on the other seeds.
Not supported (refused with a message): learners other than ``rk.DQNLearner`` (prioritized
replay, QR-DQN, ...), ``compile=True``, ``target_update_on="gradient_step"``, learning-rate
schedules, optimizers other than Adam, and seeds whose hyperparameters differ.

Example:
    >>> import torch, rlkit as rk
    >>> from rlkit.approximators.neural import q_network
    >>> def seed_parts(s):
    ...     block = rk.VectorGymEnv("CartPole-v1", 1, seed=s)
    ...     q = rk.NeuralNetworkApproximator(
    ...         q_network(block.state_space, block.action_space, (32,), seed=s),
    ...         lambda p: torch.optim.Adam(p, lr=1e-3), max_grad_norm=10.0)
    ...     learner = rk.DQNLearner(q, sampler=rk.BatchSampler(16, seed=s),
    ...                             controller=rk.InsertSampleRatioController(32, 4, 1),
    ...                             target=rk.TargetNetwork(q, sync_every=50))
    ...     replay = rk.CircularArraySARTTrajectory(500, block.state_space, block.action_space)
    ...     policy = rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=s))
    ...     return block, policy, replay
    >>> blocks, policies, replays = zip(*(seed_parts(s) for s in (0, 1)))
    >>> env = rk.SeedBlocksEnv(list(blocks), [0, 1])
    >>> agent = rk.ManySeedsDQN.agent(env, policies, replays)
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(200))
    >>> agent.policy.gradient_steps, sorted(rk.statistics(agent.policy))[:2]
    (17, ['epsilon/seed=0', 'epsilon/seed=1'])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ...core.dispatch import statistics, update
from ...core.interfaces import AbstractPolicy, AbstractVectorEnv
from ...core.stages import PostActStage, PreExperimentStage
from ...core.state import require_keys, state_count, state_or_none
from ...optimizers import GradientDescent, NonFiniteError, OptimizerModule
from ...optimizers.per_seed import PerSeedClippedGradient
from ...optimizers.synchronization import Synchronization
from ...policies.agent import Agent
from ...policies.q_based import QBasedPolicy
from ..batch import Batch
from ..drivers.off_policy import after_step
from ..value_based.dqn import DQNLearner
from .replay import SeedBlocksReplay
from .stacked import StackedModel

__all__ = ["ManySeedsDQN", "td_losses"]

_STATS = ("loss", "q_mean", "td_error")


class ManySeedsDQN(AbstractPolicy):
    """DQN for every seed of a :class:`~rlkit.envs.seed_blocks.SeedBlocksEnv` (module
    docstring). ``ManySeedsDQN(env, policies)``: ``policies`` one
    ``rk.QBasedPolicy(rk.DQNLearner(...), explorer)`` per block of ``env``, each built as the
    seed's single run builds it (the same hyperparameters for every seed);
    ``fast=False`` computes ``q_network``'s MLPs with ``vmap`` too (``StackedModel``).

    Example:
        >>> import torch, rlkit as rk
        >>> from rlkit.approximators.neural import q_network
        >>> blocks = [rk.VectorGymEnv("CartPole-v1", 1, seed=s) for s in (0, 1)]
        >>> def dqn(s):
        ...     net = q_network(blocks[s].state_space, blocks[s].action_space, (8,), seed=s)
        ...     q = rk.NeuralNetworkApproximator(net, lambda p: torch.optim.Adam(p, lr=1e-3))
        ...     learner = rk.DQNLearner(q, sampler=rk.BatchSampler(4, seed=s),
        ...                             controller=rk.InsertSampleRatioController(8, 1, 1),
        ...                             target=rk.TargetNetwork(q, sync_every=10))
        ...     return rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=s))
        >>> many = rk.ManySeedsDQN(rk.SeedBlocksEnv(blocks, [0, 1]), [dqn(0), dqn(1)])
        >>> many.n_seeds, type(many.seed_policy(1).learner).__name__
        (2, 'DQNLearner')
    """

    name = "ManySeedsDQN"

    def __init__(self, env: Any, policies: Sequence[QBasedPolicy], *, fast: bool = True) -> None:
        owner = type(self).name
        blocks = getattr(env, "envs", None)
        if blocks is None or not hasattr(env, "block"):
            raise TypeError(
                f"{owner}: env must be an rlkit.envs.seed_blocks.SeedBlocksEnv (one vector env "
                f"per seed), got {env!r:.80}"
            )
        policies = list(policies)
        if len(policies) != len(blocks):
            raise ValueError(
                f"{owner}: one policy per block of {env!r} expected ({len(blocks)}), got "
                f"{len(policies)}"
            )
        self.views = [_checked_view(owner, p, i) for i, p in enumerate(policies)]
        _check_same(owner, self.views)
        for view, block in zip(self.views, blocks, strict=True):
            view.learner.check(block)  # the network fits the env; the spaces rk.save reads
        first = self.views[0].learner
        self.seeds = list(getattr(env, "seeds", range(len(blocks))))
        self.n_seeds, self.block = len(self.views), env.block
        self.device = first.device
        self.gamma, self.double, self.loss_kind = first.gamma, first.double, first.loss_kind
        self.replay_batch_size = getattr(first.sampler, "batch_size", None)
        self.online = StackedModel([v.learner.model for v in self.views], fast=fast)
        self.target = StackedModel([v.learner.target.model for v in self.views], fast=fast)
        for tensor in self.target.params.values():
            tensor.requires_grad_(False)
        self.params = self.online.parameters()
        target = first.target
        self.target_sync = Synchronization(
            self.params, every=target.sync_every, tau=target.tau, keep_deltas=False
        )
        self.optimizer = _tree(first.approximator)
        self.env_steps = 0  # each seed's transitions
        self.gradient_steps = 0  # each seed's gradient steps
        self.last: dict[str, torch.Tensor] = {}

    def __repr__(self) -> str:
        return f"ManySeedsDQN(seeds={self.seeds}, {self.views[0].learner!r})"

    @classmethod
    def agent(
        cls, env: Any, policies: Sequence[QBasedPolicy], replays: Sequence[Any], **kw: Any
    ) -> Agent:
        """A new policy for ``env`` recording into ``replays`` (one
        ``rk.CircularArraySARTTrajectory`` per seed, a :class:`SeedBlocksReplay`), as an
        ``rk.Agent``."""
        return Agent(cls(env, policies, **kw), SeedBlocksReplay(replays))

    # ---- acting: one stacked forward pass, each seed's own explorer ----
    def q_values(self, state: Any) -> np.ndarray:
        """The Q-values of every seed's sub-envs (``state`` of ``n_seeds * block`` rows, block
        ``i`` seed ``i``'s), one row per sub-env."""
        with torch.inference_mode():
            x = torch.as_tensor(state, dtype=torch.float32, device=self.device)
            out = self.online(x.reshape(self.n_seeds, self.block, *x.shape[1:]))
            values = out.reshape(self.n_seeds * self.block, -1)
        return values.cpu().numpy()

    def act(self, env: Any) -> np.ndarray:
        values = self.q_values(env.state)
        masks = env.legal_action_mask
        b = self.block
        return np.concatenate([
            view.explorer.batch(values[i * b:(i + 1) * b],
                                None if masks is None else masks[i * b:(i + 1) * b])
            for i, view in enumerate(self.views)
        ])  # fmt: skip

    # ---- the off-policy driver's protocol (rlkit/learners/drivers/off_policy.py) ----
    def due(self, env: AbstractVectorEnv) -> int:
        """An environment step happened: each seed counts its ``block`` transitions (the
        target networks synced first where due, as a single learner does), every seed's
        controller steps; the gradient steps granted (the same for every seed)."""
        granted = 0
        for _ in range(self.block):
            self.env_steps += 1
            self.target_sync.step(list(self.target.params.values()))
            grants = {view.learner.controller.step() for view in self.views}
            if len(grants) != 1:
                raise RuntimeError(
                    f"ManySeedsDQN: the seeds' replay controllers granted {sorted(grants)} "
                    f"gradient steps at environment step {self.env_steps}; they must step alike"
                )
            granted += grants.pop()
        return granted

    def batches(self, trajectory: SeedBlocksReplay, n: int) -> Any:
        """``n`` batches, each every seed's batch drawn by its own learner from its own replay
        (stacked: first dimension the seed)."""
        draws = [
            view.learner.batches(replay, n)
            for view, replay in zip(self.views, trajectory.replays, strict=True)
        ]
        for parts in zip(*draws, strict=True):
            yield _stacked_batch(parts)

    def end_round(self, n: int, infos: Any) -> None:
        """A round of ``n`` updates ended: nothing to do (each update keeps its statistics)."""

    # ---- one seed's trained policy ----
    def seed_policy(self, i: int) -> QBasedPolicy:
        """Seed ``seeds[i]``'s policy as a plain ``rk.QBasedPolicy(rk.DQNLearner, explorer)``
        (its current online and target parameters and counters; not its Adam moments):
        evaluate it or save it."""
        learner = self.views[i].learner
        learner.model.load_state_dict(self.online.unstacked(i))
        learner.target.model.load_state_dict(self.target.unstacked(i))
        learner.target_sync.steps = learner.target.updates = self.target_sync.steps
        learner.env_steps, learner.gradient_steps = self.env_steps, self.gradient_steps
        if self.last:
            learner.loss = float(self.last["loss"][i])
            learner._last_q = self.last["q"][i].clone()
            learner._last_target = self.last["target"][i].clone()
        return self.views[i]

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        views = self.views
        return {
            "algorithm": type(self).name,
            "seeds": list(self.seeds),
            "params": {k: v.detach().clone() for k, v in self.online.params.items()},
            "buffers": {k: v.clone() for k, v in self.online.buffers.items()},
            "target_params": {k: v.clone() for k, v in self.target.params.items()},
            "target_buffers": {k: v.clone() for k, v in self.target.buffers.items()},
            "optimizer": self.optimizer.state_dict(),
            "target_sync": self.target_sync.state_dict(),
            "explorers": [v.explorer.state_dict() for v in views],
            "samplers": [state_or_none(v.learner.sampler) for v in views],
            "controllers": [state_or_none(v.learner.controller) for v in views],
            "env_steps": self.env_steps,
            "gradient_steps": self.gradient_steps,
            "last": {k: v.clone() for k, v in self.last.items()},
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        owner = type(self).name
        require_keys(owner, state, "seeds", "params", "buffers", "target_params",
                     "target_buffers", "optimizer", "target_sync", "explorers", "samplers",
                     "controllers")  # fmt: skip
        if [int(s) for s in state["seeds"]] != [int(s) for s in self.seeds]:
            raise ValueError(
                f"{owner}: the checkpoint holds seeds {list(state['seeds'])}, this policy "
                f"{self.seeds}"
            )
        for key, tensor in self.online.params.items():
            saved = state["params"].get(key)
            if saved is None or tuple(saved.shape) != tuple(tensor.shape):
                raise ValueError(
                    f"{owner}: the checkpoint's {key} does not match this policy's "
                    f"{tuple(tensor.shape)}; make the policy with the checkpoint's hyperparameters"
                )
        self.online.load(state["params"], state["buffers"])
        self.target.load(state["target_params"], state["target_buffers"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.target_sync.load_state_dict(state["target_sync"])
        for view, explorer, sampler, controller in zip(
            self.views, state["explorers"], state["samplers"], state["controllers"], strict=True
        ):
            view.explorer.load_state_dict(explorer)
            if sampler is not None:
                view.learner.sampler.load_state_dict(sampler)
            if controller is not None:
                view.learner.controller.load_state_dict(controller)
        self.env_steps = state_count(owner, state, "env_steps")
        self.gradient_steps = state_count(owner, state, "gradient_steps")
        self.last = {k: v.clone() for k, v in state.get("last", {}).items()}


def _checked_view(owner: str, policy: Any, i: int) -> QBasedPolicy:
    """``policy`` if many-seed DQN supports it, else a clear error naming what is not."""
    learner = getattr(policy, "learner", None)
    if not isinstance(policy, QBasedPolicy) or type(learner) is not DQNLearner:
        raise TypeError(
            f"{owner}: policies[{i}] must be an rk.QBasedPolicy(rk.DQNLearner(...), explorer) "
            f"(plain DQN; prioritized replay, QR-DQN and the other variants are not supported "
            f"with many seeds), got {policy!r:.120}"
        )
    unsupported = {
        "target": (learner.target is None, "a target network (rk.TargetNetwork) is required"),
        "compile": (learner.compile_mode is not None, "compile=True is not supported"),
        "target_update_on": (
            learner.target_update_on != "env_step",
            f"target_update_on={learner.target_update_on!r} is not supported (only 'env_step')",
        ),
        "lr_scheduler": (
            learner.approximator.lr_scheduler is not None,
            "learning-rate schedules are not supported",
        ),
    }
    for what, (bad, message) in unsupported.items():
        if bad:
            raise ValueError(f"{owner}: policies[{i}]: {message} with many seeds ({what})")
    optimizer = learner.approximator.optimizer
    if type(optimizer) is not torch.optim.Adam:
        raise ValueError(
            f"{owner}: policies[{i}]: the optimizer must be torch.optim.Adam with many seeds, "
            f"got {type(optimizer).__name__}"
        )
    group = optimizer.param_groups[0]
    if group["amsgrad"] or group["weight_decay"] or group["maximize"]:
        raise ValueError(
            f"{owner}: policies[{i}]: Adam's amsgrad, weight_decay and maximize are not "
            f"supported with many seeds, got amsgrad={group['amsgrad']}, "
            f"weight_decay={group['weight_decay']}, maximize={group['maximize']}"
        )
    return policy


def _settings(view: QBasedPolicy) -> dict[str, Any]:
    """What every seed must share (one update computes them all)."""
    learner = view.learner
    group = learner.approximator.optimizer.param_groups[0]
    sampler = learner.sampler
    return {
        "gamma": learner.gamma,
        "double": learner.double,
        "loss": learner.loss_kind,
        "device": str(learner.device),
        "sampler": (
            type(sampler).__name__,
            getattr(sampler, "batch_size", None),
            getattr(sampler, "n", None),
        ),
        "controller": repr(learner.controller),
        "target": (learner.target.sync_every, learner.target.tau),
        "lr": group["lr"],
        "betas": tuple(group["betas"]),
        "eps": group["eps"],
        "max_grad_norm": learner.approximator.max_grad_norm,
        "shapes": [tuple(p.shape) for p in learner.model.parameters()],
    }


def _check_same(owner: str, views: list[QBasedPolicy]) -> None:
    first = _settings(views[0])
    for i, view in enumerate(views[1:], 1):
        settings = _settings(view)
        for key, value in settings.items():
            if value != first[key]:
                raise ValueError(
                    f"{owner}: every seed must have the same hyperparameters; policies[{i}] has "
                    f"{key}={value!r}, policies[0] {key}={first[key]!r}"
                )


def _tree(approximator: Any) -> OptimizerModule:
    """The seeds' Adam (their rate, betas and epsilon, fused) on the stacked parameters, each
    seed's gradient clipped at ``max_grad_norm`` by its own norm."""
    group = approximator.optimizer.param_groups[0]
    adam = GradientDescent(
        "adam",
        lr=float(group["lr"]),
        betas=tuple(group["betas"]),
        eps=float(group["eps"]),
        fused=True,
        keep_deltas=False,
    )
    if approximator.max_grad_norm is None:
        return adam
    return PerSeedClippedGradient(adam, approximator.max_grad_norm)


def _stacked_batch(parts: Sequence[Batch]) -> Batch:
    """The seeds' batches as one, first dimension the seed (``discount`` a float when every
    seed's is the same float, else ``(n_seeds, batch)``)."""
    first = parts[0]
    batch = Batch({
        key: torch.stack([p[key] for p in parts])
        for key in ("state", "action", "reward", "terminal", "next_state")
    })  # fmt: skip
    discount = first["discount"]
    if isinstance(discount, torch.Tensor):
        batch["discount"] = torch.stack([p["discount"] for p in parts])
    else:
        batch["discount"] = discount
    return batch


def td_losses(policy: ManySeedsDQN, batch: Batch) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Every seed's DQN loss on its batch (``batch`` stacked, first dimension the seed):
    ``(losses, info)``, ``losses`` of shape ``(n_seeds,)`` (each the mean over the seed's rows,
    as ``dqn_loss``), ``info["q"]`` and ``info["target"]`` of shape ``(n_seeds, batch)``,
    detached.

    Example:
        >>> import rlkit as rk
        >>> from types import SimpleNamespace
        >>> nets = [torch.nn.Linear(4, 2) for _ in range(2)]
        >>> policy = SimpleNamespace(online=StackedModel(nets), target=StackedModel(nets),
        ...                          double=False, loss_kind="mse")
        >>> batch = Batch(state=torch.zeros(2, 3, 4), action=torch.zeros(2, 3, dtype=torch.long),
        ...               reward=torch.ones(2, 3), terminal=torch.ones(2, 3),
        ...               next_state=torch.zeros(2, 3, 4), discount=0.99)
        >>> losses, info = td_losses(policy, batch)
        >>> tuple(losses.shape), info["target"].tolist()  # terminal: y = r
        ((2,), [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    """
    q = policy.online(batch["state"]).gather(2, batch["action"].unsqueeze(2)).squeeze(2)
    with torch.no_grad():
        next_state = batch["next_state"]
        next_q = policy.target(next_state)
        if policy.double:
            best = policy.online(next_state).argmax(dim=2, keepdim=True)
            next_value = next_q.gather(2, best).squeeze(2)
        else:
            next_value = next_q.max(dim=2).values
        y = batch["reward"] + (1.0 - batch["terminal"]) * batch["discount"] * next_value
    if policy.loss_kind == "huber":
        elementwise = F.smooth_l1_loss(q, y, reduction="none")
    else:
        elementwise = F.mse_loss(q, y, reduction="none")
    return elementwise.mean(1), {"q": q.detach(), "target": y}


# ---- PreExperiment: every seed's network must fit its block ----
@update.dispatch
def _(
    policy: ManySeedsDQN,
    trajectory: SeedBlocksReplay,
    env: AbstractVectorEnv,
    stage: PreExperimentStage,
    /,
):
    if trajectory.n_seeds != policy.n_seeds:
        raise ValueError(
            f"ManySeedsDQN: {policy.n_seeds} seeds, but the trajectory {trajectory!r} holds "
            f"{trajectory.n_seeds} replays"
        )
    for view, block in zip(policy.views, env.envs, strict=True):
        view.learner.check(block)


# ---- PostAct: the off-policy driver's rule (rlkit/learners/drivers/off_policy.py) ----
@update.dispatch
def _(
    policy: ManySeedsDQN,
    trajectory: SeedBlocksReplay,
    env: AbstractVectorEnv,
    stage: PostActStage,
    /,
):
    after_step(policy, trajectory, env)


# ---- what every seed learns from its batch (the off-policy driver calls it) ----
@update.dispatch
def _(policy: ManySeedsDQN, batch: Batch, /):
    """One gradient step of every seed on its own batch (module docstring)."""
    out: dict[str, Any] = {}

    def fn_loss() -> torch.Tensor:
        losses, info = td_losses(policy, batch)
        out.update(info, loss=losses.detach())
        return losses.sum()  # the seeds share no parameter: each gets its own gradient

    try:
        policy.optimizer.step(policy.params, fn_loss)
    except NonFiniteError as error:
        raise error.restated(
            f"ManySeedsDQN: a seed's loss or gradient is {error.value} at gradient step "
            f"{policy.gradient_steps + 1} (environment step {policy.env_steps}); lower the "
            f"learning rate or clip gradients"
        ) from None
    policy.last = out
    policy.gradient_steps += 1


@statistics.dispatch
def _(policy: ManySeedsDQN, /):
    stats: dict[str, float] = {}
    last = policy.last
    for i, (seed, view) in enumerate(zip(policy.seeds, policy.views, strict=True)):
        if last:
            q, y = last["q"][i], last["target"][i]
            values = (float(last["loss"][i]), float(q.mean()), float((y - q).abs().mean()))
        else:
            values = (math.nan,) * 3
        for name, value in zip(_STATS, values, strict=True):
            stats[f"{name}/seed={seed}"] = value
        epsilon = getattr(view.explorer, "epsilon", None)
        if epsilon is not None:
            stats[f"epsilon/seed={seed}"] = float(epsilon)
    stats["lr"] = float(policy.views[0].learner.approximator.lr)
    stats["gradient_steps"] = float(policy.gradient_steps)
    stats["transitions"] = float(policy.env_steps * policy.n_seeds)
    return stats
