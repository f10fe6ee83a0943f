"""``PettingZooVectorEnv``: copies of a PettingZoo parallel environment as one vector env whose
rows are every agent of every copy (SuperSuit's ``pettingzoo_env_to_vec_env_v1`` and
``concat_vec_envs_v1``), so that one policy with shared parameters (PPO, DQN) trains on all
agents of several copies through the vector loop (docs/how-to/multi-agent.md)."""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable
from typing import Any

import numpy as np

from ..core.checks import positive_int
from ..core.interfaces import AbstractVectorEnv, InvalidActionError
from .agent_view import agent_id_space, observation_part, with_agent_id
from .pettingzoo_common import checked_seed, inner_space
from .space_seeds import seed_space_pair

__all__ = ["PettingZooVectorEnv"]


class PettingZooVectorEnv(AbstractVectorEnv):
    """``n_copies`` copies of the parallel env ``env_fn()``, one row per agent per copy: row
    ``c * n_agents + k`` is agent ``k`` (in ``possible_agents`` order) of copy ``c``.

    As SuperSuit, every agent must stay for the whole episode (all agents' episodes end at the
    same step; an env whose agents leave early is refused, naming the agent: wrap it with
    SuperSuit's ``black_death_v3`` first) and all agents must share their spaces. A copy whose
    episode ended is reset at once (``final_state`` holds its real final observations). The
    copies' seeds are ``seed + c``. ``agent_id=True`` appends each agent's one-hot id to its
    flat observation. ``backend="subprocess"`` steps each copy in its own process (``env_fn``
    must then be picklable by cloudpickle, as PettingZoo's ``parallel_env`` makers are).

    Example:
        >>> import rlkit as rk
        >>> from mpe2 import simple_spread_v3
        >>> env = rk.PettingZooVectorEnv(simple_spread_v3.parallel_env, 2, seed=0)
        >>> env.n_envs, env.state_space.shape
        (6, (18,))
        >>> hook = rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(150),
        ...               rk.TotalRewardPerEpisode())
        >>> len(hook.rewards)  # every agent's episode of every copy (25 steps each)
        6
    """

    def __init__(
        self,
        env_fn: Callable[[], Any],
        n_copies: int,
        *,
        backend: str = "sync",
        seed: int | None = None,
        agent_id: bool = False,
    ) -> None:
        name = "PettingZooVectorEnv"
        if not callable(env_fn):
            raise TypeError(
                f"{name}: env_fn must be a function that makes the parallel env, got "
                f"{type(env_fn).__name__}: {env_fn!r:.80}"
            )
        if backend not in ("sync", "subprocess"):
            raise ValueError(f"{name}: backend must be 'sync' or 'subprocess', got {backend!r}")
        if not isinstance(agent_id, bool):
            raise TypeError(f"{name}: agent_id must be True or False, got {agent_id!r}")
        self.n_copies = positive_int(name, "n_copies", n_copies)
        self.backend = backend
        self.agent_id = agent_id
        self._seed = checked_seed(name, seed)
        probe = env_fn()
        self.agents = tuple(probe.possible_agents)
        self._check_spaces(probe)
        seed_space_pair(self.action_space, self.state_space, self._seed)  # space_seeds.py
        self.n_envs = self.n_copies * len(self.agents)
        self._copies = (
            [_Local(env_fn) for _ in range(self.n_copies)]
            if backend == "sync"
            else [_Remote(env_fn) for _ in range(self.n_copies)]
        )
        self._mask: np.ndarray | None = None
        self._resets = 0

    def __repr__(self) -> str:
        return f"PettingZooVectorEnv({self.n_copies} copies x {len(self.agents)} agents)"

    def _check_spaces(self, probe: Any) -> None:
        first = self.agents[0]
        for agent in self.agents[1:]:
            if probe.action_space(agent) != probe.action_space(first):
                raise ValueError(
                    f"PettingZooVectorEnv: agent {agent!r}'s action space "
                    f"{probe.action_space(agent)} differs from {first!r}'s "
                    f"{probe.action_space(first)}; the agents of a vector env share one space"
                )
        space = inner_space(probe.observation_space(first))
        self.state_space = agent_id_space(space, len(self.agents)) if self.agent_id else space
        self.action_space = probe.action_space(first)

    # ---- the contract ----
    @property
    def legal_action_mask(self) -> np.ndarray | None:
        return self._mask

    def reset(self, seed: Any = None) -> None:
        seed = checked_seed("PettingZooVectorEnv.reset", seed)
        if seed is None:
            seed, self._seed = self._seed, None
        for c, copy in enumerate(self._copies):
            copy.send(("reset", None if seed is None else seed + c))
        rows = [self._rows(c, copy.receive()[0]) for c, copy in enumerate(self._copies)]
        self.state = np.stack([s for states, _ in rows for s in states])
        self._set_mask([m for _, masks in rows for m in masks])
        self.final_state = self.state.copy()
        n = self.n_envs
        self.reward = np.zeros(n)
        self.is_terminated = np.zeros(n, dtype=bool)
        self.is_truncated = np.zeros(n, dtype=bool)
        self.needs_reset = False

    def act(self, actions: Any) -> None:
        actions = np.asarray(actions)
        if actions.shape[:1] != (self.n_envs,):
            raise ValueError(
                f"{self!r}.act: expected {self.n_envs} actions (one per agent per copy), got "
                f"shape {actions.shape}"
            )
        self._check_legal(actions)
        k = len(self.agents)
        for c, copy in enumerate(self._copies):
            chunk = actions[c * k : (c + 1) * k]
            by_agent = {agent: _item(a) for agent, a in zip(self.agents, chunk, strict=True)}
            copy.send(("step", by_agent))
        states, finals, masks = [], [], []
        rewards, terminated, truncated = [], [], []
        for c, copy in enumerate(self._copies):
            observations, r, te, tr, reset_observations = copy.receive()
            final_rows, _ = self._rows(c, observations)
            finals.extend(final_rows)
            rewards.extend(float(r[a]) for a in self.agents)
            terminated.extend(bool(te[a]) for a in self.agents)
            truncated.extend(bool(tr[a]) for a in self.agents)
            now, now_masks = self._rows(c, reset_observations or observations)
            states.extend(now)
            masks.extend(now_masks)
        self.final_state = np.stack(finals)
        self.state = np.stack(states)
        self._set_mask(masks)
        self.reward = np.asarray(rewards)
        self.is_terminated = np.asarray(terminated)
        self.is_truncated = np.asarray(truncated)

    def close(self) -> None:
        for copy in self._copies:
            copy.close()

    # ---- rows ----
    def _rows(self, c: int, observations: dict) -> tuple[list, list]:
        unknown = [a for a in observations if a not in self.agents]
        missing = [a for a in self.agents if a not in observations]
        if unknown or missing:
            raise ValueError(
                f"{self!r}: copy {c} returned observations for agents {list(observations)}; "
                f"expected every agent {list(self.agents)} (unknown {unknown}, missing "
                f"{missing}: agents that leave before the others need SuperSuit's "
                f"black_death_v3)"
            )
        states, masks = [], []
        for k, agent in enumerate(self.agents):
            state, mask = observation_part(observations[agent])
            if self.agent_id:
                state = with_agent_id(state, k, len(self.agents))
            states.append(np.asarray(state))
            masks.append(mask)
        return states, masks

    def _set_mask(self, masks: list) -> None:
        self._mask = None if any(m is None for m in masks) else np.stack(masks)

    def _check_legal(self, actions: np.ndarray) -> None:
        if self._mask is None:
            return
        rows = np.arange(self.n_envs)
        illegal = ~self._mask[rows, actions.astype(int)]
        if illegal.any():
            row = int(np.flatnonzero(illegal)[0])
            c, k = divmod(row, len(self.agents))
            raise InvalidActionError(
                f"{self!r}: action {actions[row]!r} is not legal for {self.agents[k]!r} of "
                f"copy {c} (row {row}) now"
            )


def _item(action: Any) -> Any:
    return action.item() if isinstance(action, np.ndarray) and action.shape == () else action


# ---- one copy, stepped here or in a worker process ----


def _step(env: Any, message: tuple) -> tuple:
    """Do what ``message`` says to the raw parallel env; after an episode's last step, reset
    it and return the reset observations too."""
    kind, payload = message
    if kind == "reset":
        observations, _ = env.reset(seed=payload)
        return (observations,)
    observations, rewards, terminations, truncations, _ = env.step(payload)
    ended = [a for a in rewards if terminations.get(a) or truncations.get(a)]
    reset_observations = None
    if ended:
        if len(ended) != len(rewards) or env.agents:
            raise ValueError(
                f"PettingZooVectorEnv: agents {ended} ended their episode before the others "
                f"({list(env.agents)} go on); wrap the env with SuperSuit's black_death_v3"
            )
        reset_observations, _ = env.reset()
    return observations, rewards, terminations, truncations, reset_observations


class _Local:
    def __init__(self, env_fn: Callable[[], Any]) -> None:
        self.env = env_fn()
        self._reply: tuple = ()

    def send(self, message: tuple) -> None:
        self._reply = _step(self.env, message)

    def receive(self) -> tuple:
        return self._reply

    def close(self) -> None:
        self.env.close()


def _worker(env_fn_bytes: bytes, pipe: Any) -> None:
    import cloudpickle  # gymnasium's dependency: it pickles closures (PettingZoo's env makers)

    env = cloudpickle.loads(env_fn_bytes)()
    while True:
        message = pipe.recv()
        if message[0] == "close":
            env.close()
            pipe.close()
            return
        try:
            pipe.send(("ok", _step(env, message)))
        except Exception as error:  # noqa: BLE001 - sent to the parent, which raises it
            pipe.send(("error", error))


class _Remote:
    def __init__(self, env_fn: Callable[[], Any]) -> None:
        import cloudpickle

        context = mp.get_context("spawn")
        self.pipe, child = context.Pipe()
        maker = cloudpickle.dumps(env_fn)
        self.process = context.Process(target=_worker, args=(maker, child), daemon=True)
        self.process.start()
        child.close()

    def send(self, message: tuple) -> None:
        self.pipe.send(message)

    def receive(self) -> tuple:
        status, reply = self.pipe.recv()
        if status == "error":
            raise reply
        return reply

    def close(self) -> None:
        if self.process.is_alive():
            self.pipe.send(("close", None))
            self.process.join(timeout=5)
