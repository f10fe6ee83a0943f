import numpy as np
import pytest

import rlkit as rk
from rlkit.envs.toy.short_corridor import ShortCorridorEnv


def test_passes_gymnasium_env_checker(check_both):
    check_both("rlkit/ShortCorridor-v0")


def test_moves_with_the_switched_state():
    env = ShortCorridorEnv()
    env.reset(seed=0)
    assert env.step(0)[:3] == (0, -1.0, False)  # left at the left end stays
    assert env.step(1)[0] == 1
    assert env.step(0)[0] == 2  # switched: left moves right
    assert env.step(1)[:3] == (3, -1.0, True)
    assert rk.ShortCorridorEnv is ShortCorridorEnv


def test_value_is_the_book_curve():
    env = ShortCorridorEnv()
    ps = np.linspace(0.01, 0.99, 9801)
    values = [env.value(p) for p in ps]
    assert ps[int(np.argmax(values))] == pytest.approx(2 - np.sqrt(2), abs=1e-4)
    assert max(values) == pytest.approx(-(6 + 4 * np.sqrt(2)), abs=1e-6)
    assert env.value(0.5) == pytest.approx(-12.0)
    assert env.value(1.0) == -np.inf
    with pytest.raises(ValueError, match="p must be in"):
        env.value(1.5)
