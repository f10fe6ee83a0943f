"""``RecurrentPolicy``: a built policy whose model carries a hidden state between steps.

The hidden state is the policy's **act state**: one entry per sub-env (``(n_envs, n_states,
layers, hidden)``, see :mod:`rlkit.learners.policy_gradient.recurrent_models`), carried from
step to step and zeroed where an episode starts, as sb3-contrib does (the state is multiplied
by ``1 - episode_start`` before the step). Episode starts are known from the run: every
sub-env at the start of a run that resets its env, a single env's PreEpisode, and for a vector
env each sub-env whose episode ended at the previous step (``env.done``, the sub-env was
reset by the vector env). With each action the rollout stores ``episode_start`` and
``lstm_state``, the state the step started from (before the reset), so a learner replays
sequences from the state stored at their first step, and the state after a step is the one
stored at the next step.

The act state is saved with the policy (``state_dict``): a run killed and resumed continues
with the same hidden states, bit for bit. ``rk.greedy(policy)`` acts with the mode and a
hidden state of its own (evaluating never changes the training policy's state).
``policy.predict(obs, state, episode_start)`` returns ``(actions, next_state)`` with the state
carried by the caller, as sb3-contrib's ``predict`` (:class:`RecurrentActing`); ``rk.save`` and
``rk.load`` keep the policy (rlkit/deploy/recurrent.py).

Built with ``rk.build_policy(..., base=RecurrentPolicy)`` and a ``model_fn`` whose model has
``initial_state(n)``, ``step(obs, state, episode_start)``, ``sequences(...)`` and
``values_after(obs, state)`` (``recurrent_actor_critic_model``); ``rk.RecurrentPPO`` is one.

Example:
    >>> import rlkit as rk
    >>> env = rk.VectorGymEnv("rlkit/CartPoleNoVel-v1", 2, seed=0)
    >>> agent = rk.RecurrentPPO.agent(env, seed=0, n_steps=8, batch_size=16,
    ...                               lstm_hidden_size=16)
    >>> hook = rk.run(agent, env, rk.StopAfterNSteps(8))
    >>> tuple(agent.policy.act_state.hidden.shape)
    (2, 4, 1, 16)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...core.dispatch import PlanStep, greedy, where
from ...core.interfaces import AbstractPolicy
from ...core.stages import PRE_EPISODE_STAGE, PRE_EXPERIMENT_STAGE, AbstractStage
from ...core.state import require_keys
from ...policies.normalized import normalized_batch, normalized_state
from ...policies.observations import one_row
from ...policies.predict import (
    mask_batch,
    observation_batch,
    predicted_draw,
    single_or_batch,
)
from ...policies.spaces import check_env_fits
from ...policies.stochastic import is_vector_env
from ...trajectories.structured import leading_length
from ..built import BuiltPolicy

__all__ = ["RecurrentPolicy", "RecurrentActing", "ActState", "RecurrentGreedyPolicy"]


class ActState:
    """The hidden state of ``n`` environments and whether each starts an episode next.

    Example:
        >>> state = ActState()
        >>> state.starts(None, 3).tolist()  # nothing carried yet: every env starts
        [True, True, True]
    """

    def __init__(self) -> None:
        self.hidden: torch.Tensor | None = None
        self.pending = True  # the next step of every env starts an episode

    def starts(self, env: Any, n: int) -> np.ndarray:
        """Which of the ``n`` environments start an episode at this step."""
        if self.pending or self.hidden is None or self.hidden.shape[0] != n:
            return np.ones(n, dtype=bool)
        if is_vector_env(env):
            return np.array(env.done, dtype=bool).reshape(n)
        return np.zeros(n, dtype=bool)

    def current(self, model: Any, n: int, device: Any) -> torch.Tensor:
        """The carried state (zeros when none is carried for ``n`` environments)."""
        if self.hidden is None or self.hidden.shape[0] != n:
            return model.initial_state(n, device)
        return self.hidden

    def advance(self, hidden: torch.Tensor) -> None:
        self.hidden = hidden
        self.pending = False

    def start_all(self) -> None:
        """The next step of every environment starts an episode."""
        self.pending = True

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        """The plan steps that mark episode starts: PreExperiment (when the run resets the
        env) and PreEpisode (a single env's reset)."""

        def at_run_start() -> None:
            if getattr(env, "needs_reset", False):
                self.start_all()

        plan = {
            PRE_EXPERIMENT_STAGE: [
                PlanStep(at_run_start, "  recurrent state: zeroed if the env is reset",
                         where(ActState.plan)),
            ],
        }  # fmt: skip
        if not is_vector_env(env):  # a vector env's sub-envs restart as they finish (done)
            plan[PRE_EPISODE_STAGE] = [
                PlanStep(self.start_all, "  recurrent state: zeroed at the episode's start",
                         where(ActState.start_all)),
            ]  # fmt: skip
        return plan

    def state_dict(self) -> dict[str, Any]:
        hidden = torch.zeros(0) if self.hidden is None else self.hidden.detach().cpu().clone()
        return {"hidden": hidden, "pending": self.pending}

    def load_state_dict(self, state: dict[str, Any], device: Any) -> None:
        require_keys("ActState", state, "hidden", "pending")
        hidden = torch.as_tensor(state["hidden"])
        self.hidden = None if hidden.numel() == 0 else hidden.clone().to(device)
        self.pending = bool(state["pending"])


class RecurrentActing:
    """Acting and ``predict`` of a policy whose model carries a hidden state (the
    ``RecurrentActorCritic`` API: ``initial_state``, ``step``), shared by the trained
    :class:`RecurrentPolicy` and the one ``rk.load`` returns
    (:class:`~rlkit.deploy.recurrent.LoadedRecurrentPolicy`). The class it is mixed into
    provides ``model``, ``dist_class``, ``action_space``, ``state_space``, ``device``,
    ``observation_tensor``, ``choose``, ``env_action(s)`` and ``act_state`` (an
    :class:`ActState`).

    Example:
        >>> import rlkit as rk
        >>> policy = rk.RecurrentPPO(rk.GymEnv("rlkit/CartPoleNoVel-v1"), lstm_hidden_size=8)
        >>> isinstance(policy, RecurrentActing), policy.initial_state(3).shape
        (True, (3, 4, 1, 8))
    """

    act_state: ActState

    def act(self, env: Any) -> Any:
        vector = is_vector_env(env)
        state = normalized_state(self, env, env.state)  # raw obs: rlkit/policies/normalized.py
        obs = self.observation_tensor(state if vector else one_row(state, self.state_space))
        mask = env.legal_action_mask
        if mask is not None and not vector:
            mask = np.asarray(mask)[None]
        n = leading_length(obs)
        starts = self.act_state.starts(env, n)
        with torch.no_grad():
            hidden = self.act_state.current(self.model, n, self.device)
            inputs, values, after = self.model.step(
                obs, hidden, torch.as_tensor(starts, device=self.device)
            )
            dist = self.dist_class.from_inputs(inputs, self.action_space, mask)
            actions = self.choose(dist)
            log_prob = dist.log_prob(actions)
        self.last_action = actions.cpu().numpy()
        self.last_extras = {
            "value": values.cpu().numpy(),
            "log_prob": log_prob.cpu().numpy(),
            "episode_start": starts,
            "lstm_state": hidden.cpu().numpy(),
        }
        if mask is not None:
            self.last_extras["legal_action_mask"] = np.asarray(mask, dtype=bool)
        self.act_state.advance(after)
        return self.env_action(self.last_action, vector)

    def initial_state(self, n: int | None = None) -> np.ndarray:
        """The zero hidden state ``predict`` starts from: ``(n_states, layers, hidden)`` for
        one observation (``n`` None), ``(n, n_states, layers, hidden)`` for a batch of ``n``."""
        model = self.model
        shape = (model.n_states, model.n_layers, model.hidden_size)
        return np.zeros(shape if n is None else (n, *shape), dtype=np.float32)

    def predict(
        self,
        obs: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = True,
        action_masks: Any = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(actions, next_state)`` for one observation or a batch, from ``state``: sb3-contrib's
        ``predict(observation, state, episode_start, deterministic)``, with the state carried
        by the caller (the policy's own ``act_state`` is not read or changed).

        ``state``: the hidden state the step starts from, a float32 array of shape
        ``(n_states, layers, hidden)`` for one observation or ``(n, n_states, layers,
        hidden)`` for a batch of ``n`` (``initial_state``; the ``next_state`` of the previous
        call); None: zeros. ``episode_start``: a bool (one observation) or ``(n,)`` bools,
        True where an episode starts (the state is zeroed there first, as when acting); None:
        no episode starts. ``deterministic`` (default True, as rlkit's other ``predict``;
        sb3-contrib's default is False): the distribution's mode, else a sample drawn with a
        generator of ``predict``'s own (seeded 0). Unlike sb3-contrib, whose state is a pair
        ``(h, c)`` of ``(layers, n, hidden)`` arrays, rlkit's is one array holding ``h`` and
        ``c`` of the actor's LSTM, then of the critic's when it has one, as the rollout
        stores it (``lstm_state``).

        Example:
            >>> import numpy as np, rlkit as rk
            >>> policy = rk.RecurrentPPO(rk.GymEnv("rlkit/CartPoleNoVel-v1"), lstm_hidden_size=8)
            >>> action, state = policy.predict(np.zeros(2, np.float32), episode_start=True)
            >>> action.shape, state.shape
            ((), (4, 1, 8))
            >>> actions, states = policy.predict(np.zeros((3, 2)), np.stack([state] * 3))
            >>> actions.shape, states.shape
            ((3,), (3, 4, 1, 8))
        """
        name = policy_name(self)
        owner = f"{name}.predict"
        batch, single = observation_batch(name, obs, self.state_space)  # they add ".predict"
        n = len(batch)
        hidden = self._predict_state(owner, state, n, single)
        starts = _episode_starts(owner, episode_start, n, single)
        masks = mask_batch(name, action_masks, n, getattr(self.action_space, "n", None))
        with torch.no_grad():
            inputs, _, after = self.model.step(
                self.observation_tensor(normalized_batch(self, batch)), hidden.to(self.device),
                torch.as_tensor(starts, device=self.device),
            )  # fmt: skip
            dist = self.dist_class.from_inputs(inputs, self.action_space, masks)
            actions = predicted_draw(self, dist, deterministic)
        next_state = after.cpu().numpy()
        actions = single_or_batch(self.env_actions(actions.cpu().numpy()), single)
        return actions, next_state[0] if single else next_state

    def _predict_state(self, owner: str, state: Any, n: int, single: bool) -> torch.Tensor:
        expected = self.initial_state(None if single else n).shape
        if state is None:
            return torch.zeros((n, *expected[-3:]))
        array = np.asarray(state)
        if array.shape != expected or array.dtype.kind != "f":
            raise ValueError(
                f"{owner}: state must be a float array of shape {expected} (h and c of "
                f"{self.model.n_states // 2} LSTM(s): n_states {self.model.n_states}, "
                f"layers {self.model.n_layers}, hidden {self.model.hidden_size}) for "
                f"{'one observation' if single else f'{n} observations'}, got "
                f"{array.dtype} of shape {array.shape}; start from None or "
                f"policy.initial_state() and pass the state predict returned"
            )
        if not np.isfinite(array).all():
            raise ValueError(f"{owner}: state holds nan or inf")
        return torch.as_tensor(array, dtype=torch.float32).reshape(n, *expected[-3:])


def policy_name(policy: Any) -> str:
    """The algorithm's name: a loaded policy's ``algorithm``, a built one's class ``name``."""
    name = getattr(policy, "algorithm", None) or getattr(type(policy), "name", None)
    return name if isinstance(name, str) else type(policy).__name__


def _episode_starts(owner: str, episode_start: Any, n: int, single: bool) -> np.ndarray:
    """``episode_start`` as ``(n,)`` bools (None: no episode starts)."""
    if episode_start is None:
        return np.zeros(n, dtype=bool)
    array = np.asarray(episode_start)
    shapes = [(), (1,)] if single else [(n,)]
    binary = array.dtype == np.bool_ or (
        array.dtype.kind in "iuf" and np.isin(array, (0, 1)).all()
    )
    if array.shape not in shapes or not binary:
        raise ValueError(
            f"{owner}: episode_start must be {'a bool' if single else f'{n} bools (shape ({n},))'}"
            f" (True where an episode starts), got {array.dtype} of shape {array.shape}: "
            f"{episode_start!r:.80}"
        )
    return array.astype(bool).reshape(n)


class RecurrentPolicy(RecurrentActing, BuiltPolicy):
    """The base of recurrent built policies (see the module docstring); ``act_state`` is an
    :class:`ActState`.

    Example:
        >>> import rlkit as rk
        >>> policy = rk.RecurrentPPO(rk.GymEnv("rlkit/CartPoleNoVel-v1"), lstm_hidden_size=8)
        >>> isinstance(policy, RecurrentPolicy), policy.act_state.hidden is None
        (True, True)
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.act_state = ActState()

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        plan = super().plan(env)
        for stage, steps in self.act_state.plan(env).items():
            plan[stage] = [*plan.get(stage, []), *steps]
        return plan

    # ---- checkpoints: the act state with the rest ----
    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "act_state": self.act_state.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        require_keys(type(self).name, state, "act_state")
        super().load_state_dict(state)
        self.act_state.load_state_dict(state["act_state"], self.device)


class RecurrentGreedyPolicy(AbstractPolicy):
    """``rk.greedy`` of a :class:`RecurrentPolicy`: the distribution's mode, with a hidden
    state of its own (the training policy's is left as it is).

    Example:
        >>> import rlkit as rk
        >>> policy = rk.RecurrentPPO(rk.GymEnv("rlkit/CartPoleNoVel-v1"), lstm_hidden_size=8)
        >>> env = rk.GymEnv("rlkit/CartPoleNoVel-v1", seed=0); env.reset()
        >>> rk.greedy(policy)(env) in (0, 1), policy.act_state.hidden is None
        (True, True)
    """

    def __init__(self, policy: RecurrentPolicy) -> None:
        self.policy = policy
        self.act_state = ActState()

    def __repr__(self) -> str:
        return f"RecurrentGreedyPolicy({self.policy!r})"

    def plan(self, env: Any) -> dict[AbstractStage, list[PlanStep]]:
        policy = self.policy
        check_env_fits(f"rk.greedy({policy_name(policy)})", policy.state_space,
                       policy.action_space, env)  # fmt: skip
        return self.act_state.plan(env)

    def act(self, env: Any) -> Any:
        policy = self.policy
        vector = is_vector_env(env)
        space = policy.state_space
        state = normalized_state(policy, env, env.state)  # raw obs: rlkit/policies/normalized.py
        obs = policy.observation_tensor(state if vector else one_row(state, space))
        mask = env.legal_action_mask
        if mask is not None and not vector:
            mask = np.asarray(mask)[None]
        n = leading_length(obs)
        starts = self.act_state.starts(env, n)
        with torch.no_grad():
            hidden = self.act_state.current(policy.model, n, policy.device)
            inputs, _, after = policy.model.step(
                obs, hidden, torch.as_tensor(starts, device=policy.device)
            )
            actions = policy.dist_class.from_inputs(inputs, policy.action_space, mask).mode()
        self.act_state.advance(after)
        return policy.env_action(actions.cpu().numpy(), vector)


# ---- greedy: the mode, with a hidden state of its own ----
@greedy.dispatch
def _(policy: RecurrentPolicy, seed: object = None, /):
    return RecurrentGreedyPolicy(policy)
