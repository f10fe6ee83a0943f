"""The flat public API: every exported name resolves, and ``import rlkit`` stays light."""

from __future__ import annotations

import subprocess
import sys

import rlkit as rk


def test_every_public_name_resolves():
    missing = [name for name in rk.__all__ if not hasattr(rk, name)]
    assert missing == []


def test_import_rlkit_does_not_import_torch():
    code = "import sys, rlkit; rlkit.Agent; rlkit.TDLearner; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_bundled_environments_are_registered_with_gymnasium():
    import gymnasium as gym

    for env_id in (
        "rlkit/RandomWalk1D-v0",
        "rlkit/MultiArmBandits-v0",
        "rlkit/WindyGridWorld-v0",
        "rlkit/MaximizationBias-v0",
        "rlkit/GridWorld-v0",
        "rlkit/GamblersProblem-v0",
    ):
        assert env_id in gym.registry


def test_unknown_attribute_is_an_attribute_error():
    try:
        rk.NoSuchThing  # noqa: B018
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")
