"""The state protocol of checkpoints: ``get_state(obj)`` / ``set_state(obj, state)``.

Every stateful rlkit object implements ``state_dict() -> dict`` and ``load_state_dict(state)``;
the state is a nested structure of dicts, lists, tuples, numpy arrays and scalars, Python
scalars, strings, None and torch tensors (what :mod:`rlkit.hooks.checkpoint` can write).
:func:`get_state` and :func:`set_state` apply that protocol to any object, and also handle the
random generators that have no ``state_dict`` of their own (``numpy.random.Generator``,
``torch.Generator``). :func:`attribute_state` saves the plain attributes of an object that has
no ``state_dict`` (used for the layers of a gymnasium environment and for user hooks).

Example:
    >>> import numpy as np
    >>> from rlkit.core.state import get_state, set_state
    >>> rng = np.random.default_rng(0)
    >>> saved = get_state(rng)
    >>> a = rng.random()
    >>> set_state(rng, saved)
    >>> rng.random() == a
    True
"""

from __future__ import annotations

import copy
import sys
from typing import Any

import numpy as np

from .checks import non_negative_int

__all__ = [
    "get_state",
    "set_state",
    "has_state",
    "generator_state",
    "set_generator_state",
    "attribute_state",
    "load_attribute_state",
    "is_plain",
    "require_keys",
    "state_count",
    "state_or_none",
    "load_parts",
]

# numpy bit generators a saved state may name (looked up in this table, never by getattr)
_BIT_GENERATORS = {
    "PCG64": np.random.PCG64,
    "PCG64DXSM": np.random.PCG64DXSM,
    "MT19937": np.random.MT19937,
    "Philox": np.random.Philox,
    "SFC64": np.random.SFC64,
}


def _torch_generator_type() -> type | None:
    torch = sys.modules.get("torch")  # a torch generator exists only if torch was imported
    return None if torch is None else torch.Generator


def has_state(obj: Any) -> bool:
    """Whether :func:`get_state` can save ``obj``."""
    if callable(getattr(obj, "state_dict", None)) and callable(
        getattr(obj, "load_state_dict", None)
    ):
        return True
    if isinstance(obj, np.random.Generator):
        return True
    torch_generator = _torch_generator_type()
    return torch_generator is not None and isinstance(obj, torch_generator)


def get_state(obj: Any) -> Any:
    """The state of ``obj``: ``obj.state_dict()``, or a generator's state.

    Raises ``TypeError`` naming the type for an object that implements neither.
    """
    state_dict = getattr(obj, "state_dict", None)
    if callable(state_dict):
        return state_dict()
    if isinstance(obj, np.random.Generator):
        return generator_state(obj)
    torch_generator = _torch_generator_type()
    if torch_generator is not None and isinstance(obj, torch_generator):
        return {"torch_generator": obj.get_state()}
    raise TypeError(
        f"get_state: {type(obj).__name__} has no state_dict(); implement state_dict() and "
        f"load_state_dict(state) to make it checkpointable"
    )


def set_state(obj: Any, state: Any) -> None:
    """Restore ``obj`` from a state returned by :func:`get_state` (in place)."""
    load = getattr(obj, "load_state_dict", None)
    if callable(load):
        load(state)
        return
    if isinstance(obj, np.random.Generator):
        set_generator_state(obj, state)
        return
    torch_generator = _torch_generator_type()
    if torch_generator is not None and isinstance(obj, torch_generator):
        if not isinstance(state, dict) or "torch_generator" not in state:
            raise ValueError(f"set_state: expected a torch generator state, got {state!r:.80}")
        obj.set_state(state["torch_generator"])
        return
    raise TypeError(
        f"set_state: {type(obj).__name__} has no load_state_dict(); implement state_dict() and "
        f"load_state_dict(state) to make it checkpointable"
    )


# ---- numpy generators ----


def generator_state(rng: np.random.Generator) -> dict[str, Any]:
    """``{"bit_generator": rng.bit_generator.state}`` (a copy: plain dicts and ints)."""
    return {"bit_generator": copy.deepcopy(rng.bit_generator.state)}


def set_generator_state(rng: np.random.Generator, state: dict[str, Any]) -> None:
    """Assign a state saved by :func:`generator_state` back into ``rng``."""
    bit_state = _bit_generator_state(state)
    expected = type(rng.bit_generator).__name__
    if bit_state.get("bit_generator") != expected:
        raise ValueError(
            f"set_state: the saved generator is a {bit_state.get('bit_generator')!r}, "
            f"this one a {expected!r}"
        )
    rng.bit_generator.state = copy.deepcopy(bit_state)


def _new_generator(state: dict[str, Any]) -> np.random.Generator:
    """A generator of the saved kind, in the saved state."""
    bit_state = _bit_generator_state(state)
    kind = _BIT_GENERATORS.get(bit_state.get("bit_generator"))
    if kind is None:
        raise ValueError(
            f"set_state: unknown bit generator {bit_state.get('bit_generator')!r}; expected one "
            f"of {sorted(_BIT_GENERATORS)}"
        )
    rng = np.random.Generator(kind())
    rng.bit_generator.state = copy.deepcopy(bit_state)
    return rng


def _bit_generator_state(state: Any) -> dict[str, Any]:
    if not isinstance(state, dict) or not isinstance(state.get("bit_generator"), dict):
        raise ValueError(
            f"set_state: expected a numpy generator state {{'bit_generator': {{...}}}}, "
            f"got {state!r:.80}"
        )
    return state["bit_generator"]


# ---- plain attributes of objects without a state_dict ----


def is_plain(value: Any, _depth: int = 0) -> bool:
    """Whether ``value`` is plain data a checkpoint can hold: None, bool, int, float, str, numpy
    scalars and arrays (not of dtype object), and lists, tuples and str-keyed dicts of those."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype.kind != "O"
    if _depth > 16:
        return False
    if isinstance(value, (list, tuple)):
        return all(is_plain(v, _depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_plain(v, _depth + 1) for k, v in value.items())
    return False


def attribute_state(obj: Any, *, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The plain attributes (:func:`is_plain`) and numpy generators of ``vars(obj)``, copied.

    Anything else (spaces, windows, file handles, other objects) is left out, and so are the
    names in ``exclude``. Returns ``{"values": {...}, "generators": {...}}``.
    """
    values: dict[str, Any] = {}
    generators: dict[str, Any] = {}
    for name, value in vars(obj).items():
        if name in exclude:
            continue
        if isinstance(value, np.random.Generator):
            generators[name] = generator_state(value)
        elif is_plain(value):
            values[name] = copy.deepcopy(value)
    return {"values": values, "generators": generators}


def load_attribute_state(obj: Any, state: dict[str, Any]) -> None:
    """Restore what :func:`attribute_state` saved: set the values (copies) and put the saved
    generator states into the object's generators (creating a generator where it has none)."""
    if not isinstance(state, dict) or not {"values", "generators"} <= set(state):
        raise ValueError(
            f"load_attribute_state: expected {{'values': ..., 'generators': ...}} for "
            f"{type(obj).__name__}, got {state!r:.80}"
        )
    for name, value in state["values"].items():
        setattr(obj, name, copy.deepcopy(value))
    for name, rng_state in state["generators"].items():
        rng = getattr(obj, name, None)
        if isinstance(rng, np.random.Generator):
            set_generator_state(rng, rng_state)
        else:
            setattr(obj, name, _new_generator(rng_state))


def require_keys(owner: str, state: Any, *keys: str) -> None:
    """Reject a state that is not a dict with ``keys`` (a corrupt or foreign checkpoint)."""
    if not isinstance(state, dict):
        raise TypeError(f"{owner}.load_state_dict: expected a dict, got {type(state).__name__}")
    missing = [k for k in keys if k not in state]
    if missing:
        raise ValueError(
            f"{owner}.load_state_dict: state lacks {missing}; got keys {sorted(state)} "
            f"(a checkpoint of another object?)"
        )


def state_count(owner: str, state: dict[str, Any], key: str) -> int:
    """``state[key]``, which must be a non-negative integer (a counter)."""
    return non_negative_int(f"{owner}.load_state_dict", key, state[key])


def state_or_none(part: Any) -> Any:
    """``part.state_dict()``, or None when ``part`` has no ``state_dict``."""
    method = getattr(part, "state_dict", None)
    return method() if callable(method) else None


def load_parts(owner: str, key: str, parts: tuple, state: dict[str, Any]) -> None:
    """Restore the parts of a composite (hooks of a ComposedHook, conditions of StopAny/StopAll)."""
    require_keys(owner, state, key)
    states = state[key]
    if not isinstance(states, list) or len(states) != len(parts):
        raise ValueError(
            f"{owner}.load_state_dict: expected a list of {len(parts)} states under {key!r}, "
            f"got {states!r:.80}"
        )
    for part, part_state in zip(parts, states, strict=True):
        if part_state is not None:
            part.load_state_dict(part_state)
