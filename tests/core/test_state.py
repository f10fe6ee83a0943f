"""rlkit/core/state.py: get_state/set_state of objects and generators, plain attributes, and the
helpers of load_state_dict methods (require_keys, state_count, state_or_none, load_parts)."""

from __future__ import annotations

import copy

import gymnasium as gym
import numpy as np
import pytest

from rlkit.core.state import (
    attribute_state,
    generator_state,
    get_state,
    has_state,
    is_plain,
    load_attribute_state,
    load_parts,
    require_keys,
    set_generator_state,
    set_state,
    state_count,
    state_or_none,
)

torch = pytest.importorskip("torch")


class Counter:
    """A stateful part: its state is its count."""

    def __init__(self, n: int = 0) -> None:
        self.n = n

    def state_dict(self):
        return {"n": self.n}

    def load_state_dict(self, state):
        self.n = state["n"]


def test_numpy_and_torch_generators_round_trip():
    rng = np.random.default_rng(0)
    saved = get_state(rng)
    expected = rng.random(3)
    other = np.random.default_rng(99)
    set_state(other, saved)
    assert np.array_equal(other.random(3), expected)
    gen = torch.Generator().manual_seed(0)
    saved = get_state(gen)
    expected = torch.rand(3, generator=gen)
    set_state(gen, saved)
    assert torch.equal(torch.rand(3, generator=gen), expected)


def test_get_state_of_an_object_without_state_dict_names_it():
    class Opaque:
        pass

    with pytest.raises(TypeError, match="Opaque has no state_dict"):
        get_state(Opaque())
    with pytest.raises(TypeError, match="Opaque has no load_state_dict"):
        set_state(Opaque(), {})


def test_attribute_state_keeps_plain_data_and_generators_only():
    class Layer:
        pass

    layer = Layer()
    layer.s, layer.cards, layer.arr = np.int64(3), [1, 10], np.zeros(2)
    layer.rng = np.random.default_rng(5)
    layer.window, layer.space = object(), gym.spaces.Discrete(2)
    state = attribute_state(layer)
    assert sorted(state["values"]) == ["arr", "cards", "s"]
    layer.arr[0] = 1.0  # the saved copy does not change with the object
    assert state["values"]["arr"][0] == 0.0
    expected = layer.rng.random()
    fresh = Layer()
    load_attribute_state(fresh, state)
    assert fresh.s == 3 and fresh.cards == [1, 10] and fresh.rng.random() == expected


def test_state_dict_protocol_objects_go_through_their_methods():
    source, target = Counter(5), Counter()
    saved = get_state(source)
    assert saved == {"n": 5}
    set_state(target, saved)
    assert target.n == 5
    assert has_state(source) and has_state(np.random.default_rng(0))
    assert has_state(torch.Generator()) and not has_state(object())


def test_generator_state_is_a_copy():
    rng = np.random.default_rng(3)
    saved = generator_state(rng)
    copy_before = copy.deepcopy(saved)
    rng.random(10)
    assert saved == copy_before  # drawing does not change the saved state
    set_generator_state(rng, saved)
    assert rng.random() == np.random.default_rng(3).random()


def test_a_state_of_another_bit_generator_is_refused():
    saved = generator_state(np.random.Generator(np.random.MT19937(0)))
    with pytest.raises(ValueError, match="saved generator is a 'MT19937', this one a 'PCG64'"):
        set_generator_state(np.random.default_rng(0), saved)
    with pytest.raises(ValueError, match="expected a numpy generator state"):
        set_generator_state(np.random.default_rng(0), {"rng": 1})
    with pytest.raises(ValueError, match="expected a torch generator state"):
        set_state(torch.Generator(), {"bit_generator": {}})


def test_load_attribute_state_creates_missing_generators_of_the_saved_kind():
    class Layer:
        pass

    layer = Layer()
    layer.rng = np.random.Generator(np.random.Philox(4))
    state = attribute_state(layer)
    expected = layer.rng.random()
    fresh = Layer()  # no generator yet
    load_attribute_state(fresh, state)
    assert isinstance(fresh.rng.bit_generator, np.random.Philox)
    assert fresh.rng.random() == expected
    with pytest.raises(ValueError, match="expected {'values': ..., 'generators': ...}"):
        load_attribute_state(fresh, {"values": {}})


def test_attribute_state_leaves_out_excluded_names():
    class Layer:
        pass

    layer = Layer()
    layer.a, layer.b = 1, 2
    assert attribute_state(layer, exclude=("b",))["values"] == {"a": 1}


def _nested(depth: int) -> list:
    value: list = [1]
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "value, plain",
    [
        (None, True),
        ([1, 2.5, "x", True], True),
        ({"a": (np.int64(1), np.zeros(2))}, True),
        ({1: "int key"}, False),
        (np.array([None], dtype=object), False),
        (object(), False),
        (_nested(20), False),  # nested too deep
        (_nested(10), True),
    ],
)
def test_is_plain(value, plain):
    assert is_plain(value) is plain


def test_require_keys():
    require_keys("Owner", {"a": 1, "b": 2}, "a", "b")
    with pytest.raises(TypeError, match="Owner.load_state_dict: expected a dict, got list"):
        require_keys("Owner", [], "a")
    with pytest.raises(ValueError, match=r"Owner.load_state_dict: state lacks \['b'\]"):
        require_keys("Owner", {"a": 1}, "a", "b")


@pytest.mark.parametrize("value", [0, 7, np.int64(7)])
def test_state_count_accepts_non_negative_integers(value):
    count = state_count("Owner", {"steps": value}, "steps")
    assert count == value and type(count) is int


@pytest.mark.parametrize("value", [-1, 2.5, True, np.bool_(True), None, "3"])
def test_state_count_refuses_other_values(value):
    with pytest.raises(ValueError, match="Owner.load_state_dict: steps must be a non-negative"):
        state_count("Owner", {"steps": value}, "steps")


def test_state_or_none():
    assert state_or_none(Counter(2)) == {"n": 2}
    assert state_or_none(object()) is None


def test_load_parts_restores_each_part_and_skips_none():
    parts = (Counter(), Counter(9))
    load_parts("Composite", "parts", parts, {"parts": [{"n": 4}, None]})
    assert [p.n for p in parts] == [4, 9]
    with pytest.raises(ValueError, match="expected a list of 2 states under 'parts'"):
        load_parts("Composite", "parts", parts, {"parts": [{"n": 1}]})
    with pytest.raises(ValueError, match=r"state lacks \['parts'\]"):
        load_parts("Composite", "parts", parts, {})
