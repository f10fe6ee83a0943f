"""MuJoCo physics in environment checkpoints.

A gymnasium MuJoCo environment (``gymnasium.envs.mujoco``, gymnasium-robotics' ``Fetch``,
...) keeps its physics in a ``mujoco.MjData`` (the layer's ``data``, with its ``model``). Its
checkpoint state holds

* the integration state (``mujoco.mj_getState`` with ``mjSTATE_INTEGRATION``: time, positions,
  velocities, actuator activations, the constraint solver's warm start, controls, applied
  forces, mocap poses, ...), the whole input of the next ``mj_step``; and
* a copy of every array of the ``MjData`` (positions of bodies and sites, contact forces,
  ...): quantities the simulator derives, which environments read between steps (Ant's
  reward reads its torso's ``xpos`` before stepping, the Fetch tasks their sites' positions),
  and which after a step describe the state before its last substep, so they cannot be
  recomputed from the integration state alone.

Restored into an environment built the same way, the next steps repeat the saved run's bit
for bit (tested on HalfCheetah, Ant, Humanoid, FetchReach and FetchPush). Arrays whose size
depends on the number of active constraints (``efc_*``) are recomputed by the next step and
kept as they are when their size differs. No pickle is used: the state is numpy arrays.

Example:
    >>> import gymnasium as gym, numpy as np
    >>> env = gym.make("HalfCheetah-v5")
    >>> _ = env.reset(seed=0)
    >>> saved = physics_state(env.unwrapped)
    >>> first = env.step(np.ones(6, np.float32))[0]
    >>> load_physics_state(env.unwrapped, saved)
    >>> bool((env.step(np.ones(6, np.float32))[0] == first).all())
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "has_physics",
    "physics_state",
    "check_physics_state",
    "check_layers_physics",
    "load_physics_state",
    "load_layer_physics",
]


def has_physics(layer: Any) -> bool:
    """Whether ``layer`` keeps MuJoCo physics (a ``mujoco.MjData`` ``data`` and its ``model``).

    Example:
        >>> import gymnasium as gym
        >>> has_physics(gym.make("CartPole-v1").unwrapped)
        False
    """
    data = vars(layer).get("data") if hasattr(layer, "__dict__") else None
    kind = type(data)
    return (
        kind.__name__ == "MjData"
        and kind.__module__.split(".")[0] == "mujoco"
        and hasattr(layer, "model")
    )


def physics_state(layer: Any) -> dict[str, Any]:
    """The integration state and the arrays of ``layer``'s ``MjData`` (module docstring)."""
    import mujoco

    spec = mujoco.mjtState.mjSTATE_INTEGRATION
    integration = np.empty(mujoco.mj_stateSize(layer.model, spec), np.float64)
    mujoco.mj_getState(layer.model, layer.data, integration, spec)
    return {"integration": integration, "arrays": _arrays(layer.data)}


def check_physics_state(layer: Any, state: dict[str, Any]) -> None:
    """Refuse a :func:`physics_state` of another model (another integration-state size, or
    arrays this ``MjData`` has not) with a ``ValueError`` naming the layer; changes nothing."""
    import mujoco

    size = mujoco.mj_stateSize(layer.model, mujoco.mjtState.mjSTATE_INTEGRATION)
    saved = np.shape(state["integration"])
    missing = sorted(set(state["arrays"]) - set(_array_names(layer.data)))
    if saved != (size,) or missing:
        raise ValueError(
            f"{type(layer).__name__}: the checkpoint's MuJoCo state does not fit this model "
            f"(an integration state of shape {saved}, expected ({size},)"
            + (f"; arrays {missing[:5]} unknown here" if missing else "")
            + ")"
        )


def load_physics_state(layer: Any, state: dict[str, Any]) -> None:
    """Restore :func:`physics_state`'s ``state`` into ``layer`` (checked first by
    :func:`check_physics_state`: a refused state changes nothing)."""
    import mujoco

    check_physics_state(layer, state)
    for name, saved in state["arrays"].items():
        target = getattr(layer.data, name)
        if target.shape == np.shape(saved):  # efc_* follow the number of constraints
            target[...] = saved
    integration = np.asarray(state["integration"], np.float64)
    mujoco.mj_setState(layer.model, layer.data, integration, mujoco.mjtState.mjSTATE_INTEGRATION)


def check_layers_physics(layers: list[Any], states: list[dict[str, Any]]) -> None:
    """:func:`check_physics_state` for every layer of a wrapper chain whose saved state holds
    physics (``states[i]["physics"]``), before any layer is loaded."""
    for layer, state in zip(layers, states, strict=True):
        if _holds_physics(layer, state):
            check_physics_state(layer, state["physics"])


def load_layer_physics(layer: Any, state: dict[str, Any]) -> None:
    """:func:`load_physics_state` of a wrapper layer's saved state (``state["physics"]``), when
    it holds physics and the layer keeps any; nothing otherwise."""
    if _holds_physics(layer, state):
        load_physics_state(layer, state["physics"])


def _holds_physics(layer: Any, state: dict[str, Any]) -> bool:
    return "physics" in state and has_physics(layer)


def _arrays(data: Any) -> dict[str, np.ndarray]:
    """Copies of the ``MjData``'s array fields, by name."""
    return {name: getattr(data, name).copy() for name in _array_names(data)}


def _array_names(data: Any) -> list[str]:
    """The names of the ``MjData``'s array fields."""
    names = []
    for name in dir(data):
        if name.startswith("_"):
            continue
        try:
            value = getattr(data, name)
        except Exception:  # noqa: BLE001 - properties that need a plugin or a contact
            continue
        if isinstance(value, np.ndarray):
            names.append(name)
    return names
