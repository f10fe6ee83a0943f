"""PettingZoo is optional (``pip install rlkit-toolkit[multiagent]``): the bundled games need it."""

from __future__ import annotations

from types import ModuleType

__all__ = ["PETTINGZOO_HINT", "require_pettingzoo"]

PETTINGZOO_HINT = (
    "this needs PettingZoo, which rlkit does not install by itself: "
    "pip install 'pettingzoo>=1.24'  (or pip install 'rlkit-toolkit[multiagent]')"
)


def require_pettingzoo(what: str) -> ModuleType:
    """Import pettingzoo, or raise ``ModuleNotFoundError`` saying that ``what`` needs it.

    Example:
        >>> require_pettingzoo("KuhnPokerEnv").__name__
        'pettingzoo'
    """
    try:
        import pettingzoo
    except ModuleNotFoundError as error:
        if error.name != "pettingzoo":
            raise
        raise ModuleNotFoundError(f"{what}: {PETTINGZOO_HINT}", name="pettingzoo") from error
    return pettingzoo
