"""CQL (Kumar et al. 2020, "Conservative Q-Learning for Offline Reinforcement Learning") on SAC,
with d3rlpy's defaults, as pure functions compiled by ``rk.build_policy`` on SAC's base.

SAC's pieces are reused as they are (``rlkit/learners/actor_critic/sac.py``): the squashed
Gaussian actor, twin critics with a Polyak-averaged target, the learned entropy coefficient
(:func:`~rlkit.learners.actor_critic.sac.ent_coef_loss`) and the actor loss
(:func:`~rlkit.learners.actor_critic.sac.actor_loss`). The critic loss adds the conservative
penalty to SAC's temporal-difference loss:

``alpha * conservative_weight * (logsumexp_a Q(s, a) - Q(s, a_data))`` for each critic, where
``logsumexp_a Q(s, a)`` is estimated from ``n_action_samples`` actions of each of three kinds,
each corrected by its density (importance sampling, as the paper's code and d3rlpy do): uniform
actions in ``[-1, 1]^d`` (``Q - log 0.5^d``), the current policy's actions at ``s`` and the
current policy's actions at ``s'`` (``Q(s, a) - log pi(a|s)``, the samples detached), all
``3 * n_action_samples`` in one ``logsumexp`` (:func:`conservative_gap`).

``alpha`` is fixed (``cql_alpha``, 1.0) unless ``target_action_gap`` is a number: then it is
the Lagrangian variant's multiplier, ``log alpha`` learned (``alpha_lr``) to keep the gap at
``target_action_gap`` (the penalty becomes ``alpha * conservative_weight * (gap -
target_action_gap)``, :func:`cql_alpha_loss`; ``alpha = exp(log alpha)`` clipped to
``[0, 1e6]``). The backup is d3rlpy's default, deterministic (``soft_q_backup=False``: the
target critics at the actor's mean action ``tanh(mu(s'))``, no entropy term); with
``soft_q_backup=True`` it is SAC's soft backup.

``critic_layer_norm=True`` puts a layer normalisation before each hidden ReLU of the critics
(Ball et al. 2023; Yue et al. 2023 find it bounds the Q-values' divergence offline); off by
default, as in d3rlpy and the paper (docs/how-to/offline-rl.md has what it does on Pendulum).

What one batch teaches is ``update(policy: CQL, batch: Batch)``: draw the noise (the SAC policy
sample, the next-state sample, ``n_action_samples`` actions of the policy at ``s`` and at
``s'``, the uniform actions) from the policy's training generator; step the entropy
coefficient, the critics, the Lagrangian ``alpha`` (when learned, on the gap the critic step
measured) and the actor; move the target critics by ``tau``. The batch is an off-policy
actor-critic's (``state``, ``action`` scaled to ``[-1, 1]``, ``reward``, ``terminal``,
``next_state``).

Defaults (d3rlpy's ``CQLConfig``): ``lr`` 3e-4 (the critics), ``actor_lr`` 1e-4 (the actor and
the entropy coefficient), ``alpha_lr`` 1e-4, ``conservative_weight`` 5.0,
``n_action_samples`` 10, ``cql_alpha`` 1.0, ``batch_size`` 256, ``hidden`` (256, 256),
``gamma`` 0.99, ``tau`` 0.005, two critics, the entropy coefficient learned from 1.0 towards
``-dim(A)``; ``learning_starts`` is 0 (an offline policy acts with its actor from the start).

Differences from d3rlpy: the Lagrangian ``alpha`` is off by default (d3rlpy learns it with a
threshold of 10; here ``target_action_gap=10.0`` turns it on) and, when on, steps after the
critics (on the gap measured before their step) instead of before, so the critic step uses the
previous ``alpha``; the order within a step is SAC's (entropy coefficient, critics, actor, with
the coefficient before its step) where d3rlpy steps the critics, then the temperature and the
actor (with the new temperature); the temporal-difference loss is d3rlpy's (the sum of the
critics' squared errors: twice SAC's ``0.5 *`` sum).

Example:
    >>> import torch
    >>> import rlkit as rk
    >>> env = rk.GymEnv("Pendulum-v1", seed=0)
    >>> policy = rk.CQL(env, seed=0, hidden=(16, 16), batch_size=8)
    >>> g = torch.Generator().manual_seed(0)
    >>> batch = rk.Batch(state=torch.randn(8, 3, generator=g), action=torch.rand(8, 1) * 2 - 1,
    ...                  reward=torch.zeros(8), terminal=torch.zeros(8),
    ...                  next_state=torch.randn(8, 3, generator=g))
    >>> info = rk.update(policy, batch)
    >>> sorted(info)[:4]
    ['actor_loss', 'cql_alpha', 'cql_gap', 'critic_loss']
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from ...core.checks import finite_float, positive_int
from ...core.dispatch import update
from ...optimizers.gradient import GradientDescent
from ...trajectories.structured import map_leaves
from ..actor_critic import sac
from ..actor_critic.common import ActorCriticModel, mse
from ..batch import Batch
from ..builder import build_policy
from ..hyperparameters import layers_from_hidden

__all__ = [
    "CQL",
    "CQL_DEFAULTS",
    "CQLModel",
    "conservative_gap",
    "critic_loss",
    "cql_alpha_loss",
    "cql_model",
]

CQL_DEFAULTS = {
    **sac.SAC_DEFAULTS,
    "lr": 3e-4,
    "actor_lr": 1e-4,
    "learning_starts": 0,
    "conservative_weight": 5.0,
    "n_action_samples": 10,
    "cql_alpha": 1.0,
    "target_action_gap": None,
    "alpha_lr": 1e-4,
    "soft_q_backup": False,
    "critic_layer_norm": False,
}

_ALPHA_MAX = 1e6  # d3rlpy clips exp(log alpha) to [0, 1e6] for stability


# ---- pure functions ----


def conservative_gap(
    q_data: torch.Tensor,
    q_random: torch.Tensor,
    q_pi: torch.Tensor,
    log_prob_pi: torch.Tensor,
    q_next_pi: torch.Tensor,
    log_prob_next_pi: torch.Tensor,
    n_actions: int,
) -> torch.Tensor:
    """Each critic's ``mean_s [logsumexp_a Q(s, a) - Q(s, a_data)]``, the log-sum-exp over the
    uniform, current-policy and next-state-policy actions, each corrected by its density:
    ``Q - log 0.5^n_actions`` (uniform in ``[-1, 1]^n_actions``), ``Q - log pi`` (the policy's).

    Shapes: ``q_data`` ``(n_critics, batch)``; ``q_random``, ``q_pi``, ``q_next_pi``
    ``(n_critics, batch, n_samples)``; ``log_prob_pi``, ``log_prob_next_pi``
    ``(batch, n_samples)``. Returns ``(n_critics,)``.

    Example:
        >>> import torch
        >>> zeros = torch.zeros(1, 1, 1)
        >>> gap = conservative_gap(torch.zeros(1, 1), zeros, zeros, torch.zeros(1, 1), zeros,
        ...                        torch.zeros(1, 1), n_actions=1)
        >>> round(gap.item(), 4)  # log(1 + 1 + 2): the uniform density 1/2 counts twice
        1.3863
    """
    log_uniform = n_actions * math.log(0.5)
    values = torch.cat(
        [q_random - log_uniform, q_pi - log_prob_pi, q_next_pi - log_prob_next_pi], dim=2
    )
    return (torch.logsumexp(values, dim=2) - q_data).mean(dim=1)


def _alpha(model: Any, config: dict[str, Any]) -> torch.Tensor:
    """The conservative weight's multiplier: ``exp(log alpha)`` clipped to ``[0, 1e6]`` when
    learned, else ``cql_alpha``."""
    if model.log_cql_alpha is None:
        return torch.tensor(float(config["cql_alpha"]))
    return model.log_cql_alpha.exp().clamp(0.0, _ALPHA_MAX)


def _sampled_q(model: Any, state: Any, actions: torch.Tensor) -> torch.Tensor:
    """The critics at ``state`` (``(batch, obs)``) for ``actions`` (``(batch, n, act)``), as
    ``(n_critics, batch, n)``: one forward pass over the ``batch * n`` pairs."""
    b, n, d = actions.shape
    if isinstance(state, Mapping):  # a Dict observation: each key's rows repeated
        states = map_leaves(lambda x: x.repeat_interleave(n, dim=0), state)
    else:
        states = state.flatten(1).repeat_interleave(n, dim=0)
    return torch.stack(model.critic(states, actions.reshape(b * n, d))).view(-1, b, n)


def _actor_out(model: Any, batch: Batch, key: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The actor's ``(mean, log_std)`` at ``batch[key]``, detached: the ones the gradient step
    computed already (``batch[key + "_actor"]``, set by ``update``) or a new forward pass."""
    if f"{key}_actor" in batch:
        return batch[f"{key}_actor"]
    with torch.no_grad():
        return model.actor(batch[key])


def _policy_samples(
    mean: torch.Tensor, log_std: torch.Tensor, noise: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` detached squashed-Gaussian samples of the actor's ``(mean, log_std)`` at each
    state and their log-probabilities, ``(batch, n, act)`` and ``(batch, n)``, from ``noise``
    ``(batch, n, act)``."""
    with torch.no_grad():
        return sac.squashed_gaussian(mean.unsqueeze(1), log_std.unsqueeze(1), noise)


def _td_target(policy: Any, model: Any, batch: Batch, next_out: tuple) -> torch.Tensor:
    """``r + gamma * (1 - terminal) * backup``, no gradient: the deterministic backup
    ``min_i Q'_i(s', tanh(mu(s')))`` (d3rlpy's default) or, with ``soft_q_backup``, SAC's
    ``min_i Q'_i(s', a') - ent_coef * log pi(a'|s')`` (:func:`sac.critic_loss`'s target)."""
    c = policy.config
    mean, log_std = next_out
    with torch.no_grad():
        if c["soft_q_backup"]:
            action, log_prob = sac.squashed_gaussian(mean, log_std, batch["next_noise"])
        else:
            action = torch.tanh(mean)
        next_q = torch.stack(model.critic_target(batch["next_state"], action)).min(0).values
        if c["soft_q_backup"]:
            next_q = next_q - batch["ent_coef"] * log_prob
        return batch["reward"] + (1.0 - batch["terminal"]) * c["gamma"] * next_q


def critic_loss(policy, model, dist_class, batch):
    """SAC's temporal-difference loss (doubled: the sum of the critics' squared errors, as
    d3rlpy; with the deterministic backup unless ``soft_q_backup``, :func:`_td_target`) plus
    ``alpha * conservative_weight * sum_i (gap_i - target_action_gap)``
    (:func:`conservative_gap`; no ``target_action_gap`` term when ``alpha`` is fixed).

    ``Q(s, a_data)`` is computed once for both terms, each kind of sampled action in one
    forward pass of the critics (:func:`_sampled_q`), and the actor's outputs at ``s`` and
    ``s'`` are those the gradient step computed already (:func:`_actor_out`). (One pass over
    all ``3 * n_action_samples`` kinds at once, or both critics in one batched product, was
    slower on a CPU: the larger activations leave the cache; benchmarks/results_offline.txt.)"""
    c = policy.config
    next_out = _actor_out(model, batch, "next_state")
    target = _td_target(policy, model, batch, next_out)
    pi, log_pi = _policy_samples(*_actor_out(model, batch, "state"), batch["cql_pi_noise"])
    next_pi, log_next_pi = _policy_samples(*next_out, batch["cql_next_noise"])
    state = batch["state"]
    q_data = torch.stack(model.critic(state, batch["action"]))
    td = 0.5 * sum(mse(q, target) for q in q_data)
    gap = conservative_gap(
        q_data,
        _sampled_q(model, state, batch["cql_random"]),
        _sampled_q(model, state, pi),
        log_pi,
        _sampled_q(model, state, next_pi),
        log_next_pi,
        policy.n_actions,
    )
    threshold = 0.0 if c["target_action_gap"] is None else c["target_action_gap"]
    penalty = (_alpha(model, c).detach() * c["conservative_weight"] * (gap - threshold)).sum()
    info = {
        "q_mean": float(q_data[0].detach().mean()),
        "cql_gap": float(gap.detach().mean()),
        "td_loss": float(2.0 * td.detach()),
    }
    return 2.0 * td + penalty, info


def cql_alpha_loss(policy, model, dist_class, batch):
    """The Lagrangian multiplier's loss, ``-alpha * conservative_weight * (gap -
    target_action_gap)``, on the gap (``batch["cql_gap"]``, the critics' mean) the critic step
    measured: ``alpha`` grows while the gap exceeds the target and shrinks below it."""
    c = policy.config
    excess = c["conservative_weight"] * (batch["cql_gap"] - c["target_action_gap"])
    return -(_alpha(model, c) * excess).mean()


# ---- the model ----


class CQLModel(ActorCriticModel):
    """SAC's model (``actor``, ``critic``, ``critic_target``, ``log_ent_coef``) and, for the
    Lagrangian variant, ``log_cql_alpha`` (else None), the parameters of the loss
    ``cql_alpha``.

    Example:
        >>> import torch
        >>> m = CQLModel(torch.nn.Linear(2, 1), torch.nn.Linear(3, 1), actor_target=False,
        ...              critic_target=True, log_cql_alpha=0.0)
        >>> m.params_for("cql_alpha") == [m.log_cql_alpha]
        True
    """

    def __init__(self, *args: Any, log_cql_alpha: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log_cql_alpha = (
            None if log_cql_alpha is None else nn.Parameter(torch.tensor([float(log_cql_alpha)]))
        )

    def params_for(self, loss_name: str) -> list[nn.Parameter]:
        if loss_name == "cql_alpha" and self.log_cql_alpha is not None:
            return [self.log_cql_alpha]
        return super().params_for(loss_name)


@layers_from_hidden
def cql_model(state_space, action_space, dist_class, config, seed):
    """SAC's model (:func:`~rlkit.learners.actor_critic.sac.sac_model`: the same networks from
    the same seed) with ``log_cql_alpha`` when ``target_action_gap`` is a number."""
    base = sac.sac_model(state_space, action_space, dist_class, config, seed)
    learned = config["target_action_gap"] is not None
    model = CQLModel(
        base.actor,
        base.critic,
        actor_target=False,
        critic_target=True,
        log_ent_coef=None if base.log_ent_coef is None else float(base.log_ent_coef.detach()),
        deterministic_fn=base.deterministic_fn,
        log_cql_alpha=math.log(config["cql_alpha"]) if learned else None,
    )
    return model


def critic_adam(config: dict[str, Any]) -> GradientDescent:
    """Adam at ``lr`` (the critics)."""
    return GradientDescent("adam", lr=config["lr"], fused=True, keep_deltas=False)


def actor_adam(config: dict[str, Any]) -> GradientDescent:
    """Adam at ``actor_lr`` (the actor and the entropy coefficient)."""
    return GradientDescent("adam", lr=config["actor_lr"], fused=True, keep_deltas=False)


def alpha_adam(config: dict[str, Any]) -> GradientDescent:
    """Adam at ``alpha_lr`` (the Lagrangian multiplier)."""
    return GradientDescent("adam", lr=config["alpha_lr"], fused=True, keep_deltas=False)


class CQLBase(sac.SACBase):
    """SAC's base with CQL's hyperparameter checks; no ``cql_alpha`` optimizer for a fixed
    ``alpha``."""

    def check_config(self, owner: str, action_space: Any, env: Any) -> None:
        super().check_config(owner, action_space, env)
        c = self.config
        finite_float(owner, "actor_lr", c["actor_lr"], low=0, low_open=True)
        finite_float(owner, "alpha_lr", c["alpha_lr"], low=0, low_open=True)
        finite_float(owner, "conservative_weight", c["conservative_weight"], low=0)
        positive_int(owner, "n_action_samples", c["n_action_samples"])
        finite_float(owner, "cql_alpha", c["cql_alpha"], low=0, low_open=True)
        if c["target_action_gap"] is not None:
            finite_float(owner, "target_action_gap", c["target_action_gap"])
        for key in ("soft_q_backup", "critic_layer_norm"):
            if not isinstance(c[key], bool):
                raise TypeError(f"{owner}: {key} must be True or False, got {c[key]!r}")

    def make_optimizer(self, owner: str) -> dict[str, Any]:
        made = super().make_optimizer(owner)
        if self.model.log_cql_alpha is None:  # a fixed alpha: nothing to learn
            made.pop("cql_alpha")
        return made


CQL = build_policy(
    "CQL",
    loss_fn={
        "ent_coef": sac.ent_coef_loss,
        "critic": critic_loss,
        "cql_alpha": cql_alpha_loss,
        "actor": sac.actor_loss,
    },
    model_fn=cql_model,
    optimizer={
        "ent_coef": actor_adam,
        "critic": critic_adam,
        "cql_alpha": alpha_adam,
        "actor": actor_adam,
    },
    defaults=CQL_DEFAULTS,
    base=CQLBase,
    doc=__doc__,  # the module docstring: the algorithm, its defaults and an example
)


# ---- what CQL learns from one batch ----
@update.dispatch
def _(policy: CQL, batch: Batch, /):
    """One CQL gradient step (module docstring); its diagnostics."""
    model = policy.model
    shape = batch["action"].shape
    n = policy.config["n_action_samples"]
    samples = (shape[0], n, shape[1])
    g = policy.train_generator
    device = policy.device
    batch["pi_noise"] = torch.randn(shape, generator=g).to(device)
    batch["next_noise"] = torch.randn(shape, generator=g).to(device)
    batch["cql_pi_noise"] = torch.randn(samples, generator=g).to(device)
    batch["cql_next_noise"] = torch.randn(samples, generator=g).to(device)
    batch["cql_random"] = (torch.rand(samples, generator=g) * 2.0 - 1.0).to(device)
    if model.log_ent_coef is not None:
        batch["ent_coef"] = model.log_ent_coef.detach().exp().clone()
    else:
        batch["ent_coef"] = torch.tensor(sac.parse_ent_coef("CQL", policy.config["ent_coef"])[1])
    # the actor's outputs at s (with its gradient: the entropy coefficient's and the actor's
    # sample) and at s' (the backup's and the conservative samples'), computed once
    mean, log_std = model.actor(batch["state"])
    batch["pi"] = sac.squashed_gaussian(mean, log_std, batch["pi_noise"])
    batch["state_actor"] = (mean.detach(), log_std.detach())
    with torch.no_grad():
        batch["next_state_actor"] = model.actor(batch["next_state"])
    info: dict[str, float] = {}
    if "ent_coef" in policy.optimizer:
        info.update(policy.step_loss("ent_coef", batch))
    else:
        info["ent_coef"] = float(batch["ent_coef"])
    info.update(policy.step_loss("critic", batch))
    if "cql_alpha" in policy.optimizer:
        batch["cql_gap"] = torch.tensor(info["cql_gap"], device=device)
        info.update(policy.step_loss("cql_alpha", batch))
    info["cql_alpha"] = float(_alpha(model, policy.config).detach())
    info.update(policy.step_loss("actor", batch))
    policy.gradient_steps += 1
    if policy.gradient_steps % policy.config["target_update_interval"] == 0:
        policy.sync_targets()
    return info
