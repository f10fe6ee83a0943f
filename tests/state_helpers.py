"""Shared by the checkpoint and state tests: exact comparison of saved states (types and dtypes
included), a state holding every kind of checkpoint data, and an object whose state is set."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from rlkit.core.state import get_state

torch = pytest.importorskip("torch")

FORMATS = ["safetensors", "npz"]


def assert_same(a: Any, b: Any, path: str = "x") -> None:
    """Exact equality including types and dtypes."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), path
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, path
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), path
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{path}: {list(a)} vs {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and (a == b or (a != a and b != b)), path
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), path
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def rich_state() -> dict[str, Any]:
    rng = np.random.default_rng(7)
    return {
        "ints": [0, -3, 2**127 + 5, True, False, None],  # PCG64 states are 128-bit ints
        "floats": [0.1, -1.5e-300, float("nan"), float("inf"), -float("inf")],
        "text": "naïve ✓",
        "tuple": (1, (2.5, "a"), [np.int64(3)]),  # Blackjack-style tuple observations
        "int_keys": {0: "a", 7: {"nested": (1, 2)}, (1, 2): 3.0},  # optimizer-style keys
        "dollar": {"$array": "not a tag"},
        "scalars": [np.int64(24), np.float32(0.1), np.bool_(True), np.uint8(255), np.str_("C")],
        "complex_scalar": np.complex128(1 + 2j),
        "arrays": {
            "f64": rng.normal(size=(3, 4)),
            "f32_0d": np.array(1.25, dtype=np.float32),
            "i8": np.arange(-5, 5, dtype=np.int8),
            "bool": np.array([True, False]),
            "u64": np.array([2**64 - 1], dtype=np.uint64),
            "empty": np.zeros((0, 3), dtype=np.float16),
            "transposed": np.arange(6.0).reshape(2, 3).T,  # not contiguous
            "big_endian": np.arange(4, dtype=">i4"),
            "complex": np.array([1 + 1j, 2 - 3j]),
            "strings": np.array(["ab", "c"]),
        },
        "tensors": {
            "f32": torch.randn(2, 3, generator=torch.Generator().manual_seed(0)),
            "bf16": torch.tensor([1.5, -2.25], dtype=torch.bfloat16),
            "i64": torch.arange(4),
            "bool": torch.tensor([True, False]),
            "scalar": torch.tensor(3.5, dtype=torch.float64),
        },
        "bytes": b"\x00\x01\xff",
        "rng": get_state(np.random.default_rng(1)),
        "torch_rng": get_state(torch.Generator().manual_seed(3)),
    }


class Holder:
    """An object whose whole state is ``self.state``."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def state_dict(self) -> Any:
        return self.state

    def load_state_dict(self, state: Any) -> None:
        self.state = state


def parameter_copies(module: Any) -> list[Any]:
    """Detached copies of a torch module's parameters, in order."""
    return [p.detach().clone() for p in module.parameters()]


def assert_equal_tensors(a: list[Any], b: list[Any]) -> None:
    """The two lists of tensors are equal, element for element (``torch.equal``)."""
    import torch

    assert len(a) == len(b)
    assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
