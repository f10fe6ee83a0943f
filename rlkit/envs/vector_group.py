"""One group of sub-environments behind a gymnasium vector env, put in rlkit's contract.

``VectorGymEnv``'s sync and subprocess backends are one ``_Group``; the Ray backend
(``ray_backend.py``) runs one ``_Group`` (a ``SyncVectorEnv``) in each actor. Its sub-envs are
labelled, so that their errors name them (``SubEnvError``), and carry their state for checkpoints.
"""

from __future__ import annotations

import copy
import os
import signal
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.state import attribute_state, generator_state, load_attribute_state
from ..core.state import set_generator_state as _set_generator_state
from .gym import _SKIP, _layers
from .masks import find_action_masks
from .mujoco_state import check_layers_physics, has_physics, load_layer_physics, physics_state
from .space_seeds import seed_spaces

__all__ = ["SubEnvError"]

_MODES = {mode.value: mode for mode in gym.vector.AutoresetMode}


class SubEnvError(RuntimeError):
    """A sub-environment of a vector env raised; the message names it and its seed."""


# ---- the sub-environments: labelled so that errors name them; their state for checkpoints ----


class _Labelled(gym.Wrapper):
    """A sub-env that names itself (index and seed) in the errors it raises, and whose state
    (the attributes of its wrapper chain, as ``GymEnv.state_dict`` saves them) is the
    attribute ``rlkit_state`` (read and written through gymnasium's ``get_attr``/``set_attr``)."""

    def __init__(
        self, env: gym.Env, index: int, seed: int | None, fast: bool = False, masks: bool = True
    ) -> None:
        super().__init__(env)
        self.rlkit_label = f"sub-env {index} (seed {seed})"
        seed_spaces(env, seed)  # as GymEnv(env, seed=seed) does: rlkit/envs/space_seeds.py
        # sb3-contrib's action_masks(): put in info["action_mask"], which the group batches
        self.rlkit_masks = find_action_masks(env) if masks else None
        if fast and self.rlkit_masks is None:
            # in this process: no wrapper layer per step; _Group.step names the sub-env
            self.step = env.step

    def step(self, action: Any) -> Any:
        try:
            out = self.env.step(action)
            if self.rlkit_masks is not None:
                out[4]["action_mask"] = np.asarray(self.rlkit_masks())
            return out
        except Exception as error:
            raise SubEnvError(f"{self.rlkit_label} raised in step: {error!r}") from error

    def reset(self, **kwargs: Any) -> Any:
        try:
            obs, info = self.env.reset(**kwargs)
            if self.rlkit_masks is not None:
                info["action_mask"] = np.asarray(self.rlkit_masks())
            return obs, info
        except Exception as error:
            raise SubEnvError(f"{self.rlkit_label} raised in reset: {error!r}") from error

    @property
    def rlkit_state(self) -> dict[str, Any]:
        layers = _layers(self.env)
        return {
            "layers": [
                {
                    "type": type(layer).__qualname__,
                    "attributes": attribute_state(layer, exclude=_SKIP),
                    # MuJoCo's physics (rlkit/envs/mujoco_state.py)
                    **({"physics": physics_state(layer)} if has_physics(layer) else {}),
                }
                for layer in layers
            ],
            "spaces": [_space_rng(self.env.action_space), _space_rng(self.env.observation_space)],
        }

    @rlkit_state.setter
    def rlkit_state(self, state: dict[str, Any]) -> None:
        layers = _layers(self.env)
        saved = [layer["type"] for layer in state["layers"]]
        now = [type(layer).__qualname__ for layer in layers]
        if saved != now:
            raise ValueError(
                f"{self.rlkit_label}: the saved wrapper chain {saved} differs from {now}"
            )
        check_layers_physics(layers, state["layers"])  # refused before any change
        for layer, layer_state in zip(layers, state["layers"], strict=True):
            load_layer_physics(layer, layer_state)
            load_attribute_state(layer, layer_state["attributes"])
        for space, rng_state in zip(
            (self.env.action_space, self.env.observation_space), state["spaces"], strict=True
        ):
            if rng_state is not None:
                _set_generator_state(space.np_random, rng_state)


def _space_rng(space: gym.Space) -> dict[str, Any] | None:
    rng = getattr(space, "_np_random", None)
    return generator_state(rng) if isinstance(rng, np.random.Generator) else None


class _Factory:
    """Picklable constructor of one labelled sub-env (for worker processes and Ray actors)."""

    def __init__(
        self,
        make: str | Callable[[], gym.Env],
        kwargs: dict,
        index: int,
        seed: Any,
        use_masking: bool = True,
    ):
        self.make, self.kwargs, self.index, self.seed = make, kwargs, index, seed
        self.use_masking = use_masking
        self.fast = False  # set by a group that steps its sub-envs in its own process
        self.in_worker = False  # set by a group whose sub-envs live in worker processes
        self.main_pid = os.getpid()  # gymnasium also calls it here once, for the spaces

    def __call__(self) -> gym.Env:
        if self.in_worker and os.getpid() != self.main_pid:
            # Ctrl-C is the main process's to handle (rk.run's clean stop)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            env = gym.make(self.make, **self.kwargs) if isinstance(self.make, str) else self.make()
        except Exception as error:
            raise SubEnvError(
                f"sub-env {self.index} (seed {self.seed}) could not be built: {error!r}"
            ) from error
        if not isinstance(env, gym.Env):
            raise TypeError(
                f"VectorGymEnv: the function of sub-env {self.index} must return a gymnasium.Env,"
                f" got {type(env).__name__}: {env!r}"
            )
        return _Labelled(env, self.index, self.seed, self.fast, self.use_masking)


# ---- one group of sub-envs behind a gymnasium vector env, in rlkit's contract ----


class _Group:
    """A gymnasium vector env whose results are put into rlkit's contract, whatever its
    autoreset mode: ``step`` returns ``(state, reward, terminated, truncated, final_state,
    mask, final_mask, done)`` with ``state`` already reset where an episode ended. The sync and
    subprocess backends are one group; the Ray backend runs one group (a ``SyncVectorEnv``)
    per actor."""

    def __init__(self, factories: list[_Factory], kind: str, mode: str, context: Any = None):
        autoreset_mode = _MODES[mode]
        self.in_process = kind != "subprocess"
        for factory in factories:
            factory.fast = self.in_process
            factory.in_worker = not self.in_process
        if kind == "subprocess":
            self.vec = _CheckedAsyncVectorEnv(
                factories, autoreset_mode=autoreset_mode, context=context
            )
        else:
            try:
                self.vec = gym.vector.SyncVectorEnv(factories, autoreset_mode=autoreset_mode)
            except RuntimeError as error:  # gymnasium's space check: say which sub-env differs
                _raise_space_mismatch(factories, _spaces_built_here(factories), error)
                raise
        self.same_step = autoreset_mode == gym.vector.AutoresetMode.SAME_STEP
        self.n = len(factories)

    def ready(self) -> bool:
        return True

    def spaces(self) -> tuple[gym.Space, gym.Space]:
        """Sub-env 0's spaces, as copies (their generators as seeded, not shared with the
        sub-env's own), as the subprocess and Ray backends hand them over."""
        spaces = (self.vec.single_action_space, self.vec.single_observation_space)
        return copy.deepcopy(spaces) if self.in_process else spaces

    def reset(self, seeds: list[int | None]) -> tuple[np.ndarray, np.ndarray | None]:
        state, info = self.vec.reset(seed=list(seeds))
        return state, _mask(info, self.n)

    def final_mask(self, info: dict[str, Any], mask: np.ndarray | None, done: np.ndarray) -> Any:
        """The masks of the states the step led to: ``mask`` except where an episode ended,
        whose final state's mask is in the step's ``final_info`` (SAME_STEP autoreset)."""
        if mask is None or not done.any() or not self.same_step:
            return mask
        final = _mask(info.get("final_info") or {}, self.n)
        return mask if final is None else np.where(done[:, None], final, mask)

    def step(self, actions: Any) -> tuple:
        try:
            state, reward, terminated, truncated, info = self.vec.step(actions)
        except SubEnvError:
            raise
        except Exception as error:
            if self.in_process:  # name the sub-env SyncVectorEnv.step was stepping
                index = _failing_index(error)
                if index is not None:
                    label = self.vec.envs[index].rlkit_label
                    raise SubEnvError(f"{label} raised in step: {error!r}") from error
            raise
        done = terminated | truncated
        mask = _mask(info, self.n)
        final_mask = self.final_mask(info, mask, done)
        final = state
        if done.any():
            if self.same_step:
                final = _copied(state)
                for i in np.flatnonzero(done):
                    _set_row(final, i, info["final_obs"][i])
            else:  # NEXT_STEP and DISABLED: reset the finished sub-envs now
                state, reset_info = self.vec.reset(options={"reset_mask": done})
                state = state.copy() if state is final else state
                reset_mask = _mask(reset_info, self.n)
                if reset_mask is not None:
                    mask = reset_mask if mask is None else np.where(done[:, None], reset_mask, mask)
        reward = np.asarray(reward, np.float64)
        return state, reward, terminated, truncated, final, mask, final_mask, done

    def get_states(self) -> list[dict[str, Any]]:
        return list(self.vec.get_attr("rlkit_state"))

    def set_states(self, states: list[dict[str, Any]]) -> None:
        self.vec.set_attr("rlkit_state", list(states))

    def dead_workers(self, wait_s: float = 1.0) -> list[tuple[int, int, int | None]]:
        """``(index, pid, exit code)`` of every worker process that has exited (subprocess
        backend; empty in process). A pipe that broke may be seen just before its process is
        reaped: wait up to ``wait_s`` for the first one."""
        processes = getattr(self.vec, "processes", None) or []
        deadline = time.monotonic() + wait_s
        while True:
            dead = [
                (i, p.pid, p.exitcode) for i, p in enumerate(processes) if not p.is_alive()
            ]
            if dead or not processes or time.monotonic() >= deadline:
                return dead
            time.sleep(0.02)

    def close(self, terminate: bool = False) -> None:
        if isinstance(self.vec, gym.vector.AsyncVectorEnv):
            self.vec.close(terminate=terminate)
        else:
            self.vec.close()


# ---- every sub-env must have the same spaces (gymnasium checks; rlkit says which differs) ----


class _CheckedAsyncVectorEnv(gym.vector.AsyncVectorEnv):
    """gymnasium's ``AsyncVectorEnv`` whose space check names the sub-env that differs, its
    spaces and the expected ones (gymnasium's own message names none of them)."""

    def _check_spaces(self) -> None:
        try:
            super()._check_spaces()
        except RuntimeError as error:
            try:
                spaces = list(
                    zip(
                        self.get_attr("observation_space"),
                        self.get_attr("action_space"),
                        strict=True,
                    )
                )
            except Exception:  # noqa: BLE001 - the workers cannot answer: gymnasium's error
                spaces = None
            self.close(terminate=True)
            if spaces is not None:
                _raise_space_mismatch(self.env_fns, spaces, error)
            raise


def _spaces_built_here(factories: list[_Factory]) -> list[tuple[gym.Space, gym.Space]]:
    """Each sub-env's (observation, action) spaces, built in this process and closed again."""
    spaces = []
    for factory in factories:
        env = factory()
        try:
            spaces.append((env.observation_space, env.action_space))
        finally:
            env.close()
    return spaces


def _raise_space_mismatch(
    factories: list[Any], spaces: list[tuple[gym.Space, gym.Space]], error: Exception
) -> None:
    """Raise ``ValueError`` naming the first sub-env whose spaces differ from sub-env 0's (the
    expected ones); return when all are alike (the caller re-raises ``error``)."""
    expected_obs, expected_act = spaces[0]
    for i, (obs, act) in enumerate(spaces):
        wrong = [
            f"{what} space {got}, not {want}"
            for what, got, want in (
                ("observation", obs, expected_obs),
                ("action", act, expected_act),
            )
            if got != want
        ]
        if wrong:
            seed = getattr(factories[i], "seed", None)
            raise ValueError(
                f"VectorGymEnv: sub-env {i} (seed {seed}) has the {' and the '.join(wrong)}; "
                f"expected every sub-env to have the spaces of sub-env 0 (observation "
                f"{expected_obs}, action {expected_act}), so that their observations and "
                f"actions can be batched. Build all sub-envs with the same environment settings."
            ) from error


def _failing_index(error: BaseException) -> int | None:
    """The sub-env index ``SyncVectorEnv.step`` was at when ``error`` was raised."""
    tb = error.__traceback__
    while tb is not None:
        frame = tb.tb_frame
        if frame.f_code is _SYNC_STEP_CODE:
            index = frame.f_locals.get("i")
            return index if isinstance(index, int) else None
        tb = tb.tb_next
    return None


_SYNC_STEP_CODE = gym.vector.SyncVectorEnv.step.__code__


def _mask(info: dict[str, Any], n: int) -> np.ndarray | None:
    """Per-sub-env legal-action masks from the vector ``info["action_mask"]`` (or None)."""
    mask = info.get("action_mask")
    if mask is None:
        return None
    mask = np.asarray(mask, dtype=bool)
    return mask.reshape(n, -1) if mask.ndim != 2 and mask.size % n == 0 else mask


def _copied(state: Any) -> Any:
    """A copy of a batch of observations (a Dict/Tuple space's: a dict/tuple of arrays)."""
    if isinstance(state, dict):
        return {k: _copied(v) for k, v in state.items()}
    if isinstance(state, tuple):
        return tuple(_copied(v) for v in state)
    return state.copy()


def _set_row(batch: Any, i: int, obs: Any) -> None:
    """Row ``i`` of a batch of observations := ``obs``, per key for Dict/Tuple spaces
    (gymnasium's vector envs stack those per key)."""
    if isinstance(batch, dict):
        for key, value in batch.items():
            _set_row(value, i, obs[key])
    elif isinstance(batch, tuple):
        for value, part in zip(batch, obs, strict=True):
            _set_row(value, i, part)
    else:
        batch[i] = obs
