"""A PPO run killed in a subprocess and resumed from its last checkpoint in another ends with
exactly the parameters of an uninterrupted run."""

import shutil
from pathlib import Path

import pytest
from kill_resume import run, script, straight_killed_resumed

SCRIPT = script(
    """
    env = rk.VectorGymEnv("CartPole-v1", 4, seed=3)
    agent = rk.PPO.agent(env, seed=5, n_steps=16, batch_size=32, n_epochs=2,
                         lr=rk.LinearSchedule(1e-3, 0.0, TOTAL),
                         clip_range=rk.LinearSchedule(0.2, 0.0, TOTAL))
    """,
    """
    for p in agent.policy.model.state_dict().values():
        digest.update(p.numpy().tobytes())
    print(digest.hexdigest(), agent.policy.updates, agent.policy.transitions)
    """,
    total=1024, limit=600, every=128,
)  # fmt: skip


def _run(mode, folder):
    return run(SCRIPT, mode, folder)


@pytest.mark.slow
def test_killed_ppo_run_resumes_bit_exactly(tmp_path):
    straight, resumed = straight_killed_resumed(SCRIPT, tmp_path)
    assert resumed.split() == straight.split()
    assert straight.split()[1:] == ["16", "1024"]


FIXTURE = Path(__file__).parent / "data" / "ppo_rlkit_0_1" / "checkpoint-000000000512.npz"


@pytest.mark.slow
def test_a_checkpoint_written_by_rlkit_0_1_resumes_bit_exactly(tmp_path):
    """The fixture was written by the script's "killed" mode with rlkit 0.1, before the learning
    pipeline (its optimizer state is a GradientStep's). Its numbers are those of the CPU that
    wrote it: another CPU's floating point reaches other parameters by step 512, so no run here
    can end as the fixture's resumed run does there. The test therefore writes this machine's
    step-512 state in rlkit 0.1's layout (the fixture's payload, with the arrays of a checkpoint
    written here by the same run) and resumes that: it must end exactly as a straight run. On
    the fixture's own machine the two checkpoints are the same file's contents."""
    straight = _run("straight", tmp_path / "unused")
    killed = _run("killed", tmp_path / "new")
    assert killed.returncode == 3, killed.stderr
    folder = tmp_path / "ckpt"
    folder.mkdir()
    _write_in_rlkit_0_1_layout(tmp_path / "new" / FIXTURE.name, folder / FIXTURE.name)
    resumed = _run("resume", folder)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.split() == straight.stdout.split()


@pytest.mark.slow
def test_the_rlkit_0_1_fixture_itself_loads_and_runs_to_the_end(tmp_path):
    folder = tmp_path / "ckpt"
    shutil.copytree(FIXTURE.parent, folder)
    resumed = _run("resume", folder)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.split()[1:] == ["16", "1024"]


def _write_in_rlkit_0_1_layout(fresh: Path, target: Path) -> None:
    """``fresh``'s arrays under the fixture's (rlkit 0.1) payload, signed as rlkit signs."""
    import json

    import numpy as np

    from rlkit.hooks.checkpoint.format import _JSON_KEY, FORMAT, VERSION, _digest

    def header_and_arrays(path):
        with np.load(path) as archive:
            arrays = {name: archive[name] for name in archive.files}
        return json.loads(arrays.pop(_JSON_KEY).tobytes().decode("utf-8")), arrays

    old_header, old_arrays = header_and_arrays(FIXTURE)
    new_header, arrays = header_and_arrays(fresh)
    layout = {name: (a.dtype, a.shape) for name, a in old_arrays.items()}
    assert layout == {name: (a.dtype, a.shape) for name, a in arrays.items()}
    body = old_header["payload"]
    assert json.loads(body)["meta"]["step"] == json.loads(new_header["payload"])["meta"]["step"]
    text = json.dumps(
        {"format": FORMAT, "version": VERSION, "sha256": _digest(body, arrays), "payload": body}
    )
    header = np.frombuffer(text.encode("utf-8"), np.uint8)
    np.savez(target, **{_JSON_KEY: header}, **arrays)


def _params(policy):
    return [p.detach().clone() for p in policy.model.state_dict().values()]


@pytest.mark.parametrize("other", ["VPG", "A2C"])
def test_another_algorithms_checkpoint_is_refused_and_changes_nothing(tmp_path, other):
    # PPO's, VPG's and A2C's states have the same keys and shapes: VPG (Adam too) loaded a PPO
    # checkpoint silently, A2C loaded it and failed at its next update (KeyError 'square_avg')
    import torch

    import rlkit as rk
    from rlkit.hooks.checkpoint import CheckpointError, CheckpointHook

    env = rk.GymEnv("CartPole-v1", seed=0)
    agent = rk.PPO.agent(env, seed=0, n_steps=8, batch_size=8)
    rk.run(agent, env, rk.StopAfterNSteps(16), CheckpointHook(tmp_path, every_n_steps=16))
    env = rk.GymEnv("CartPole-v1", seed=1)
    agent = getattr(rk, other).agent(env, seed=1, n_steps=8)
    before = _params(agent.policy)
    with pytest.raises(CheckpointError, match=f"{other}.load_state_dict: .* saved by PPO"):
        rk.run(agent, env, rk.StopAfterNSteps(32), resume_from=tmp_path)
    assert all(torch.equal(a, b) for a, b in zip(before, _params(agent.policy), strict=True))
    assert agent.policy.transitions == 0
