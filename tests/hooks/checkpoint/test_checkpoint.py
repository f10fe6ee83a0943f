"""rlkit/core/checkpoint.py and rlkit/core/state.py: the file format, safe loading, the state of
environments, random policies and agents, and CheckpointHook's schedule. (Resume equivalence of
whole runs is in test_resume.py.)"""

from __future__ import annotations

import io
import json
import math
import pickle
import zipfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import rlkit as rk
from rlkit.core.state import attribute_state, get_state, load_attribute_state, set_state
from rlkit.hooks.checkpoint import (
    VERSION,
    CheckpointError,
    CheckpointHook,
    decode_state,
    encode_state,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    read_checkpoint,
    save_checkpoint,
)

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


# ---------------------------------------------------------------------------------------------
# encoding


def test_encode_decode_round_trip_keeps_types_and_dtypes():
    state = rich_state()
    tree, arrays = encode_state(state)
    json.dumps(tree, allow_nan=False)  # the tree is strict JSON
    assert_same(decode_state(tree, arrays), state)


def test_values_that_are_not_checkpoint_data_are_refused_with_their_path():
    with pytest.raises(CheckpointError, match=r"state\.learner\.f: values of type function"):
        encode_state({"learner": {"f": lambda x: x}})
    with pytest.raises(CheckpointError, match=r"state\[1\]: numpy arrays of dtype object"):
        encode_state([1, np.array([None, 1], dtype=object)])


@pytest.mark.parametrize("fmt", FORMATS)
def test_file_round_trip_in_both_formats(tmp_path, fmt):
    policy, env = Holder(rich_state()), Holder({"x": np.arange(3)})
    path = save_checkpoint(
        tmp_path / "c", policy, env, step=5, episode=1, metadata={"seed": 3}, format=fmt
    )
    assert path.read_bytes()[:4] == (b"PK\x03\x04" if fmt == "npz" else path.read_bytes()[:4])
    payload = read_checkpoint(path)
    assert payload["meta"]["step"] == 5 and payload["meta"]["metadata"] == {"seed": 3}
    assert_same(payload["policy"]["state"], rich_state())
    restored = Holder(None)
    info = load_checkpoint(path, restored, Holder(None))
    assert_same(restored.state, rich_state())
    assert (info.step, info.episode, info.finished) == (5, 1, False)


class Holder:
    """An object whose whole state is ``self.state``."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def state_dict(self) -> Any:
        return self.state

    def load_state_dict(self, state: Any) -> None:
        self.state = state


# ---------------------------------------------------------------------------------------------
# generators and plain attributes (state.py)


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


# ---------------------------------------------------------------------------------------------
# environments, random policies, agents


def _play(env: rk.GymEnv, actions: list) -> list:
    seen = []
    for a in actions:
        if env.done or env.needs_reset:
            env.reset()
        env.act(a)
        seen.append((_plain(env.state), env.reward, env.is_terminated, env.is_truncated))
    return seen


def _plain(x: Any) -> Any:
    return x.tolist() if isinstance(x, np.ndarray) else x


@pytest.mark.parametrize(
    "env_id, kwargs", [("CartPole-v1", {}), ("CliffWalking-v1", {}), ("Blackjack-v1", {}),
                       ("FrozenLake-v1", {}), ("MountainCar-v0", {"max_episode_steps": 30})]
)  # fmt: skip
def test_gym_env_state_round_trip_mid_episode(env_id, kwargs):
    env = rk.GymEnv(env_id, seed=1, **kwargs)
    actions = [int(a) for a in np.random.default_rng(0).integers(env.action_space.n, size=300)]
    _play(env, actions[:17])
    saved = encode_state(get_state(env))  # through the file encoding, as a checkpoint does
    expected = _play(env, actions[17:])
    fresh = rk.GymEnv(env_id, seed=1, **kwargs)
    set_state(fresh, decode_state(*saved))
    assert _play(fresh, actions[17:]) == expected


def test_gym_env_state_before_the_first_reset_keeps_the_pending_seed():
    env = rk.GymEnv("CartPole-v1", seed=4)
    fresh = rk.GymEnv("CartPole-v1")
    set_state(fresh, get_state(env))
    env.reset()
    fresh.reset()
    assert np.array_equal(env.state, fresh.state)


def test_gym_env_state_restores_time_limit_and_space_generators():
    env = rk.GymEnv("CartPole-v1", seed=0)
    env.reset()
    env.action_space.seed(3)
    for _ in range(5):
        env.act(0)
    state = get_state(env)
    assert state["layers"][0]["attributes"]["values"]["_elapsed_steps"] == 5
    fresh = rk.GymEnv("CartPole-v1")
    set_state(fresh, state)
    assert fresh.env._elapsed_steps == 5
    assert [env.action_space.sample() for _ in range(5)] == [
        fresh.action_space.sample() for _ in range(5)
    ]


def test_gym_env_refuses_a_different_wrapper_chain():
    env = rk.GymEnv("CartPole-v1", seed=0)
    other = rk.GymEnv(gym.make("CartPole-v1").unwrapped)
    with pytest.raises(ValueError, match="wrapper chain"):
        set_state(other, get_state(env))


@pytest.mark.parametrize("env_id", ["CartPole-v1", "MountainCarContinuous-v0"])
def test_random_policy_round_trip(env_id):
    env = rk.GymEnv(env_id, seed=0)
    env.reset()
    policy = rk.RandomPolicy(seed=0)
    policy(env)
    saved = decode_state(*encode_state(get_state(policy)))
    expected = [_plain(policy(env)) for _ in range(5)]
    fresh = rk.RandomPolicy(seed=123)
    set_state(fresh, saved)
    assert [_plain(fresh(env)) for _ in range(5)] == expected


def test_agent_state_is_the_policy_and_the_trajectory():
    agent = rk.Agent(rk.RandomPolicy(seed=0), rk.VectorSARTTrajectory())
    rk.run(agent, rk.GymEnv("Blackjack-v1", seed=0), rk.StopAfterNSteps(10))
    state = decode_state(*encode_state(get_state(agent)))
    assert set(state) == {"policy", "trajectory"}
    assert isinstance(state["trajectory"]["state"][0], tuple)  # tuple observations stay tuples
    fresh = rk.Agent(rk.RandomPolicy(seed=1), rk.VectorSARTTrajectory())
    set_state(fresh, state)
    assert_same(get_state(fresh), get_state(agent))


# ---------------------------------------------------------------------------------------------
# safe loading: corrupt, truncated, foreign and malicious files


def _good_checkpoint(folder: Path, fmt: str = "safetensors") -> Path:
    return save_checkpoint(
        folder / f"checkpoint-{1:012d}.{fmt}",
        Holder({"w": np.arange(10.0)}),
        Holder({}),
        step=1,
        format=fmt,
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_truncated_and_corrupt_files_are_refused_naming_the_file(tmp_path, fmt):
    data = _good_checkpoint(tmp_path, fmt).read_bytes()
    bad = tmp_path / "bad"
    for cut in (0, 5, 8, 30, len(data) // 2, len(data) - 1):
        bad.write_bytes(data[:cut])
        with pytest.raises(CheckpointError, match=f"{bad}.*(truncated|corrupt|not an rlkit)"):
            read_checkpoint(bad)
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF
    bad.write_bytes(bytes(flipped))
    with pytest.raises(CheckpointError, match=str(bad)):
        read_checkpoint(bad)


def test_an_incompatible_version_is_refused(tmp_path):
    path = _good_checkpoint(tmp_path)
    data = path.read_bytes()
    newer = data.replace(b'\\"version\\": 1', f'\\"version\\": {VERSION + 1}'.encode())
    assert newer != data
    path.write_bytes(newer)
    with pytest.raises(CheckpointError, match=r"version 2 is not supported.*newer rlkit"):
        read_checkpoint(path)


def test_foreign_files_are_refused(tmp_path):
    import safetensors.numpy

    plain = tmp_path / "plain.safetensors"
    plain.write_bytes(safetensors.numpy.save({"w": np.zeros(2)}))
    with pytest.raises(CheckpointError, match="without rlkit metadata"):
        read_checkpoint(plain)
    npz = tmp_path / "plain.npz"
    np.savez(npz, w=np.zeros(2))
    with pytest.raises(CheckpointError, match="not an rlkit checkpoint"):
        read_checkpoint(npz)
    text = tmp_path / "notes.txt"
    text.write_text("hello world, this is not a checkpoint")
    with pytest.raises(CheckpointError, match="not an rlkit checkpoint"):
        read_checkpoint(text)


class _Payload:
    """Unpickling this creates the marker file (arbitrary code execution)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').close()",)


def _malicious_files(folder: Path, marker: Path) -> dict[str, Path]:
    files = {}
    raw = folder / f"checkpoint-{10:012d}.safetensors"  # named like a checkpoint
    raw.write_bytes(pickle.dumps({"policy": _Payload(marker)}))
    files["pickle"] = raw
    npz = folder / "objects.npz"
    objects = np.empty(1, dtype=object)
    objects[0] = _Payload(marker)
    buffer = io.BytesIO()
    np.savez(buffer, __rlkit__=np.frombuffer(b"{}", np.uint8), a0=objects)
    npz.write_bytes(buffer.getvalue())
    files["npz"] = npz
    pt = folder / "model.pt"
    torch.save({"policy": _Payload(marker)}, pt)
    files["torch"] = pt
    return files


def test_the_malicious_payloads_would_run_code_if_unpickled(tmp_path):
    """The check of the test itself: these files do execute code when unpickled."""
    marker = tmp_path / "pwned"
    files = _malicious_files(tmp_path, marker)
    pickle.loads(files["pickle"].read_bytes())
    assert marker.exists()
    marker.unlink()
    np.load(files["npz"], allow_pickle=True)["a0"]
    assert marker.exists()


@pytest.mark.parametrize("kind", ["pickle", "npz", "torch"])
def test_a_checkpoint_whose_pickle_would_run_code_is_refused(tmp_path, kind):
    marker = tmp_path / "pwned"
    path = _malicious_files(tmp_path, marker)[kind]
    with pytest.raises(CheckpointError, match=f"{path.name}.*(pickle|not an rlkit)") as error:
        read_checkpoint(path)
    assert "pickle" in str(error.value)
    with pytest.raises(CheckpointError):
        load_checkpoint(path, Holder(None), Holder(None))
    if kind == "pickle":  # also when found as the newest checkpoint of a folder
        with pytest.raises(CheckpointError, match="pickle"):
            load_checkpoint(tmp_path, Holder(None), Holder(None))
    assert not marker.exists()


def test_torch_files_in_an_npz_named_checkpoint_are_refused(tmp_path):
    path = tmp_path / "zipped.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("archive/data.pkl", pickle.dumps([1]))
    with pytest.raises(CheckpointError, match="torch.save files are refused"):
        read_checkpoint(path)


# ---------------------------------------------------------------------------------------------
# CheckpointHook


def test_checkpoint_hook_arguments_are_checked():
    with pytest.raises(ValueError, match="every_n_steps must be a positive integer"):
        CheckpointHook("x", every_n_steps=0)
    with pytest.raises(ValueError, match="keep_last must be a positive integer"):
        CheckpointHook("x", keep_last=-1)
    with pytest.raises(ValueError, match="format must be"):
        CheckpointHook("x", format="pickle")
    with pytest.raises(ValueError, match="metadata must be JSON"):
        CheckpointHook("x", metadata={"f": print})


def test_counts_environment_steps_and_episodes_and_keeps_the_last_k(tmp_path):
    hook = CheckpointHook(tmp_path, every_n_steps=30, keep_last=2)
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(100), hook)
    assert hook.steps == 100
    assert [p.name for p in list_checkpoints(tmp_path)] == [
        f"checkpoint-{90:012d}.safetensors",
        f"checkpoint-{100:012d}.safetensors",  # the final checkpoint
    ]
    assert read_checkpoint(latest_checkpoint(tmp_path))["meta"]["finished"] is True
    episodes = CheckpointHook(tmp_path / "e", every_n_episodes=2, keep_last=None, format="npz")
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNEpisodes(5),
           episodes)  # fmt: skip
    saved = [read_checkpoint(p)["meta"]["episode"] for p in list_checkpoints(tmp_path / "e")]
    assert saved == [2, 4, 5] and episodes.episodes == 5


def test_checkpoint_hook_outside_rk_run_says_so(tmp_path):
    hook = CheckpointHook(tmp_path)
    with pytest.raises(RuntimeError, match="not attached to a run"):
        hook(rk.PRE_EXPERIMENT_STAGE, None, None)


def test_stale_temporary_files_are_removed_and_never_loaded(tmp_path):
    stale = tmp_path / ".checkpoint-123.456.tmp"
    stale.write_bytes(b"half a checkpoint")
    assert latest_checkpoint(tmp_path) is None
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(3),
           CheckpointHook(tmp_path))  # fmt: skip
    assert not stale.exists() and latest_checkpoint(tmp_path) is not None


def test_user_hooks_without_state_dict_are_saved_by_their_plain_attributes(tmp_path):
    class CountSteps(rk.AbstractHook):
        def __init__(self) -> None:
            self.steps, self.sink = 0, open(tmp_path / "log", "w")  # noqa: SIM115

        def post_act(self, policy: Any, env: Any) -> None:
            self.steps += 1

    counter = CountSteps()
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(7),
           counter + CheckpointHook(tmp_path))  # fmt: skip
    fresh = CountSteps()
    load_checkpoint(tmp_path, rk.RandomPolicy(), rk.GymEnv("CartPole-v1"), None,
                    fresh + CheckpointHook(tmp_path))  # fmt: skip
    assert fresh.steps == 7
    counter.sink.close()
    fresh.sink.close()


def test_global_torch_generator_is_saved_and_restored(tmp_path):
    torch.manual_seed(5)
    save_checkpoint(tmp_path / "c", Holder({}), Holder({}))
    expected = torch.rand(3)
    torch.manual_seed(6)
    load_checkpoint(tmp_path / "c", Holder(None), Holder(None))
    assert torch.equal(torch.rand(3), expected)


def test_without_safetensors_checkpoints_fall_back_to_npz(tmp_path, monkeypatch):
    import rlkit.hooks.checkpoint.format as checkpoint_format

    monkeypatch.setattr(checkpoint_format, "_safetensors", lambda: None)
    hook = CheckpointHook(tmp_path, every_n_steps=5)
    rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNSteps(12), hook)
    assert latest_checkpoint(tmp_path).name == f"checkpoint-{12:012d}.npz"
    assert load_checkpoint(tmp_path, rk.RandomPolicy(), rk.GymEnv("CartPole-v1")).step == 12
    with pytest.raises(CheckpointError, match=r"pip install safetensors"):
        save_checkpoint(tmp_path / "x", Holder({}), Holder({}), format="safetensors")
