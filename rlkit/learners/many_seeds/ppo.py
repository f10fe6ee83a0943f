"""``ManySeedsPPO``: PPO for several seeds at once, stacked parameters and ``vmap``-ed losses.

Each seed ``s`` owns what a single PPO run of that seed owns: an ``rk.PPO`` built with the
seed's policy seed (its network initialisation, its action-sampling generator and its minibatch
shuffling generator; ``seed_policy(i)``), and a block of ``n_envs`` sub-envs of a
:class:`~rlkit.envs.seed_blocks.SeedBlocksEnv`. The networks' parameters are stacked
(:class:`~rlkit.learners.many_seeds.stacked.StackedModel`: ``vmap`` of ``functional_call``, or
batched matrix products for the ``ActorCritic`` MLPs); acting is one forward pass for every
seed's sub-envs, then each seed samples its actions with its own generator; the
rollout of all sub-envs is one :class:`~rlkit.RolloutTrajectory`, learned from by the on-policy
driver (rlkit/learners/drivers/on_policy.py) as for any PPO.

What it learns from one rollout, ``update(policy: ManySeedsPPO, batch)``: GAE per sub-env (the
values of the final states from the stacked forward pass); then ``n_epochs`` epochs over each
seed's minibatches (drawn from that seed's generator, as PPO's ``MultiStep`` draws them); on
each minibatch every seed's PPO loss (:func:`seed_loss`: the terms of ``ppo_loss`` and
rlkit/learners/policy_gradient/functions.py, ``vmap``-ed over the seeds or computed per seed
along the first dimension) is computed at once and the sum of the seeds' losses
back-propagated once (the seeds share no parameter, so each seed's gradient is its
own loss's), each seed's gradient clipped by its own norm
(``rk.optimizers`` ``PerSeedClippedGradient``) and one Adam step taken on the stacked
parameters (Adam is element-wise: each seed steps as alone). Every seed uses the same
hyperparameters; ``lr`` and ``clip_range`` schedules follow each seed's own transitions.

Differences from N single runs: the numbers of a seed can differ from its single run by float
rounding (batched matrix products), so runs are equal in distribution, not bit for bit; a
seed's result does not depend on the other seeds (``seeds=[s]`` gives seed ``s`` the same
numbers as inside ``seeds=[0, ..., s, ...]``, to float rounding). ``target_kl`` (an early stop
that would end different seeds' epochs at different times) is not supported.

Example:
    >>> import rlkit as rk
    >>> env = rk.SeedBlocksEnv([rk.VectorGymEnv("CartPole-v1", 2, seed=s) for s in (0, 1)], [0, 1])
    >>> agent = rk.ManySeedsPPO.agent(env, policy_seeds=[10, 11], n_steps=16, batch_size=16)
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(128))
    >>> agent.policy.updates, sorted(rk.statistics(agent.policy))[:2]
    (2, ['approx_kl/seed=0', 'approx_kl/seed=1'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch.func import vmap

from ...core.dispatch import statistics, update
from ...core.stages import PostActStage
from ...core.state import generator_state, require_keys, set_generator_state, state_count
from ...optimizers import GradientDescent, NonFiniteError, OptimizerModule
from ...optimizers.multi_step import epoch_indices
from ...optimizers.per_seed import PerSeedClippedGradient
from ...policies.agent import Agent
from ...policies.distributions import Categorical
from ...policies.stochastic import AnyEnv, StochasticPolicy
from ...trajectories.rollout import RolloutTrajectory
from ..batch import Batch
from ..built import initial_value
from ..drivers.on_policy import learn_when_full
from ..policy_gradient.functions import (
    approx_kl,
    clipped_surrogate,
    entropy_bonus,
    gae,
    normalize,
    value_loss,
)
from ..policy_gradient.ppo import PPO
from ..update import set_learning_rate
from .sampling import sample_blocks
from .stacked import StackedModel

__all__ = ["ManySeedsPPO", "seed_loss", "seed_loss_function", "batched_seed_loss"]

_DIAGNOSTICS = ("policy_loss", "value_loss", "entropy_loss", "approx_kl", "clip_fraction", "loss")


class ManySeedsPPO(StochasticPolicy):
    """PPO for every seed of a :class:`~rlkit.envs.seed_blocks.SeedBlocksEnv` (module
    docstring). ``ManySeedsPPO(env, policy_seeds=[...], device="cpu", **config)``: ``config``
    are PPO's hyperparameters (``rk.PPO.defaults``), the same for every seed; ``policy_seeds``
    one per block of ``env`` (what a single run of that seed gives ``rk.PPO(seed=...)``);
    ``fast=False`` computes the ``ActorCritic`` networks with ``vmap`` too (``StackedModel``).

    Example:
        >>> import rlkit as rk
        >>> env = rk.SeedBlocksEnv([rk.VectorGymEnv("CartPole-v1", 2, seed=s) for s in (0, 1)],
        ...                        [0, 1])
        >>> policy = rk.ManySeedsPPO(env, policy_seeds=[10, 11], n_steps=16)
        >>> policy.n_seeds, type(policy.seed_policy(1)).__name__
        (2, 'PPO')
    """

    name = "ManySeedsPPO"

    def __init__(
        self,
        env: Any,
        *,
        policy_seeds: Sequence[int | np.random.SeedSequence],
        device: str | torch.device = "cpu",
        fast: bool = True,
        **config: Any,
    ) -> None:
        owner = type(self).name
        blocks = getattr(env, "envs", None)
        if blocks is None or not hasattr(env, "block"):
            raise TypeError(
                f"{owner}: env must be an rlkit.envs.seed_blocks.SeedBlocksEnv (one vector env "
                f"per seed), got {env!r:.80}"
            )
        if len(policy_seeds) != len(blocks):
            raise ValueError(
                f"{owner}: one policy seed per block of {env!r} expected ({len(blocks)}), got "
                f"{len(policy_seeds)}"
            )
        if config.get("target_kl") is not None:
            raise ValueError(
                f"{owner}: target_kl is not supported with many seeds (its early stop would end "
                f"the seeds' epochs at different times), got {config['target_kl']!r}"
            )
        self.views = [PPO(block, seed=s, device=device, **config) for block, s in zip(
            blocks, policy_seeds, strict=True)]  # fmt: skip
        first = self.views[0]
        super().__init__(
            first.model, first.action_space, dist_class=first.dist_class, device=first.device
        )
        self.state_space = first.state_space
        self.config = first.config
        self.seeds = list(getattr(env, "seeds", range(len(blocks))))
        self.n_seeds, self.block = len(self.views), env.block
        self.stacked = StackedModel([v.model for v in self.views], fast=fast)
        self.params = self.stacked.parameters()
        self._generators = [v.generator for v in self.views]  # each seed's sampling generator
        self.optimizer = _tree(first.config)
        self._loss = vmap(seed_loss_function(self), in_dims=(0, 0, 0, None, None))
        self.transitions = 0  # all seeds' transitions (each seed's: transitions // n_seeds)
        self.updates = 0
        self.gradient_steps = 0
        self.stats: dict[str, float] = {}

    def __repr__(self) -> str:
        return f"ManySeedsPPO(seeds={self.seeds}, {self.dist_class.__name__})"

    @classmethod
    def agent(cls, env: Any, *, policy_seeds: Sequence[Any], **config: Any) -> Agent:
        """A new policy for ``env`` and the rollout of all its sub-envs, as an ``rk.Agent``."""
        policy = cls(env, policy_seeds=policy_seeds, **config)
        return Agent(policy, RolloutTrajectory(policy.config["n_steps"], env.n_envs))

    def hp(self, name: str) -> Any:
        """The hyperparameter ``name`` now (a schedule at each seed's transitions)."""
        view = self.views[0]
        view.transitions = self.transitions // self.n_seeds
        return view.hp(name)

    # ---- acting: one stacked forward pass, each seed's own sampling generator ----
    def _outputs(self, obs: torch.Tensor, method: str | None = None) -> torch.Tensor:
        shaped = obs.reshape(self.n_seeds, self.block, *obs.shape[1:])
        out = self.stacked(shaped, method=method)
        return out.reshape(self.n_seeds * self.block, *out.shape[2:])

    def distribution(self, obs: torch.Tensor, mask: Any = None) -> Any:
        """The action distributions of every seed's sub-envs (``obs`` of ``n_seeds * block``
        rows, block ``i`` seed ``i``'s)."""
        self._inputs, self._mask = self._outputs(obs), mask
        return self.dist_class.from_inputs(self._inputs, self.action_space, mask)

    def choose(self, dist: Any) -> torch.Tensor:
        b = self.block
        if type(dist) is Categorical:  # Categorical.sample of each seed's rows, at once
            probs = dist.probs
            on = probs.to(self.views[0].generator.device)  # drawn where the generators are
            return sample_blocks(on, self._generators, b).to(probs.device)
        inputs, mask = self._inputs, self._mask  # of the distribution() just called
        return torch.cat([
            self.dist_class.from_inputs(
                inputs[i * b:(i + 1) * b], self.action_space,
                None if mask is None else mask[i * b:(i + 1) * b],
            ).sample(view.generator)
            for i, view in enumerate(self.views)
        ])  # fmt: skip

    def extra_action_out(self, obs, dist, actions):
        return {"value": self._outputs(obs, "value"), "log_prob": dist.log_prob(actions)}

    # ---- one seed's trained policy ----
    def seed_policy(self, i: int) -> PPO:
        """Seed ``seeds[i]``'s policy as a plain ``rk.PPO`` (its current parameters and
        counters): evaluate it, save it, or keep training it alone."""
        view = self.views[i]
        view.model.load_state_dict(self.stacked.unstacked(i))
        view.transitions = self.transitions // self.n_seeds
        view.updates, view.gradient_steps = self.updates, self.gradient_steps // self.n_seeds
        return view

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        return {
            "algorithm": type(self).name,
            "seeds": list(self.seeds),
            "params": {k: v.detach().clone() for k, v in self.stacked.params.items()},
            "buffers": {k: v.clone() for k, v in self.stacked.buffers.items()},
            "optimizer": self.optimizer.state_dict(),
            "generators": [v.generator.get_state().clone() for v in self.views],
            "rngs": [generator_state(v.rng) for v in self.views],
            "transitions": self.transitions,
            "updates": self.updates,
            "gradient_steps": self.gradient_steps,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        owner = type(self).name
        require_keys(owner, state, "seeds", "params", "buffers", "optimizer", "generators", "rngs")
        if [int(s) for s in state["seeds"]] != [int(s) for s in self.seeds]:
            raise ValueError(
                f"{owner}: the checkpoint holds seeds {list(state['seeds'])}, this policy "
                f"{self.seeds}"
            )
        for key, tensor in self.stacked.params.items():
            saved = state["params"].get(key)
            if saved is None or tuple(saved.shape) != tuple(tensor.shape):
                raise ValueError(
                    f"{owner}: the checkpoint's {key} does not match this policy's "
                    f"{tuple(tensor.shape)}; make the policy with the checkpoint's hyperparameters"
                )
        self.stacked.load(state["params"], state["buffers"])
        self.optimizer.load_state_dict(state["optimizer"])
        for view, gen, rng in zip(self.views, state["generators"], state["rngs"], strict=True):
            view.generator.set_state(gen)
            set_generator_state(view.rng, rng)
        for key in ("transitions", "updates", "gradient_steps"):
            setattr(self, key, state_count(owner, state, key))


def _tree(config: dict) -> OptimizerModule:
    """PPO's Adam (eps 1e-5, fused) on the stacked parameters, each seed's gradient clipped at
    ``max_grad_norm`` by its own norm."""
    adam = GradientDescent(
        "adam", lr=initial_value(config["lr"]), eps=1e-5, fused=True, keep_deltas=False
    )
    if config.get("max_grad_norm") is None:
        return adam
    return PerSeedClippedGradient(adam, config["max_grad_norm"])


def seed_loss_function(policy: ManySeedsPPO) -> Any:
    """``seed_loss(params, buffers, minibatch, clip, ent_coef)`` of one seed: PPO's loss
    (``ppo_loss``'s terms) and its diagnostics ``_DIAGNOSTICS`` as one tensor."""
    forward = policy.stacked.function()
    value = policy.stacked.function("value")
    dist_class, space = policy.dist_class, policy.action_space
    config = policy.config
    clip_vf, vf_coef = config["clip_range_vf"], float(config["vf_coef"])
    normalized = bool(config["normalize_advantage"])

    def seed_loss(params: dict, buffers: dict, mb: dict, clip: float, ent_coef: float):
        obs = mb["state"]
        dist = dist_class.from_inputs(forward(params, buffers, obs), space)
        log_prob = dist.log_prob(mb["action"])
        values = value(params, buffers, obs)
        advantages = normalize(mb["advantages"]) if normalized else mb["advantages"]
        policy_loss = clipped_surrogate(log_prob, mb["log_prob"], advantages, clip)
        v_loss = value_loss(values, mb["returns"], mb["value"], clip_vf)
        ent_loss = entropy_bonus(dist.entropy())
        loss = policy_loss + ent_coef * ent_loss + vf_coef * v_loss
        with torch.no_grad():
            ratio = torch.exp(log_prob - mb["log_prob"])
            clip_fraction = ((ratio - 1).abs() > clip).float().mean()
            kl = approx_kl(log_prob, mb["log_prob"])
        diagnostics = torch.stack([policy_loss, v_loss, ent_loss, kl, clip_fraction, loss])
        return loss, diagnostics.detach()

    return seed_loss


def seed_loss(policy: ManySeedsPPO, minibatch: dict, clip: float, ent_coef: float):
    """Every seed's PPO loss on its minibatch: ``(losses, diagnostics)``, shapes
    ``(n_seeds,)`` and ``(n_seeds, 6)``; ``vmap`` of :func:`seed_loss_function`, or, for the
    ``ActorCritic`` MLPs the stacked model computes with batched matrix products, the same
    terms computed per seed along the first dimension (:func:`batched_seed_loss`)."""
    stacked = policy.stacked
    if stacked.mlps is not None:
        return batched_seed_loss(policy, minibatch, clip, ent_coef)
    if "legal_action_mask" in minibatch:
        raise ValueError(
            "ManySeedsPPO: legal-action masks are supported with the actor-critic MLP (the "
            "batched path, fast=True, the default for hidden layers), not with a model that "
            "needs torch.func.vmap; run the seeds one at a time (rk.PPO) on a masked env"
        )
    return policy._loss(stacked.params, stacked.buffers, minibatch, clip, ent_coef)


def batched_seed_loss(policy: ManySeedsPPO, mb: dict, clip: float, ent_coef: float):
    """:func:`seed_loss_function`'s terms for every seed at once, each mean taken over a seed's
    own rows (dimension 1)."""
    config = policy.config
    obs = mb["state"]
    mask = mb.get("legal_action_mask")  # the masked categorical, as rk.PPO's loss
    dist = policy.dist_class.from_inputs(policy.stacked(obs), policy.action_space, mask)
    log_prob = dist.log_prob(mb["action"])
    values = policy.stacked(obs, method="value")
    advantages = mb["advantages"]
    if config["normalize_advantage"] and advantages.shape[1] > 1:
        mean, std = advantages.mean(1, keepdim=True), advantages.std(1, keepdim=True)
        advantages = (advantages - mean) / (std + 1e-8)
    log_ratio = log_prob - mb["log_prob"]
    ratio = torch.exp(log_ratio)
    clipped = advantages * torch.clamp(ratio, 1.0 - clip, 1.0 + clip)
    policy_loss = -torch.min(advantages * ratio, clipped).mean(1)
    clip_vf = config["clip_range_vf"]
    if clip_vf is not None:
        values = mb["value"] + torch.clamp(values - mb["value"], -clip_vf, clip_vf)
    v_loss = (mb["returns"] - values).pow(2).mean(1)
    if ent_coef:
        ent_loss = -dist.entropy().mean(1)
        loss = policy_loss + ent_coef * ent_loss + float(config["vf_coef"]) * v_loss
    else:  # as entropy_term: reported, not back-propagated
        with torch.no_grad():
            ent_loss = -dist.entropy().mean(1)
        loss = policy_loss + float(config["vf_coef"]) * v_loss
    with torch.no_grad():
        kl = (torch.exp(log_ratio) - 1 - log_ratio).mean(1)
        clip_fraction = ((ratio - 1).abs() > clip).float().mean(1)
        diagnostics = torch.stack([policy_loss, v_loss, ent_loss, kl, clip_fraction, loss], 1)
    return loss, diagnostics


def _per_seed(policy: ManySeedsPPO, x: np.ndarray) -> np.ndarray:
    """``(n_steps, n_seeds * block, ...)`` -> ``(n_seeds, n_steps * block, ...)``: each seed's
    rows in the order a single run flattens its rollout (step-major)."""
    n, b = policy.n_seeds, policy.block
    t = x.shape[0]
    shaped = x.reshape(t, n, b, *x.shape[2:])
    return np.moveaxis(shaped, 1, 0).reshape(n, t * b, *x.shape[2:])


def _advantages(policy: ManySeedsPPO, batch: Batch) -> tuple[np.ndarray, np.ndarray]:
    final = torch.as_tensor(batch["final_state"], dtype=torch.float32, device=policy.device)
    t = final.shape[0]
    seeds_first = torch.as_tensor(_per_seed(policy, final.cpu().numpy()), device=policy.device)
    with torch.no_grad():
        values = policy.stacked(seeds_first, method="value")  # (n_seeds, t * block)
    next_values = (
        values.reshape(policy.n_seeds, t, policy.block).permute(1, 0, 2).reshape(t, -1)
    )
    return gae(
        batch["reward"],
        batch["value"],
        next_values.cpu().numpy().astype(np.float64),
        batch["terminated"],
        batch["truncated"],
        gamma=float(policy.hp("gamma")),
        lam=float(policy.hp("gae_lambda")),
    )


def _seed_tensors(policy: ManySeedsPPO, batch: Batch) -> dict[str, torch.Tensor]:
    advantages, returns = _advantages(policy, batch)
    arrays = {
        "state": (batch["state"], torch.float32),
        "action": (batch["action"], None),
        "log_prob": (batch["log_prob"], torch.float32),
        "value": (batch["value"], torch.float32),
        "advantages": (advantages, torch.float32),
        "returns": (returns, torch.float32),
    }
    if "legal_action_mask" in batch:  # stored by acting on a masked env
        arrays["legal_action_mask"] = (batch["legal_action_mask"], torch.bool)
    return {
        k: torch.as_tensor(_per_seed(policy, np.asarray(v)), dtype=dtype, device=policy.device)
        for k, (v, dtype) in arrays.items()
    }


def _minibatch(data: dict[str, torch.Tensor], rows: torch.Tensor | None) -> dict:
    if rows is None:
        return data
    seeds = torch.arange(rows.shape[0], device=rows.device)[:, None]
    return {k: v[seeds, rows] for k, v in data.items()}


# ---- PostAct: the on-policy driver's rule (rlkit/learners/drivers/on_policy.py) ----
@update.dispatch
def _(policy: ManySeedsPPO, trajectory: RolloutTrajectory, env: AnyEnv, stage: PostActStage, /):
    learn_when_full(policy, trajectory)


# ---- what every seed learns from one rollout (the on-policy driver calls it) ----
@update.dispatch
def _(policy: ManySeedsPPO, batch: Batch, /):
    """Every seed's PPO update on its part of the rollout (module docstring)."""
    data = _seed_tensors(policy, batch)
    n_rows = data["state"].shape[1]
    config = policy.config
    set_learning_rate(policy.optimizer, float(policy.hp("lr")))
    clip, ent_coef = float(policy.hp("clip_range")), float(policy.hp("ent_coef"))
    size = config["batch_size"] or n_rows
    sums = torch.zeros(policy.n_seeds, len(_DIAGNOSTICS))
    steps = 0
    for _ in range(int(config["n_epochs"])):
        epochs = [epoch_indices(n_rows, size, view.rng) for view in policy.views]
        for parts in zip(*epochs, strict=True):
            rows = None if parts[0] is None else torch.as_tensor(np.stack(parts))
            mb = _minibatch(data, rows)
            out: dict[str, torch.Tensor] = {}

            def fn_loss(mb: dict = mb, out: dict = out) -> torch.Tensor:
                losses, out["diagnostics"] = seed_loss(policy, mb, clip, ent_coef)
                return losses.sum()  # the seeds share no parameter: each gets its own gradient

            try:
                policy.optimizer.step(policy.params, fn_loss)
            except NonFiniteError as error:
                raise error.restated(
                    f"ManySeedsPPO: a seed's loss or gradient is {error.value} at update "
                    f"{policy.updates + 1}"
                ) from None
            sums += out["diagnostics"]
            steps += 1
    policy.updates += 1
    policy.gradient_steps += steps * policy.n_seeds
    means = (sums / max(steps, 1)).tolist()
    policy.stats = {
        f"{name}/seed={seed}": float(row[j])
        for seed, row in zip(policy.seeds, means, strict=True)
        for j, name in enumerate(_DIAGNOSTICS)
    }
    policy.stats["learning_rate"] = float(policy.hp("lr"))


@statistics.dispatch
def _(policy: ManySeedsPPO, /):
    return {**policy.stats, "transitions": float(policy.transitions)}
