"""RecurrentPPO: PPO's losses on sequences, with an LSTM policy (sb3-contrib's ``RecurrentPPO``
with ``MlpLstmPolicy``).

Acting: :class:`~rlkit.learners.policy_gradient.recurrent_policy.RecurrentPolicy` carries the
LSTM's hidden state per sub-env (zeroed at episode starts) and stores, with each action, its
value, log-probability, ``episode_start`` and ``lstm_state`` (the state the step started from).

Learning from a full rollout (``update(policy, batch)``, below): GAE as PPO's
(:func:`~rlkit.learners.policy_gradient.functions.gae`), the states where an episode was cut
(truncation, the rollout's end) valued from the hidden state *after* their step (sb3-contrib's
rule); then ``n_epochs`` times, the rollout is cut into minibatches and each minibatch takes
one Adam step (eps 1e-5, gradient norm clipped at ``max_grad_norm``) on
:func:`recurrent_ppo_loss`: the LSTM replayed over each sequence from its stored first state,
then PPO's clipped surrogate, value loss and entropy
(:func:`~rlkit.learners.policy_gradient.ppo.ppo_objective`) over the real steps only (padding
is masked out; advantages normalised over the real steps of the minibatch). How the minibatches
are cut is ``minibatch_layout``:

* ``"sb3"`` (the default), sb3-contrib's: each epoch the rollout, env-major, is rotated to start
  at a split point drawn from the policy's generator and cut into minibatches of ``batch_size``
  consecutive transitions, taken in that order; inside a minibatch a sequence begins at each
  episode start, each sub-env's first step and the minibatch's first transition (and every
  ``sequence_length`` steps when that is given), so back-propagation through time is cut where
  the minibatches are (rlkit/learners/policy_gradient/recurrent_minibatches.py,
  :class:`~rlkit.learners.policy_gradient.recurrent_minibatches.RotatedMultiStep`). Given
  sb3-contrib's weights, rollout and split points, an update moves the weights where
  sb3-contrib's ``train()`` does, within 1e-7 with the zoo's CartPoleNoVel settings (float
  rounding, which grows with more minibatches: benchmarks/recurrent_lockstep.py,
  benchmarks/results_recurrent.txt);
* ``"sequences"``: ``Batch.sequences`` (rlkit/learners/batch.py) cuts the rollout once, each
  sub-env's steps cut at every episode start and every ``sequence_length`` steps (default
  ``None``: ``min(n_steps, batch_size)``); each epoch the sequences are shuffled and packed
  whole into minibatches of at most ``batch_size`` real steps (:class:`SequenceMultiStep`), so
  the gradient flows through each whole sequence (the layout of rlkit before
  ``minibatch_layout``).

Defaults are sb3-contrib's (``n_steps`` 128, ``batch_size`` 128, ``lstm_hidden_size`` 256,
``n_lstm_layers`` 1, ``shared_lstm`` False, ``enable_critic_lstm`` True, MLPs (64, 64) tanh after
the LSTM, orthogonal initialisation, its minibatch layout). Difference: gSDE (``use_sde``) is
not available.

Example:
    >>> import rlkit as rk
    >>> env = rk.VectorGymEnv("rlkit/CartPoleNoVel-v1", 2, seed=0)
    >>> agent = rk.RecurrentPPO.agent(env, seed=0, n_steps=16, batch_size=16,
    ...                               lstm_hidden_size=16, n_epochs=2)
    >>> hook = rk.run(agent, env, rk.StopAfterNSteps(32))
    >>> agent.policy.updates, "clip_fraction" in rk.statistics(agent.policy)
    (1, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from ...core.checks import optional_positive_int, positive_int
from ...core.dispatch import update
from ...optimizers import (
    ClippedStep,
    GradientDescent,
    MultiStep,
    NonFiniteError,
    OptimizerModule,
)
from ...trajectories.structured import map_leaves
from ..batch import Batch
from ..builder import build_policy
from ..built import initial_value
from ..compiled import refuse_compile
from ..hyperparameters import check_hyperparameters
from ..update import LossClosures, postprocessed, refused, set_learning_rate
from .functions import gae, value_stats
from .ppo import PPO_DEFAULTS, ppo_objective
from .recurrent_minibatches import RotatedMultiStep, StepSequences
from .recurrent_models import recurrent_actor_critic_model
from .recurrent_policy import RecurrentPolicy

__all__ = [
    "RecurrentPPO",
    "RECURRENT_PPO_DEFAULTS",
    "recurrent_ppo_loss",
    "add_recurrent_advantages",
    "sequence_batch",
    "SequenceMultiStep",
    "pack_sequences",
]

RECURRENT_PPO_DEFAULTS = {
    **PPO_DEFAULTS,  # "cnn": image observations' CNN body (None: by frame size)
    "n_steps": 128,
    "batch_size": 128,
    "lstm_hidden_size": 256,
    "n_lstm_layers": 1,
    "shared_lstm": False,
    "enable_critic_lstm": True,
    "ortho_init": True,
    "sequence_length": None,  # None: min(n_steps, batch_size) ("sequences"), no limit ("sb3")
    "minibatch_layout": "sb3",  # sb3-contrib's rotated minibatches, or "sequences"
}

MINIBATCH_LAYOUTS = ("sb3", "sequences")

# what the loss reads per step of a sequence
_STEP_KEYS = ("state", "action", "log_prob", "value", "advantages", "returns", "legal_action_mask")


# ---- postprocess_fn: GAE, bootstrapped from the hidden state after each step ----
def add_recurrent_advantages(policy, batch):
    """``postprocess_fn``: the value of each step's final state from the hidden state after
    that step (the state stored at the next step; after the last step, the policy's act
    state), then GAE with ``gamma`` and ``gae_lambda``; adds ``advantages`` and ``returns``."""
    stored = np.asarray(batch["lstm_state"])  # (T, n, n_states, layers, hidden), before each step
    now = policy.act_state.current(policy.model, stored.shape[1], policy.device)
    after = torch.cat(
        [torch.as_tensor(stored[1:], device=policy.device), now.unsqueeze(0).to(torch.float32)]
    )
    # (T, n, ...) observations (a Dict's: by key) as (T * n, ...) rows
    final = map_leaves(lambda a: torch.as_tensor(np.asarray(a), dtype=torch.float32,
                                                 device=policy.device).flatten(0, 1),
                       batch["final_state"])  # fmt: skip
    steps, n = stored.shape[:2]
    with torch.no_grad():
        next_values = policy.model.values_after(final, after.flatten(0, 1)).reshape(steps, n)
    advantages, returns = gae(
        batch["reward"],
        batch["value"],
        next_values.cpu().numpy().astype(np.float64),
        batch["terminated"],
        batch["truncated"],
        gamma=float(policy.hp("gamma")),
        lam=float(policy.hp("gae_lambda")),
    )
    return {**batch, "advantages": advantages, "returns": returns}


# ---- the sequences: one row per sequence ----
def sequence_batch(batch: Mapping[str, Any], length: int, device: Any) -> Batch:
    """The rollout's ``(n_steps, n_envs, ...)`` arrays as sequences (``Batch.sequences``), one
    row per sequence: ``(n_seq, length, ...)`` tensors of the steps the loss reads, ``mask``
    (real steps), and the ``lstm_state`` and ``episode_start`` of each sequence's first step.

    Example:
        >>> import numpy as np
        >>> rollout = {"state": np.zeros((4, 1, 2)), "action": np.zeros((4, 1)),
        ...            "lstm_state": np.zeros((4, 1, 2, 1, 3)),
        ...            "episode_start": np.array([[True], [False], [True], [False]])}
        >>> seq = sequence_batch(rollout, 4, "cpu")
        >>> seq["state"].shape, seq["mask"].tolist(), seq["lstm_state"].shape
        (torch.Size([2, 4, 2]), [[True, True, False, False], [True, True, False, False]], torch.Size([2, 2, 1, 3]))
    """  # noqa: E501
    keys = [k for k in (*_STEP_KEYS, "lstm_state", "episode_start") if k in batch]
    cut = Batch({k: batch[k] for k in keys}).sequences(length)
    out = Batch()
    out.owner = "RecurrentPPO: the sequence batch"
    for key in keys:
        if key in ("lstm_state", "episode_start"):
            continue
        out[key] = map_leaves(lambda a, key=key: _tensor(np.swapaxes(a, 0, 1), key, device),
                              cut[key])  # fmt: skip
    out["lstm_state"] = torch.as_tensor(cut["lstm_state"][0], dtype=torch.float32, device=device)
    out["episode_start"] = torch.as_tensor(cut["episode_start"][0], device=device)
    out["mask"] = torch.as_tensor(np.swapaxes(cut["mask"], 0, 1), device=device)
    return out


def _tensor(array: np.ndarray, key: str, device: Any) -> torch.Tensor:
    array = np.ascontiguousarray(array)
    dtype = torch.float32 if array.dtype.kind == "f" or key == "state" else None
    return torch.as_tensor(array, dtype=dtype, device=device)


# ---- loss_fn: PPO's objective on the real steps of the sequences ----
def recurrent_ppo_loss(policy, model, dist_class, batch):
    """The LSTM replayed over each sequence from its stored first state, then PPO's clipped
    surrogate, value loss and entropy on the real (unpadded) steps, with PPO's diagnostics."""
    inputs, values = model.sequences(batch["state"], batch["lstm_state"], batch["episode_start"])
    mask = batch["mask"]
    steps = Batch({k: batch[k][mask] for k in _STEP_KEYS if k in batch and k != "state"})
    steps.owner = batch.owner
    dist = dist_class.from_inputs(inputs[mask], policy.action_space,
                                  steps.get("legal_action_mask"))  # fmt: skip
    return ppo_objective(policy, dist, values[mask], steps)


# ---- the optimizer: whole sequences packed into minibatches of real steps ----
def pack_sequences(
    lengths: np.ndarray, size: int, generator: np.random.Generator
) -> list[np.ndarray | None]:
    """One epoch: the sequences in an order drawn from ``generator``, packed in that order
    into minibatches of at most ``size`` real steps (a longer sequence alone); ``[None]`` (all,
    in order, nothing drawn) when every sequence fits in one.

    Example:
        >>> [i.tolist() for i in pack_sequences(np.array([3, 2, 4, 1]), 5, np.random.default_rng(0))]
        [[2], [0, 1], [3]]
    """  # noqa: E501
    if int(lengths.sum()) <= size:
        return [None]
    order = generator.permutation(len(lengths))
    parts, current, total = [], [], 0
    for i in order:
        if current and total + lengths[i] > size:
            parts.append(np.array(current))
            current, total = [], 0
        current.append(i)
        total += int(lengths[i])
    parts.append(np.array(current))
    return parts


class SequenceMultiStep(MultiStep):
    """``MultiStep`` whose minibatches are whole sequences of at most ``minibatch_size`` real
    steps (:func:`pack_sequences`); ``step`` takes the sequences' ``lengths``.

    Example:
        >>> import rlkit as rk
        >>> SequenceMultiStep(rk.optimizers.GradientDescent("adam"), 2, 128)
        SequenceMultiStep(GradientDescent(optimizer='adam'), num_steps=2, minibatch_size=128, seed=0)
    """  # noqa: E501

    type_name = "sequence_multi_step"
    role = "wraps: repeats the inner module's step over minibatches of whole sequences"

    def step(self, params: Any, fn_loss: Any, *, lengths: Any = None, **fns: Any) -> Any:
        if lengths is None:
            raise ValueError("SequenceMultiStep: step needs lengths (the sequences' real steps)")
        self._lengths = np.asarray(lengths)
        return super().step(params, fn_loss, **fns)

    def minibatches(
        self, batch_size: int, generator: np.random.Generator | None = None
    ) -> list[np.ndarray | None]:
        size = self.minibatch_size or int(self._lengths.sum())
        return pack_sequences(self._lengths, size, self.rng if generator is None else generator)


def recurrent_optimizer(config: dict) -> OptimizerModule:
    """PPO's optimizer over sequences: ``RotatedMultiStep(ClippedStep(GradientDescent(Adam,
    eps=1e-5), max_grad_norm), n_epochs, batch_size)`` (``minibatch_layout`` ``"sb3"``;
    ``SequenceMultiStep`` for ``"sequences"``)."""
    tree: OptimizerModule = GradientDescent(
        "adam", lr=initial_value(config["lr"]), eps=1e-5, fused=True, keep_deltas=False
    )
    if config.get("max_grad_norm") is not None:
        tree = ClippedStep(tree, config["max_grad_norm"], on="gradient")
    sequences = config.get("minibatch_layout") == "sequences"
    epochs = SequenceMultiStep if sequences else RotatedMultiStep
    return epochs(tree, config["n_epochs"], minibatch_size=config["batch_size"])


# ---- the policy: PPO's pieces on sequences ----
class _RecurrentPPOBase(RecurrentPolicy):
    """Refuses sequences longer than the rollout at construction."""

    def check_config(self, owner: str, action_space: Any, env: Any) -> None:
        # BuiltPolicy's checks but its minibatch warning (about transitions, not sequences)
        positive_int(owner, "n_steps", self.config["n_steps"])
        positive_int(owner, "n_epochs", self.config["n_epochs"])
        positive_int(owner, "batch_size", self.config["batch_size"])
        check_hyperparameters(owner, self.config)
        layout = self.config["minibatch_layout"]
        if layout not in MINIBATCH_LAYOUTS:
            raise ValueError(
                f"{owner}: minibatch_layout must be one of {list(MINIBATCH_LAYOUTS)} (\"sb3\": "
                f"sb3-contrib's rotated minibatches of consecutive transitions; \"sequences\": "
                f"whole sequences shuffled and packed), got {layout!r}"
            )
        length = optional_positive_int(owner, "sequence_length", self.config["sequence_length"])
        n_steps = self.config["n_steps"]
        if length is not None and length > n_steps:
            raise ValueError(
                f"{owner}: sequence_length={length} is longer than the rollout (n_steps="
                f"{n_steps}): a sequence holds the steps of one sub-env's rollout at most; give "
                f"sequence_length <= {n_steps}, or None (min(n_steps, batch_size))"
            )

    def check_compilable(self, owner: str) -> None:
        """Refuse ``compile=True``: acting steps the LSTM with its hidden state, outside the
        compiled forward pass."""
        refuse_compile(owner, "its model steps an LSTM with a hidden state when acting")

    def sequence_length(self) -> int:
        """The longest sequence of the ``"sequences"`` layout: ``sequence_length``, or
        ``min(n_steps, batch_size)``."""
        config = self.config
        return config["sequence_length"] or min(config["n_steps"], config["batch_size"])


RecurrentPPO = build_policy(
    "RecurrentPPO",
    loss_fn=recurrent_ppo_loss,
    postprocess_fn=add_recurrent_advantages,
    stats_fn=value_stats,
    model_fn=recurrent_actor_critic_model,
    optimizer=recurrent_optimizer,
    defaults=RECURRENT_PPO_DEFAULTS,
    base=_RecurrentPPOBase,
    doc=__doc__,
)


def learn_sequences(policy: Any, batch: Mapping[str, Any]) -> None:
    """Learn from one rollout (module docstring): postprocess, the sequences (cut per
    minibatch for ``minibatch_layout`` ``"sb3"``, once for ``"sequences"``), the optimizer
    tree over them, statistics."""
    cls = type(policy)
    batch = postprocessed(policy, batch)
    tree = policy.optimizer
    if policy.lr_driven:
        set_learning_rate(tree, float(policy.hp("lr")))
    if policy.config["minibatch_layout"] == "sequences":
        seqs = sequence_batch(batch, policy.sequence_length(), policy.device)
        closures = LossClosures(policy, seqs, with_kl=False)
        lengths = seqs["mask"].sum(dim=1).cpu().numpy()
        n_sequences = len(lengths)
        fns: dict[str, Any] = {"batch_size": len(lengths), "lengths": lengths}
    else:
        keys = [k for k in _STEP_KEYS if k in batch]
        steps = StepSequences(batch, keys, policy.device, policy.config["sequence_length"])
        closures = LossClosures(policy, steps, with_kl=False)  # rows(indices): a minibatch
        n_sequences = int(steps.starts(np.arange(len(steps))).sum())
        fns = {"batch_size": len(steps)}
    try:
        result = tree.step(policy.params, closures.fn_loss, generator=policy.rng, **fns)
    except NonFiniteError as error:
        raise refused(policy, error) from None
    policy.updates += 1
    policy.gradient_steps += int(result.statistics.get("inner_steps", 1))
    stats = {**closures.means(), "loss": result.statistics.get("loss", result.loss),
             "grad_norm": result.statistics.get("grad_norm", result.grad_norm),
             "learning_rate": float(policy.hp("lr")), "sequences": float(n_sequences)}  # fmt: skip
    if "early_stop_epoch" in result.statistics:
        stats["early_stop_epoch"] = result.statistics["early_stop_epoch"]
    stats.update({k: float(v) for k, v in cls.stats_fn(policy, batch).items()})
    policy.stats = stats


# ---- what RecurrentPPO learns from one rollout ----
@update.dispatch
def _(policy: RecurrentPPO, batch: Batch, /):
    learn_sequences(policy, batch)
