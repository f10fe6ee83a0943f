"""``VectorGymEnv``: ``n_envs`` gymnasium environments stepped together, in this process
(``"sync"``), in worker processes (``"subprocess"``) or in Ray actors (``"ray"``).

Whatever the backend and gymnasium's autoreset mode, the contract of
:class:`~rlkit.AbstractVectorEnv` (docs/how-to/vector-envs.md) holds: after ``act(actions)``,
``state`` is what the policy acts on next (reset observations for the sub-envs that just
finished), ``final_state`` the next observation of the transition just made (the real final
observation where an episode ended), and no transition crosses a reset.
"""

from __future__ import annotations

import copy
import os
import signal
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.checks import non_negative_int, positive_int
from ..core.interfaces import AbstractVectorEnv
from ..core.state import require_keys
from .masks import checked_mask, mask_size
from .ray_backend import RayGroups
from .vector_group import _MODES, SubEnvError, _Factory, _Group

__all__ = ["VectorGymEnv", "SubEnvError", "sub_env_seeds", "BACKENDS", "MAX_N_ENVS"]

BACKENDS = ("sync", "subprocess", "ray")

#: The most sub-envs a ``VectorGymEnv`` takes: each is a whole gymnasium environment (one worker
#: process each on the subprocess backend), so far fewer fit in one machine's memory.
MAX_N_ENVS = 100_000


def sub_env_seeds(seed: int | np.random.SeedSequence | None, n_envs: int) -> list[int | None]:
    """The seeds of the sub-envs of ``VectorGymEnv(..., n_envs, seed=seed)``.

    The rule: ``np.random.SeedSequence(seed).spawn(n_envs)[i].generate_state(1)[0]`` (a 32-bit
    integer) seeds sub-env ``i``'s first reset, exactly as ``GymEnv(id, seed=seeds[i])`` would;
    later episodes continue each sub-env's own generator. ``seed=None``: every sub-env unseeded.

    Example:
        >>> sub_env_seeds(0, 2) == sub_env_seeds(0, 3)[:2]
        True
    """
    n_envs = positive_int("sub_env_seeds", "n_envs", n_envs)
    if seed is None:
        return [None] * n_envs
    if not isinstance(seed, np.random.SeedSequence):
        seed = np.random.SeedSequence(non_negative_int("VectorGymEnv", "seed", seed))
    sequence = seed
    return [int(child.generate_state(1)[0]) for child in sequence.spawn(n_envs)]


# ---- the public class ----


class VectorGymEnv(AbstractVectorEnv):
    """``n_envs`` gymnasium environments stepped together, as an :class:`rk.AbstractVectorEnv`.

    Backends: ``"sync"`` (``gymnasium.vector.SyncVectorEnv``, in this process),
    ``"subprocess"`` (``gymnasium.vector.AsyncVectorEnv``, one worker process per sub-env) and
    ``"ray"`` (Ray actors, each stepping a group of sub-envs; ``pip install ray``; see
    :mod:`rlkit.envs.ray_backend`). ``autoreset_mode`` (a ``gymnasium.vector.AutoresetMode`` or
    its value; default ``SAME_STEP``) is gymnasium's; rlkit's contract is the same for each:

    * ``state`` (shape ``(n_envs, *obs_shape)``): what the policy acts on next, the reset
      observation for sub-envs whose episode ended at the last step;
    * ``final_state``: the next observation of the transition just made, the real final one
      where an episode ended, else equal to ``state``;
    * ``reward`` (float64), ``is_terminated``, ``is_truncated`` (bool), shape ``(n_envs,)``;
      ``done`` their OR; termination and truncation stay apart per sub-env;
    * ``action_space``, ``state_space``: ONE sub-env's spaces;
    * ``legal_action_mask``: ``(n_envs, n)`` from the sub-envs' ``action_masks()`` method
      (sb3-contrib's convention) when they have one, else from their ``info["action_mask"]``, or
      None; ``final_legal_action_mask`` the masks of the states the last step led to (the real
      final states' where an episode ended). A mask of the wrong length, or one marking no
      action legal in a state that is not terminal, is refused naming the sub-env and the step.

    Seeding: sub-env ``i`` is reset first with ``seeds[i]`` (:func:`sub_env_seeds`: children of
    ``numpy.random.SeedSequence(seed)``), later episodes continue its own generator, so
    ``VectorGymEnv(id, n, seed=s)`` makes exactly the transitions of the ``n`` single
    ``rk.GymEnv(id, seed=env.seeds[i])``, on every backend. ``reset(seed)`` reseeds the same way.
    Each sub-env's action and observation spaces are seeded from ``seeds[i]`` when it is built,
    as ``GymEnv`` seeds its own (rlkit/envs/space_seeds.py), so their ``sample()`` (and
    ``env.action_space.sample()``, a copy of sub-env 0's) gives the same numbers for the same
    seed on every backend.

    Checkpoints (``state_dict``): the adapter's arrays and, for every sub-env, what
    ``GymEnv.state_dict`` saves of a single env (the plain attributes of each wrapper layer and
    the generators, and MuJoCo's physics: rlkit/envs/mujoco_state.py), read from the workers on
    the subprocess and Ray backends; restoring into a vector env built the same way continues
    bit for bit on the sync and subprocess backends and on Ray as well for such environments.
    Not restored: other physics engines (Box2D), emulators, renderers and other non-plain
    state (as for ``GymEnv``); on Ray the actor layout (``n_actors``) must match.

    Args:
        id_or_fns: a registered gymnasium id, or a list of ``n_envs`` functions returning
            gymnasium environments (``n_envs`` may then be None).
        n_envs: the number of sub-environments (>= 1).
        backend: ``"sync"``, ``"subprocess"`` or ``"ray"``.
        seed: int or ``SeedSequence`` seeding the sub-envs (None: unseeded).
        autoreset_mode: gymnasium's autoreset mode of the underlying vector env(s).
        context: multiprocessing start method of the subprocess backend (gymnasium's default).
        n_actors: Ray actors (default: ``min(n_envs, cluster CPUs)``).
        num_cpus: CPUs given to ``ray.init`` when Ray is not initialised yet (default 2).
        use_masking: read legal-action masks (False: the sub-envs are taken as unmasked, as
            ``GymEnv``'s ``use_masking=False``).
        **env_kwargs: passed to ``gymnasium.make`` with an id.

    Example:
        >>> import rlkit as rk
        >>> env = rk.VectorGymEnv("CartPole-v1", 4, seed=0)
        >>> hook = rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNEpisodes(6),
        ...               rk.TotalRewardPerEpisode())
        >>> len(hook.rewards) >= 6, env.seeds == rk.envs.vector.sub_env_seeds(0, 4)
        (True, True)
        >>> env.close()
    """

    done: Any = None  # a plain attribute here (kept current in reset/act): cheaper than a property

    def __init__(
        self,
        id_or_fns: str | Sequence[Callable[[], gym.Env]],
        n_envs: int | None = None,
        *,
        backend: str = "sync",
        seed: int | np.random.SeedSequence | None = None,
        autoreset_mode: Any = gym.vector.AutoresetMode.SAME_STEP,
        context: str | None = None,
        n_actors: int | None = None,
        num_cpus: int | None = None,
        use_masking: bool = True,
        **env_kwargs: Any,
    ) -> None:
        makes = _makes("VectorGymEnv", id_or_fns, n_envs, env_kwargs)
        self.n_envs = len(makes)
        if backend not in BACKENDS:
            raise ValueError(
                f"VectorGymEnv: backend must be one of {BACKENDS}, got {backend!r}"
            )
        self.backend = backend
        self.autoreset_mode = _mode(autoreset_mode)
        self.id = id_or_fns if isinstance(id_or_fns, str) else None
        self.env_kwargs = dict(env_kwargs)
        self.seeds = sub_env_seeds(seed, self.n_envs)
        self._pending_seeds: list[int | None] | None = self.seeds
        self.use_masking = bool(use_masking)
        factories = [
            _Factory(make, self.env_kwargs, i, s, self.use_masking)
            for i, (make, s) in enumerate(zip(makes, self.seeds, strict=True))
        ]
        self._factories = factories  # to check a saved state in this process (check_state_dict)
        if backend == "ray":
            self._group: Any = RayGroups(factories, self.autoreset_mode, n_actors, num_cpus)
        else:
            if n_actors is not None or num_cpus is not None:
                raise TypeError(
                    f"VectorGymEnv: n_actors and num_cpus are options of the 'ray' backend, not "
                    f"of {backend!r}"
                )
            self._group = _Group(factories, backend, self.autoreset_mode, context)
        self.action_space, self.state_space = self._group.spaces()
        self._group_step = self._group.step
        self._mask: np.ndarray | None = None
        self.final_legal_action_mask: np.ndarray | None = None
        self._mask_size = mask_size(self.action_space)
        self.steps = 0  # act() calls since the last reset (named by mask errors)
        self.reward = np.zeros(self.n_envs)
        self.is_terminated = np.zeros(self.n_envs, bool)
        self.is_truncated = np.zeros(self.n_envs, bool)
        self.done = np.zeros(self.n_envs, bool)
        self._actions_shape = (self.n_envs, *(getattr(self.action_space, "shape", None) or ()))
        self._closed = False

    @property
    def name(self) -> str:
        """The gymnasium id of the sub-envs (``"fns"`` when built from functions)."""
        return self.id if self.id is not None else "fns"

    def __repr__(self) -> str:
        what = self.name
        return f"VectorGymEnv({what!r}, {self.n_envs}, backend={self.backend!r})"

    @property
    def legal_action_mask(self) -> np.ndarray | None:
        return self._mask

    def reset(self, seed: int | np.random.SeedSequence | None = None) -> None:
        """Reset every sub-env. ``seed`` reseeds them by the rule of :func:`sub_env_seeds`;
        without it the first reset uses the constructor's seeds and later ones continue each
        sub-env's generator."""
        if seed is not None:
            seeds = sub_env_seeds(seed, self.n_envs)
        else:
            seeds = self._pending_seeds or [None] * self.n_envs
        self._pending_seeds = None
        state, mask = self._call("reset", seeds)
        mask = mask if self.use_masking else None
        self.state = self.final_state = state
        self.steps = 0
        self._mask = self.final_legal_action_mask = self._checked_masks(mask, None, "at reset")
        self.reward = np.zeros(self.n_envs)
        self.is_terminated = np.zeros(self.n_envs, bool)
        self.is_truncated = np.zeros(self.n_envs, bool)
        self.done = np.zeros(self.n_envs, bool)
        self.needs_reset = False

    def act(self, actions: Any) -> None:
        """One action per sub-env: an array (or sequence) of shape ``(n_envs, *action_shape)``."""
        if type(actions) is not np.ndarray:
            actions = np.asarray(actions)
        if actions.shape != self._actions_shape:
            raise ValueError(
                f"{self!r}: actions must have shape {self._actions_shape} (one action of "
                f"{self.action_space} per sub-env), got shape {actions.shape}"
            )
        if self.needs_reset:
            raise RuntimeError(f"{self!r}: call reset() before act()")
        try:
            out = self._group_step(actions)
        except BaseException as error:
            self._failed(error)
            raise
        self._take(out)

    def _take(self, out: tuple) -> None:
        """The results of one step of every sub-env (``_Group.step``'s tuple, or
        ``rlkit.envs.cartpole_batch``'s) as this env's attributes."""
        (
            self.state,
            self.reward,
            self.is_terminated,
            self.is_truncated,
            self.final_state,
            mask,
            final_mask,
            self.done,
        ) = out
        self.steps += 1
        if mask is None or not self.use_masking:
            self._mask = self.final_legal_action_mask = None
        else:
            where = f"after step {self.steps}"
            self._mask = self._checked_masks(mask, None, where)
            self.final_legal_action_mask = self._checked_masks(
                final_mask, self.is_terminated, where + " (the states that step led to)"
            )

    def _checked_masks(self, masks: Any, terminal: Any, where: str) -> np.ndarray | None:
        """Each sub-env's mask checked (:func:`rlkit.envs.masks.checked_mask`): its length, and
        a legal action in every state that is not ``terminal``."""
        if masks is None:
            return None
        size = self._mask_size
        if size is not None and masks.shape == (self.n_envs, size):
            legal = masks.any(axis=1)
            if legal.all() or (terminal is not None and (legal | terminal).all()):
                return masks  # the common case, checked at once
        if masks.ndim != 2 or len(masks) != self.n_envs:
            raise ValueError(
                f"{self!r} {where}: the legal-action masks have shape {masks.shape}, expected "
                f"({self.n_envs}, {size}) (one mask per sub-env)"
            )
        for i, row in enumerate(masks):
            stop = bool(terminal[i]) if terminal is not None else False
            checked_mask(f"{self!r} sub-env {i} {where}", row, size, stop)
        return masks

    def _call(self, method: str, *args: Any) -> Any:
        """Call the backend; on any error close every worker, then raise (nothing hangs)."""
        try:
            return getattr(self._group, method)(*args)
        except BaseException as error:
            self._failed(error)
            raise

    def _failed(self, error: BaseException) -> None:
        """Shut every worker down; raise a SubEnvError naming the sub-env when a worker's error
        was one (re-raised by gymnasium or Ray in another type), or when a worker process died
        (killed: gymnasium only sees a broken pipe); else return (the caller re-raises
        ``error``)."""
        if isinstance(error, SubEnvError) or not isinstance(error, Exception):
            self._shut_down()
            return
        cause = _sub_env_cause(error)
        dead = [] if cause is not None else self._dead_workers(_broken_pipe(error))
        self._shut_down()
        if cause is not None:
            raise SubEnvError(f"{self!r}: {cause}") from error
        if dead:
            raise SubEnvError(f"{self!r}: {_dead_worker_message(dead, self.seeds)}") from error

    def _dead_workers(self, wait: bool) -> list[tuple[int, int, int | None]]:
        dead_workers = getattr(self._group, "dead_workers", None)
        try:
            return dead_workers(1.0 if wait else 0.0) if callable(dead_workers) else []
        except Exception:  # noqa: BLE001 - already failing: the first error matters
            return []

    def _shut_down(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                with warnings.catch_warnings():  # gymnasium: "close while waiting for step"
                    warnings.simplefilter("ignore")
                    self._group.close(terminate=True)
            except Exception:  # noqa: BLE001 - already failing: the first error matters
                pass

    def __deepcopy__(self, memo: dict) -> VectorGymEnv:
        """A copy of a sync vector env; one whose sub-envs live in worker processes or Ray
        actors cannot be copied (the copy would share, then close, the workers): TypeError."""
        if self.backend != "sync":
            raise TypeError(
                f"VectorGymEnv: a {self.backend!r} vector env owns its workers and cannot be "
                f"copied; build another one"
            )
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for name, value in vars(self).items():
            setattr(new, name, copy.deepcopy(value, memo))
        return new

    def close(self) -> None:
        """Close every sub-env and stop the workers (idempotent)."""
        if not self._closed:
            self._closed = True
            self._group.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The adapter's arrays and every sub-env's state (see the class docstring)."""
        return {
            "n_envs": self.n_envs,
            "backend": self.backend,
            "needs_reset": bool(self.needs_reset),
            "pending_seeds": self._pending_seeds,
            "state": _copy(self.state),
            "final_state": _copy(self.final_state),
            "reward": np.array(self.reward, dtype=np.float64),
            "is_terminated": np.array(self.is_terminated, dtype=bool),
            "is_truncated": np.array(self.is_truncated, dtype=bool),
            "mask": None if self._mask is None else self._mask.copy(),
            "final_mask": _copy(self.final_legal_action_mask),
            "steps": self.steps,
            "sub_envs": self._call("get_states"),
        }

    def check_state_dict(self, state: dict[str, Any]) -> None:
        """Raise ``ValueError`` (or ``TypeError``) if ``state`` does not fit this vector env;
        change nothing, here or in the workers.

        Each saved sub-env state is loaded into a sub-env built in this process the way the
        sub-env was (then closed): a worker that fails to load a state dies with it, so a state
        is sent to the workers only once it is known to fit.
        """
        require_keys(
            f"{self!r}", state, "n_envs", "needs_reset", "pending_seeds", "state",
            "final_state", "reward", "is_terminated", "is_truncated", "mask", "sub_envs",
        )
        if int(state["n_envs"]) != self.n_envs or len(state["sub_envs"]) != self.n_envs:
            raise ValueError(
                f"{self!r}.load_state_dict: the checkpoint has {state['n_envs']} sub-envs, this "
                f"env {self.n_envs}"
            )
        built: dict[Any, Any] = {}  # sub-envs made the same way share one local trial env
        try:
            for factory, saved in zip(self._factories, state["sub_envs"], strict=True):
                key = _factory_key(factory)
                if key not in built:
                    built[key] = _Factory(factory.make, factory.kwargs, factory.index,
                                          factory.seed, factory.use_masking)()
                try:
                    built[key].rlkit_state = saved
                except Exception as error:
                    raise ValueError(
                        f"{self!r}.load_state_dict: the saved state of sub-env {factory.index} "
                        f"does not fit it: {error}"
                    ) from error
        finally:
            for env in built.values():
                env.close()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved into a vector env built the same way.

        Everything is checked first (:meth:`check_state_dict`): a state that does not fit
        raises and leaves the env and its workers as they were."""
        self.check_state_dict(state)
        self._call("set_states", list(state["sub_envs"]))
        self.needs_reset = bool(state["needs_reset"])
        pending = state["pending_seeds"]
        self._pending_seeds = None if pending is None else [
            None if s is None else int(s) for s in pending
        ]
        self.state = _copy(state["state"])
        self.final_state = _copy(state["final_state"])
        self.reward = np.array(state["reward"], dtype=np.float64)
        self.is_terminated = np.array(state["is_terminated"], dtype=bool)
        self.is_truncated = np.array(state["is_truncated"], dtype=bool)
        self.done = self.is_terminated | self.is_truncated
        self._mask = None if state["mask"] is None else np.array(state["mask"], dtype=bool)
        final_mask = state.get("final_mask", state["mask"])  # absent before final masks
        self.final_legal_action_mask = (
            None if final_mask is None else np.array(final_mask, dtype=bool)
        )
        self.steps = int(state.get("steps", 0))


def _factory_key(factory: _Factory) -> Any:
    """Sub-envs made from the same id and keyword arguments are built alike (a list of
    functions: each its own)."""
    if isinstance(factory.make, str):
        return ("id", factory.make, repr(sorted(factory.kwargs.items())))
    return ("fn", factory.index)


def _copy(x: Any) -> Any:
    return copy.deepcopy(x)


def _makes(
    owner: str, id_or_fns: Any, n_envs: Any, env_kwargs: dict[str, Any]
) -> list[str | Callable[[], gym.Env]]:
    if isinstance(id_or_fns, str):
        n = positive_int(owner, "n_envs", n_envs)
        if n > MAX_N_ENVS:
            raise ValueError(
                f"{owner}: n_envs={n:,} sub-envs of {id_or_fns!r} would not fit in memory (each "
                f"is a whole gymnasium environment); expected at most {MAX_N_ENVS:,}, usually "
                f"about the number of CPU cores (os.cpu_count() = {os.cpu_count()})"
            )
        return [id_or_fns] * n
    if isinstance(id_or_fns, Sequence) and id_or_fns and all(callable(f) for f in id_or_fns):
        if env_kwargs:
            raise TypeError(
                f"{owner}: keyword arguments {sorted(env_kwargs)} are only accepted with an "
                f"environment id; got a list of functions"
            )
        if n_envs is not None and positive_int(owner, "n_envs", n_envs) != len(id_or_fns):
            raise ValueError(
                f"{owner}: n_envs={n_envs} but {len(id_or_fns)} environment functions were given"
            )
        return list(id_or_fns)
    raise TypeError(
        f"{owner}: expected a gymnasium id (str) or a non-empty list of functions returning "
        f"gymnasium environments, got {type(id_or_fns).__name__}: {id_or_fns!r}"
    )


def _mode(mode: Any) -> str:
    if isinstance(mode, gym.vector.AutoresetMode):
        return mode.value
    for value, member in _MODES.items():
        if mode in (value, member.name):
            return value
    raise ValueError(
        f"VectorGymEnv: autoreset_mode must be a gymnasium.vector.AutoresetMode (one of "
        f"{[m.name for m in _MODES.values()]}), got {mode!r}"
    )


def _broken_pipe(error: BaseException) -> bool:
    """What gymnasium raises when a worker process is gone: its pipe broke or hit its end."""
    return isinstance(error, (EOFError, OSError))


def _dead_worker_message(dead: list[tuple[int, int, int | None]], seeds: list) -> str:
    """What ``SubEnvError`` says of worker processes that died: sub-env, seed, pid, exit code,
    and what to do."""
    parts = [
        f"sub-env {i} (seed {seeds[i]}): its worker process (pid {pid}) died with exit code "
        f"{code}{_signal_name(code)}"
        for i, pid, code in dead
    ]
    return (
        f"{'; '.join(parts)}. The vector env is closed. Build a new VectorGymEnv and continue "
        f"from the last checkpoint (rk.run(..., resume_from=...)); a worker killed by SIGKILL "
        f"was often killed for memory by the operating system (see dmesg)"
    )


def _signal_name(code: int | None) -> str:
    if code is None or code >= 0:
        return ""
    try:
        return f" (killed by {signal.Signals(-code).name})"
    except ValueError:
        return f" (killed by signal {-code})"


def _sub_env_cause(error: BaseException) -> str | None:
    """The message of a sub-env error raised in a worker (re-raised by gymnasium or Ray)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, SubEnvError) or "sub-env " in str(current):
            text = str(current)
            start = text.find("sub-env ")
            return text[start:].strip() if start >= 0 else text
        current = current.__cause__ or getattr(current, "cause", None)
    return None
