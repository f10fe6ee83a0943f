"""Tests of rlkit/approximators/cnn.py and q_network(cnn=...): shapes, scaling, refusals."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from rlkit.approximators.cnn import ImageEncoder, is_image_space
from rlkit.approximators.neural import q_network

ATARI = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)
MINATAR = gym.spaces.Box(0, 1, (4, 10, 10), np.uint8)
SIX = gym.spaces.Discrete(6)


def test_nature_cnn_layers_and_output_shapes():
    net = q_network(ATARI, SIX, (512,), cnn="nature", seed=0)
    convs = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.stride) for c in convs] == [
        (4, 32, (8, 8), (4, 4)),
        (32, 64, (4, 4), (2, 2)),
        (64, 64, (3, 3), (1, 1)),
    ]
    linears = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    assert [(lin.in_features, lin.out_features) for lin in linears] == [(3136, 512), (512, 6)]
    x = torch.randint(0, 256, (5, 4, 84, 84), dtype=torch.uint8)
    assert net(x).shape == (5, 6)
    assert net(x[0]).shape == (6,)  # one observation, no batch dimension


def test_minatar_cnn_layers_and_output_shapes():
    net = q_network(MINATAR, gym.spaces.Discrete(3), (128,), cnn="minatar", seed=0)
    convs = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [(c.out_channels, c.kernel_size, c.stride) for c in convs] == [(16, (3, 3), (1, 1))]
    linears = [m for m in net.modules() if isinstance(m, torch.nn.Linear)]
    assert [(lin.in_features, lin.out_features) for lin in linears] == [(16 * 8 * 8, 128), (128, 3)]
    assert net(torch.ones(2, 4, 10, 10, dtype=torch.uint8)).shape == (2, 3)


def test_pixels_are_scaled_to_unit_interval_inside():
    enc = ImageEncoder(ATARI, "nature", seed=0)
    frames = torch.randint(0, 256, (3, 4, 84, 84), dtype=torch.uint8)
    # uint8 in == float in of the same values: the model divides by 255 itself
    assert torch.equal(enc(frames), enc(frames.float()))
    # and it sees values in [0, 1]: the same as a float body fed frames / 255
    conv = enc.body[0]
    seen = []
    handle = conv.register_forward_pre_hook(lambda m, args: seen.append(args[0]))
    enc(frames)
    handle.remove()
    assert seen[0].dtype == torch.float32
    assert float(seen[0].max()) <= 1.0 and float(seen[0].min()) >= 0.0
    assert torch.equal(seen[0], frames.float() / 255.0)
    # MinAtar's 0/1 channels are scaled by their bound, 1
    assert ImageEncoder(MINATAR, "minatar").scale == 1.0


def test_seeded_and_reproducible():
    a = q_network(ATARI, SIX, (512,), cnn="nature", seed=np.random.SeedSequence(3))
    b = q_network(ATARI, SIX, (512,), cnn="nature", seed=np.random.SeedSequence(3))
    c = q_network(ATARI, SIX, (512,), cnn="nature", seed=np.random.SeedSequence(4))
    state = torch.get_rng_state()
    q_network(ATARI, SIX, (512,), cnn="nature", seed=5)
    assert torch.equal(state, torch.get_rng_state())  # the global generator is untouched
    for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y)
    assert not torch.equal(a[0].body[0].weight, c[0].body[0].weight)


def test_dueling_and_quantile_heads():
    dueling = q_network(MINATAR, SIX, (128,), cnn="minatar", dueling=True, seed=0)
    assert dueling(torch.zeros(2, 4, 10, 10, dtype=torch.uint8)).shape == (2, 6)
    quantiles = q_network(MINATAR, SIX, (128,), cnn="minatar", n_quantiles=5, seed=0)
    assert quantiles(torch.zeros(2, 4, 10, 10, dtype=torch.uint8)).shape == (2, 30)


def test_image_space_given_an_mlp_is_refused_naming_shape_and_model():
    with pytest.raises(ValueError, match=r"uint8 images of shape \(4, 84, 84\).*MLP.*cnn="):
        q_network(ATARI, SIX, (64, 64))


def test_refusals():
    with pytest.raises(ValueError, match="cnn must be one of"):
        q_network(ATARI, SIX, (512,), cnn="impala")
    with pytest.raises(ValueError, match="image observation space"):
        ImageEncoder(gym.spaces.Box(-1.0, 1.0, (4, 84, 84)), "nature")
    with pytest.raises(ValueError, match="too small"):
        ImageEncoder(gym.spaces.Box(0, 255, (4, 20, 20), np.uint8), "nature")


def test_is_image_space():
    assert is_image_space(ATARI) and is_image_space(MINATAR)
    assert not is_image_space(gym.spaces.Box(0, 255, (84, 84), np.uint8))
    assert not is_image_space(gym.spaces.Box(0.0, 1.0, (4, 84, 84)))
    assert not is_image_space(gym.spaces.Discrete(3))


def test_categorical_network_takes_a_cnn_body_seeded_as_q_network():
    """categorical_network(..., cnn=...): the CNN body first (seeded from the seed's first
    child, as q_network seeds it), uint8 in, the atoms' logits out; the seed decides."""
    from rlkit.approximators.distributional import categorical_network, noise_off

    seed = np.random.SeedSequence(7)
    net = categorical_network(
        MINATAR, SIX, (128,), n_atoms=11, dueling=True, noisy=True, cnn="minatar", seed=seed
    )
    assert isinstance(net[0], ImageEncoder) and net[0].cnn == "minatar" and net.pixel_input
    dqn = q_network(MINATAR, SIX, (128,), cnn="minatar", seed=np.random.SeedSequence(7))
    for a, b in zip(net[0].parameters(), dqn[0].parameters(), strict=True):
        assert torch.equal(a, b)
    x = torch.randint(0, 2, (3, 4, 10, 10), dtype=torch.uint8)
    assert net(x).shape == (3, 11 * 6)
    again = categorical_network(
        MINATAR, SIX, (128,), n_atoms=11, dueling=True, noisy=True, cnn="minatar", seed=seed
    )
    other = categorical_network(
        MINATAR, SIX, (128,), n_atoms=11, dueling=True, noisy=True, cnn="minatar", seed=8
    )
    with noise_off(net), noise_off(again), noise_off(other):
        assert torch.equal(net(x), again(x)) and not torch.equal(net(x), other(x))
    plain = categorical_network(MINATAR, SIX, (16,), n_atoms=5, cnn="minatar", seed=0)
    assert plain(x[0]).shape == (30,)  # one observation, no batch dimension


def test_categorical_network_refuses_a_cnn_on_a_non_image_box():
    from rlkit.approximators.distributional import categorical_network

    message = r"categorical_network: cnn='minatar' needs image observations.*Box\(-1\.0, 1\.0"
    with pytest.raises(ValueError, match=message):
        categorical_network(gym.spaces.Box(-1, 1, (4,)), SIX, (16,), cnn="minatar")
