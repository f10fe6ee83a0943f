"""Encoders by observation space (rlkit/approximators/encoders): widths, one-hot values, the key
order of Dict/Tuple spaces, nesting, image keys and the refusals."""

from __future__ import annotations

from collections import OrderedDict

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.spaces import flatten, flatten_space

from rlkit.approximators.encoders import (
    CombinedEncoder,
    FlattenEncoder,
    ImageKeyEncoder,
    MultiBinaryEncoder,
    MultiDiscreteEncoder,
    OneHotEncoder,
    encoder_for,
)

Box, Discrete, Dict, Tuple = gym.spaces.Box, gym.spaces.Discrete, gym.spaces.Dict, gym.spaces.Tuple


def _batch(space, samples):
    """A batch of gymnasium samples as the learners hand them over: float32 tensors by key."""
    if isinstance(space, Dict):
        return {k: _batch(sub, [s[k] for s in samples]) for k, sub in space.spaces.items()}
    if isinstance(space, Tuple):
        return {i: _batch(sub, [s[i] for s in samples]) for i, sub in enumerate(space.spaces)}
    return torch.as_tensor(np.stack([np.asarray(s) for s in samples]), dtype=torch.float32)


@pytest.mark.parametrize(
    ("space", "kind", "width"),
    [
        (Box(-1, 1, (4,)), FlattenEncoder, 4),
        (Box(-1, 1, (2, 3)), FlattenEncoder, 6),
        (Box(-1, 1, ()), FlattenEncoder, 1),
        (Discrete(5), OneHotEncoder, 5),
        (Discrete(3, start=-1), OneHotEncoder, 3),
        (gym.spaces.MultiBinary(7), MultiBinaryEncoder, 7),
        (gym.spaces.MultiBinary((2, 3)), MultiBinaryEncoder, 6),
        (gym.spaces.MultiDiscrete([3, 2, 4]), MultiDiscreteEncoder, 9),
        (gym.spaces.MultiDiscrete([[2, 3], [4, 5]]), MultiDiscreteEncoder, 14),
        (Dict({"a": Discrete(3), "b": Box(-1, 1, (2,))}), CombinedEncoder, 5),
        (Tuple([Discrete(2), gym.spaces.MultiDiscrete([2, 2])]), CombinedEncoder, 6),
    ],
)
def test_each_encoder_has_the_width_of_the_flattened_space(space, kind, width):
    encoder = encoder_for(space)
    assert type(encoder) is kind and encoder.n_features == width
    assert width == flatten_space(space).shape[0]  # gymnasium's FlattenObservation agrees
    space.seed(0)
    samples = [space.sample() for _ in range(5)]
    out = encoder(_batch(space, samples))
    assert out.shape == (5, width) and out.dtype == torch.float32
    # the same numbers as gymnasium's flatten (one-hot, concatenation order and all)
    expected = np.stack([flatten(space, s) for s in samples]).astype(np.float32)
    assert np.array_equal(out.numpy(), expected)


def test_one_hot_values():
    out = OneHotEncoder(Discrete(4))(torch.tensor([3.0, 0.0, 2.0]))
    assert out.tolist() == [[0, 0, 0, 1], [1, 0, 0, 0], [0, 0, 1, 0]]
    shifted = OneHotEncoder(Discrete(3, start=-1))(torch.tensor([-1, 1]))
    assert shifted.tolist() == [[1, 0, 0], [0, 0, 1]]
    multi = MultiDiscreteEncoder(gym.spaces.MultiDiscrete([2, 3]))(torch.tensor([[1, 2], [0, 0]]))
    assert multi.tolist() == [[0, 1, 0, 0, 1], [1, 0, 1, 0, 0]]


def test_one_hot_refuses_a_value_outside_the_space_naming_it():
    with pytest.raises(ValueError, match=r"OneHotEncoder: observation value 4 .* 0 \.\. 3"):
        OneHotEncoder(Discrete(4))(torch.tensor([1.0, 4.0]))
    with pytest.raises(ValueError, match=r"MultiDiscreteEncoder: observation value -1"):
        MultiDiscreteEncoder(gym.spaces.MultiDiscrete([2, 2]))(torch.tensor([[0, -1]]))


def test_dict_keys_are_encoded_in_the_spaces_sorted_order_whatever_the_dicts_order():
    space = Dict({"zeta": Box(-1, 1, (1,)), "alpha": Box(-1, 1, (2,)), "mid": Discrete(2)})
    encoder = encoder_for(space)
    assert encoder.keys == ["alpha", "mid", "zeta"]  # gymnasium sorts a plain dict's keys
    obs = {"zeta": torch.tensor([[9.0]]), "mid": torch.tensor([1.0]),
           "alpha": torch.tensor([[1.0, 2.0]])}  # fmt: skip
    assert encoder(obs).tolist() == [[1.0, 2.0, 0.0, 1.0, 9.0]]
    reordered = dict(reversed(list(obs.items())))
    assert torch.equal(encoder(reordered), encoder(obs))  # the observation's order is not used
    # an OrderedDict space keeps its order, as gymnasium's flatten does
    ordered = Dict(OrderedDict([("zeta", Box(-1, 1, (1,))), ("alpha", Box(-1, 1, (2,)))]))
    assert encoder_for(ordered).keys == ["zeta", "alpha"]
    assert encoder_for(ordered)(obs).tolist() == [[9.0, 1.0, 2.0]]


def test_nested_dict_and_tuple_spaces_nest():
    space = Dict({
        "goal": Tuple([Discrete(3),
                       Dict({"x": Box(-1, 1, (2,)), "bits": gym.spaces.MultiBinary(2)})]),
        "agent": gym.spaces.MultiDiscrete([2, 2]),
    })  # fmt: skip
    encoder = encoder_for(space)
    assert encoder.n_features == 4 + 3 + 2 + 2 == flatten_space(space).shape[0]
    space.seed(1)
    samples = [space.sample() for _ in range(3)]
    expected = np.stack([flatten(space, s) for s in samples]).astype(np.float32)
    assert np.array_equal(encoder(_batch(space, samples)).numpy(), expected)


def test_a_tuple_observation_may_be_a_tuple_of_tensors():
    encoder = encoder_for(Tuple([Discrete(2), Box(-1, 1, (1,))]))
    assert encoder((torch.tensor([1.0]), torch.tensor([[0.5]]))).tolist() == [[0.0, 1.0, 0.5]]


def test_image_keys_use_the_cnn_and_256_features():
    image = Box(0, 255, (1, 10, 10), np.uint8)
    space = Dict({"frame": image, "speed": Box(-1, 1, (3,))})
    encoder = encoder_for(space, cnn="minatar", seed=0)
    assert isinstance(encoder.encoders["frame"], ImageKeyEncoder)
    assert encoder.n_features == 256 + 3
    frames = torch.randint(0, 256, (2, 1, 10, 10), dtype=torch.uint8)
    out = encoder({"frame": frames.float(), "speed": torch.zeros(2, 3)})
    assert out.shape == (2, 259) and (out[:, :256] >= 0).all()  # ReLU features
    again = encoder_for(space, cnn="minatar", seed=0)
    pairs = zip(encoder.parameters(), again.parameters(), strict=True)
    assert all(torch.equal(a, b) for a, b in pairs)


def test_a_space_without_an_encoder_is_refused_naming_it():
    with pytest.raises(TypeError, match=r"encoder_for: no encoder for the observation space Text"):
        encoder_for(gym.spaces.Text(5))
    with pytest.raises(TypeError, match=r"no encoder .* Sequence"):
        encoder_for(Dict({"a": gym.spaces.Sequence(Discrete(2))}))
