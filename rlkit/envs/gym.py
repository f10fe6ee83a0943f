"""Adapter from any gymnasium environment to rlkit's :class:`AbstractEnv`."""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.checks import non_negative_int
from ..core.interfaces import AbstractEnv, InvalidActionError
from ..core.state import (
    attribute_state,
    generator_state,
    is_plain,
    load_attribute_state,
    set_generator_state,
)
from .masks import checked_mask, find_action_masks, mask_size
from .mujoco_state import check_layers_physics, has_physics, load_layer_physics, physics_state
from .space_seeds import seed_spaces

__all__ = ["GymEnv"]


class GymEnv(AbstractEnv):
    """Wrap a gymnasium environment (an id or an instance) for the run loop.

    Terminated and truncated stay apart (``is_terminated`` / ``is_truncated``); after the last step
    of an episode ``state`` is the real final observation. ``seed`` seeds the first ``reset`` only,
    later episodes continue the environment's own generator, as gymnasium recommends; it also
    seeds the generators of the action and observation spaces (``env.action_space.sample()``),
    those not seeded yet, by the rule of rlkit/envs/space_seeds.py. Legal-action
    masks (``legal_action_mask``) come from the environment's ``action_masks()`` method when it
    has one (sb3-contrib's convention, looked up through the wrapper chain), else from
    ``info["action_mask"]`` when the environment provides one; actions outside the mask are
    refused, and so is a mask of the wrong length or one that marks no action legal in a state
    that is not terminal (the error names the environment and the step; see
    docs/how-to/action-masks.md). ``env.env`` is the wrapped gymnasium environment (e.g.
    ``env.env.unwrapped.true_values()`` of the random walk) and ``env.info`` the ``info`` dict of
    the last reset or step.

    Args:
        id_or_env: a registered id such as ``"CliffWalking-v1"`` or a ``gymnasium.Env``.
        seed: seed for the first reset and the spaces' generators (None: unseeded).
        check_actions: reject actions outside the action space with :class:`InvalidActionError`.
        use_masking: read legal-action masks (False: the env is taken as unmasked, as
            sb3-contrib's ``use_masking=False``: no mask reaches the policy, and illegal actions
            are the environment's to handle).
        **kwargs: passed to ``gymnasium.make`` when ``id_or_env`` is an id.

    Example:
        >>> import rlkit as rk
        >>> env = rk.GymEnv("CartPole-v1", seed=1)
        >>> env.reset()
        >>> env.act(env.action_space.sample())
        >>> env.done
        False
    """

    done = False  # a plain attribute here (kept current in reset/act): cheaper than the property

    def __init__(
        self,
        id_or_env: str | gym.Env,
        *,
        seed: int | None = None,
        check_actions: bool = True,
        use_masking: bool = True,
        **kwargs: Any,
    ) -> None:
        if isinstance(id_or_env, str):
            self.env = gym.make(id_or_env, **kwargs)
        elif isinstance(id_or_env, gym.Env):
            if kwargs:
                raise TypeError(
                    f"GymEnv: keyword arguments {sorted(kwargs)} are only accepted with an "
                    "environment id; got a gymnasium.Env instance"
                )
            self.env = id_or_env
        else:
            raise TypeError(
                f"GymEnv: expected a gymnasium id (str) or a gymnasium.Env, "
                f"got {type(id_or_env).__name__}: {id_or_env!r}"
            )
        self.action_space = self.env.action_space
        self.state_space = self.env.observation_space
        self.info: dict[str, Any] = {}
        self._mask: np.ndarray | None = None
        self._pending_seed = _checked_seed(seed)
        seed_spaces(self.env, self._pending_seed)  # rlkit/envs/space_seeds.py
        self._step = self.env.step
        self._check = _action_check(self.action_space) if check_actions else None
        self._discrete = isinstance(self.action_space, gym.spaces.Discrete)
        self.use_masking = bool(use_masking)
        self._action_masks = find_action_masks(self.env) if use_masking else None
        self._mask_size = mask_size(self.action_space)
        self.episode_steps = 0  # steps of the current episode (named by mask errors)

    @property
    def name(self) -> str:
        spec = getattr(self.env, "spec", None)
        return spec.id if spec is not None else type(self.env.unwrapped).__name__

    def __repr__(self) -> str:
        return f"GymEnv({self.name})"

    def reset(self, seed: int | None = None) -> None:
        seed = self._pending_seed if seed is None else _checked_seed(seed)
        self._pending_seed = None  # an explicit seed replaces the constructor's
        self.state, self.info = self.env.reset(seed=seed)
        self.episode_steps = 0
        self._mask = self._read_mask(False) if self.use_masking else None
        self.reward = 0.0
        self.is_terminated = self.is_truncated = self.done = False
        self.needs_reset = False

    def act(self, action: Any) -> None:
        if type(action) is np.ndarray and self._discrete and action.shape == ():
            action = action.item()  # a 0-d array (e.g. from torch's argmax): its integer
        if self._check is not None:
            if not self._check(action):
                raise InvalidActionError(
                    f"{self!r}: action {action!r} is outside the action space "
                    f"{self.action_space}" + _expected(self.action_space)
                )
            if self._mask is not None and not self._mask[action]:
                raise InvalidActionError(
                    f"{self!r}: action {action!r} is illegal in the current state; legal "
                    f"actions are {np.flatnonzero(self._mask).tolist()} ({self._mask_source})"
                )
        state, reward, terminated, truncated, info = self._step(action)
        self.info = info
        self.episode_steps += 1
        if self._action_masks is not None or ("action_mask" in info and self.use_masking):
            self._mask = self._read_mask(terminated)
        else:
            self._mask = None
        self.state = state
        self.reward = reward
        self.is_terminated = terminated
        self.is_truncated = truncated
        self.done = terminated or truncated

    @property
    def legal_action_mask(self) -> np.ndarray | None:
        return self._mask

    @property
    def _mask_source(self) -> str:
        return "action_masks()" if self._action_masks is not None else "info['action_mask']"

    def _read_mask(self, terminated: bool) -> np.ndarray | None:
        """The mask of the current state: ``action_masks()`` when the env has it, else
        ``info["action_mask"]``; checked (length; a legal action unless ``terminated``)."""
        if self._action_masks is not None:
            raw = self._action_masks()
        else:
            raw = self.info.get("action_mask")
            if raw is None:
                return None
        where = "at reset" if self.episode_steps == 0 else f"after step {self.episode_steps}"
        return checked_mask(
            f"{self!r} {where} of the episode ({self._mask_source})",
            raw,
            self._mask_size,
            terminated,
        )

    def close(self) -> None:
        self.env.close()

    # ---- checkpoints ----
    def state_dict(self) -> dict[str, Any]:
        """The environment state where it can be saved, for checkpoints.

        Saved: this adapter's ``state``, ``reward``, flags, ``needs_reset``, the seed still
        pending for the first reset and the plain entries of ``info`` (the action mask); for
        every layer of the wrapper chain (``TimeLimit``'s elapsed steps, ``OrderEnforcing``, ...,
        down to the unwrapped env) its plain attributes (numbers, strings, numpy arrays, lists,
        tuples and str-keyed dicts of those: CartPole's ``state``, toy-text's ``s`` and
        ``lastaction``, Blackjack's hands), the states of its numpy generators (``np_random``),
        its objects that hold only such data (the ``RunningMeanStd`` statistics of
        ``NormalizeObservation`` and ``NormalizeReward``) and its deques of such data
        (``RecordEpisodeStatistics``, ``FrameStackObservation``); what a wrapper with its own
        ``state_dict``/``load_state_dict`` methods returns (``rlkit.envs.images.MinAtarState``);
        and the generators of the action and observation spaces. A wrapper that keeps any other
        kind of state (not a function, space or environment) is refused with a ``TypeError``
        naming the wrapper and the attribute, rather than resumed without it.

        MuJoCo physics (a layer's ``mujoco.MjData``: ``rlkit/envs/mujoco_state.py``) is saved
        too, so a MuJoCo run resumed in the middle of an episode continues it exactly.

        Not saved: anything else, e.g. Box2D's physics, emulators (Atari, unless wrapped with
        ``rlkit.envs.images.AleState``), windows and renderers, or state kept in other objects.
        Such an environment resumes with its generators and plain attributes restored but may
        not continue an unfinished episode exactly; checkpoint at episode ends
        (``every_n_episodes``) for those.
        """
        return {
            "id": self.name,
            "state": _own(self.state),
            "reward": self.reward,
            "is_terminated": bool(self.is_terminated),
            "is_truncated": bool(self.is_truncated),
            "needs_reset": bool(self.needs_reset),
            "pending_seed": self._pending_seed,
            "episode_steps": self.episode_steps,
            "info": {
                k: _own(v) for k, v in self.info.items() if isinstance(k, str) and is_plain(v)
            },
            "layers": [_layer_state(self, layer) for layer in _layers(self.env)],
            "spaces": {
                "action": _space_rng(self.action_space),
                "observation": _space_rng(self.state_space),
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` saved into an environment built the same way."""
        saved = [layer["type"] for layer in state["layers"]]
        now = [type(layer).__qualname__ for layer in _layers(self.env)]
        if saved != now:
            raise ValueError(
                f"{self!r}.load_state_dict: the saved wrapper chain {saved} differs from this "
                f"environment's {now}"
            )
        check_layers_physics(_layers(self.env), state["layers"])  # refused before any change
        for layer, layer_state in zip(_layers(self.env), state["layers"], strict=True):
            _load_layer_state(layer, layer_state)
        for space, rng_state in (
            (self.action_space, state["spaces"]["action"]),
            (self.state_space, state["spaces"]["observation"]),
        ):
            if rng_state is not None:
                set_generator_state(space.np_random, rng_state)
        self.state = _own(state["state"])
        self.reward = state["reward"]
        self.is_terminated = bool(state["is_terminated"])
        self.is_truncated = bool(state["is_truncated"])
        self.done = self.is_terminated or self.is_truncated
        self.needs_reset = bool(state["needs_reset"])
        self._pending_seed = state["pending_seed"]
        self.info = {k: _own(v) for k, v in state["info"].items()}
        self.episode_steps = int(state.get("episode_steps", 0))  # absent before masks' checks
        if self._action_masks is not None or ("action_mask" in self.info and self.use_masking):
            self._mask = self._read_mask(self.is_terminated)
        else:
            self._mask = None


# attributes of gymnasium layers that are configuration or caches, never episode state
_SKIP = ("_saved_kwargs", "_cached_spec", "spec", "metadata", "_metadata")


def _layer_state(owner: GymEnv, layer: gym.Env) -> dict[str, Any]:
    """The state of one layer of the wrapper chain: plain attributes and generators, objects
    holding only plain data, deques of plain data. A wrapper with any other state is refused."""
    objects: dict[str, Any] = {}
    deques: dict[str, Any] = {}
    for name, value in vars(layer).items():
        if name in _SKIP or _is_configuration(value) or is_plain(value):
            continue
        if isinstance(value, np.random.Generator):
            continue  # in attribute_state
        if isinstance(value, deque) and is_plain(list(value)):
            deques[name] = {"items": copy.deepcopy(list(value)), "maxlen": value.maxlen}
        elif _is_data_object(value):
            objects[name] = attribute_state(value)
        elif isinstance(layer, gym.Wrapper):
            raise TypeError(
                f"{owner!r}.state_dict: the wrapper {type(layer).__name__} keeps {name!r}, a "
                f"{type(value).__name__}, which a checkpoint cannot save (only numbers, strings, "
                f"numpy arrays and generators, lists, tuples, dicts and deques of those, and "
                f"objects holding only those); this environment cannot be checkpointed with "
                f"this wrapper"
            )
    state = {
        "type": type(layer).__qualname__,
        "attributes": attribute_state(layer, exclude=_SKIP),
        "objects": objects,
        "deques": deques,
    }
    if _saves_itself(layer):  # e.g. rlkit.envs.images.MinAtarState: state kept elsewhere
        state["own"] = layer.state_dict()
    if has_physics(layer):  # MuJoCo: rlkit/envs/mujoco_state.py
        state["physics"] = physics_state(layer)
    return state


def _saves_itself(layer: gym.Env) -> bool:
    """Whether a wrapper saves state of its own (``state_dict`` and ``load_state_dict``)."""
    return isinstance(layer, gym.Wrapper) and all(
        callable(getattr(type(layer), name, None)) for name in ("state_dict", "load_state_dict")
    )


def _load_layer_state(layer: gym.Env, state: dict[str, Any]) -> None:
    load_layer_physics(layer, state)
    load_attribute_state(layer, state["attributes"])
    if "own" in state and _saves_itself(layer):
        layer.load_state_dict(state["own"])
    for name, saved in state.get("objects", {}).items():
        target = getattr(layer, name, None)
        if target is None or not _is_data_object(target):
            raise ValueError(
                f"{type(layer).__name__}: the checkpoint holds the state of {name!r}, which "
                f"this layer has not"
            )
        load_attribute_state(target, saved)
    for name, saved in state.get("deques", {}).items():
        setattr(layer, name, deque(copy.deepcopy(saved["items"]), maxlen=saved["maxlen"]))


def _is_configuration(value: Any) -> bool:
    """Functions, classes, spaces and environments: set up when the layer is built."""
    return callable(value) or isinstance(value, (gym.Env, gym.Space, type))


def _is_data_object(value: Any) -> bool:
    """An object whose attributes are all plain data or generators (e.g. ``RunningMeanStd``)."""
    attributes = getattr(value, "__dict__", None)
    if not attributes or isinstance(value, (gym.Env, gym.Space)):
        return False
    return all(is_plain(v) or isinstance(v, np.random.Generator) for v in attributes.values())


def _layers(env: gym.Env) -> list[gym.Env]:
    """The wrapper chain from the outermost wrapper down to the unwrapped environment."""
    layers = [env]
    while isinstance(layers[-1], gym.Wrapper):
        layers.append(layers[-1].env)
    return layers


def _space_rng(space: gym.Space) -> dict[str, Any] | None:
    rng = getattr(space, "_np_random", None)
    return generator_state(rng) if isinstance(rng, np.random.Generator) else None


def _own(x: Any) -> Any:
    return copy.deepcopy(x) if isinstance(x, (np.ndarray, list, dict)) else x


def _action_check(space: gym.Space):
    if isinstance(space, gym.spaces.Discrete):
        low, high = int(space.start), int(space.start + space.n)
        integer = (int, np.integer)

        def check(action: Any) -> bool:
            if isinstance(action, integer):
                return type(action) is not bool and low <= action < high
            # a 0-d integer array (e.g. from torch's argmax) is an integer too
            return (
                isinstance(action, np.ndarray)
                and action.shape == ()
                and action.dtype.kind in "iu"
                and low <= action < high
            )

        return check
    return space.contains


def _expected(space: gym.Space) -> str:
    if isinstance(space, gym.spaces.Discrete):
        return f"; expected an integer in [{space.start}, {space.start + space.n})"
    return ""


def _checked_seed(seed: Any) -> int | None:
    """None, or ``seed`` as a Python int >= 0 (gymnasium refuses other seeds only at reset, and
    numpy integers too)."""
    return None if seed is None else non_negative_int("GymEnv", "seed", seed)
