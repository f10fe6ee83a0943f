"""Optional dependencies: torch (neural approximators, the DQN family) is not installed with
rlkit; ``require_torch`` imports it or says how to install it."""

from __future__ import annotations

from types import ModuleType

__all__ = ["TORCH_HINT", "require_torch"]

TORCH_HINT = (
    "this needs PyTorch, which rlkit does not install by itself (tabular methods run without "
    "it): pip install torch  (a CPU-only build, much smaller, on any machine: "
    "pip install torch --index-url https://download.pytorch.org/whl/cpu)"
)


def require_torch(what: str) -> ModuleType:
    """Import torch, or raise ``ModuleNotFoundError`` saying that ``what`` needs it and how to
    install it.

    Example:
        >>> require_torch("NeuralNetworkApproximator").__name__
        'torch'
    """
    try:
        import torch
    except ModuleNotFoundError as error:
        if error.name != "torch":
            raise
        raise ModuleNotFoundError(f"{what}: {TORCH_HINT}", name="torch") from error
    return torch
