"""Shared helpers of the environment tests, handed to tests through fixtures."""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env


def _check_both(env_id: str, **kwargs) -> None:
    """check_env on the raw env and on gymnasium.make's wrapped one, warnings as errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make(env_id, **kwargs).unwrapped)
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version")
        check_env(gym.make(env_id, **kwargs))


@pytest.fixture
def check_both():
    """``check_both(env_id, **make_kwargs)``: gymnasium's env checker, raw and made."""
    return _check_both
