"""Stop anytime, resume, get the same result (issue 4): rlkit/hooks/checkpoint with rk.run.

A run interrupted at step k (by an exception from a hook, or by SIGKILL of its process) and
resumed from its newest checkpoint must end with the same parameters, generator states,
trajectory, environment state and per-episode returns as the uninterrupted run with the same
seed; and ``run(n1)`` then ``run(n2)`` on the same objects must equal ``run(n1 + n2)``.

The subprocess tests run this file as a script (``python test_resume.py child ...``), so the
setups below are plain functions.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rlkit as rk
from rlkit.core.seeding import int_seed, spawn_seeds
from rlkit.core.state import get_state
from rlkit.hooks.checkpoint import (
    CheckpointError,
    CheckpointHook,
    latest_checkpoint,
    list_checkpoints,
    load_checkpoint,
    read_checkpoint,
)

HERE = Path(__file__).resolve()

# ---------------------------------------------------------------------------------------------
# setups: (agent, env) built from a seed, the same way in every process


def tabular(seed: int = 0) -> tuple[Any, Any]:
    """Q-learning on CliffWalking-v1 as in the TabularQLearning_CliffWalking recipe."""
    env_seed, explorer_seed = spawn_seeds(seed, 2)
    env = rk.GymEnv("CliffWalking-v1", seed=int_seed(env_seed))
    q = rk.TabularQApproximator(env.state_space, env.action_space, step_size=0.5)
    learner = rk.TDLearner(q, method="qlearning", gamma=1.0)
    explorer = rk.EpsilonGreedyExplorer(0.1, seed=explorer_seed)
    return rk.Agent(rk.QBasedPolicy(learner, explorer), rk.VectorSARTTrajectory()), env


DQN_STEPS = 2000  # learning starts at 1000, trains every 256 steps: 4 rounds of 128 updates


def dqn(seed: int = 0) -> tuple[Any, Any]:
    """The DQN_CartPole recipe, shortened."""
    exp = rk.make_experiment("DQN_CartPole", seed=seed, total_steps=DQN_STEPS)
    return exp.policy, exp.env


SETUPS = {"tabular": tabular, "dqn": dqn}


class Trap(rk.AbstractHook):
    """At PostAct of step ``at`` (counted by this hook): raise :class:`Boom` (``"raise"``), or
    write ``ready`` and sleep until killed (``"block"``). ``at=None``: never. Its state is empty,
    so a resumed run's trap keeps its own ``at``."""

    def __init__(self, at: int | None = None, what: str = "raise", ready: str = "") -> None:
        self.at, self.what, self.ready, self.t = at, what, ready, 0

    def post_act(self, policy: Any, env: Any) -> None:
        self.t += 1
        if self.t != self.at:
            return
        if self.what == "raise":
            raise Boom(f"trap at step {self.t}")
        Path(self.ready).write_text(str(self.t))
        while True:  # pragma: no cover - killed by the test
            time.sleep(1)

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


class Boom(RuntimeError):
    """The exception a trap raises."""


def chain(folder: Path | str, trap: Trap, **every: int) -> Any:
    """The hook chain of every run here: returns + lengths + trap + checkpoints."""
    return (
        rk.TotalRewardPerEpisode() + rk.StepsPerEpisode() + trap + CheckpointHook(folder, **every)
    )


def run_setup(kind: str, steps: int, folder: Path | str, trap: Trap, resume: bool = False, **every):
    agent, env = SETUPS[kind](0)
    hook = chain(folder, trap, **every)
    rk.run(agent, env, rk.StopAfterNSteps(steps), hook, resume_from=folder if resume else None)
    return agent, env, hook


def assert_same(a: Any, b: Any, path: str = "state") -> None:
    """Exact equality of nested states (arrays: dtype and values; floats: bit for bit)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype, path
        assert torch.equal(a, b), f"{path}: tensors differ"
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype, f"{path}: {b!r:.60}"
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), f"{path}: arrays differ"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{path}: keys {list(a)} {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {a!r:.60} vs {b!r:.60}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), path
    else:
        assert type(a) is type(b) and a == b, f"{path}: {a!r} != {b!r}"


def assert_same_run(run_a: tuple, run_b: tuple) -> None:
    (agent_a, env_a, hook_a), (agent_b, env_b, hook_b) = run_a, run_b
    assert hook_a[0].rewards == hook_b[0].rewards and hook_a[0].current == hook_b[0].current
    assert hook_a[1].steps == hook_b[1].steps
    assert_same(get_state(agent_a), get_state(agent_b), "agent")
    assert_same(get_state(env_a), get_state(env_b), "env")


def needs(kind: str) -> None:
    if kind == "dqn":
        pytest.importorskip("rlkit.learners.value_based.dqn")


# ---------------------------------------------------------------------------------------------
# resume after an exception


@pytest.mark.parametrize(
    "kind, total, every, at",
    [
        ("tabular", 3000, {"every_n_steps": 400}, 2222),
        ("tabular", 3000, {"every_n_episodes": 7}, 2222),
        pytest.param("dqn", DQN_STEPS, {"every_n_steps": 500}, 1700, marks=pytest.mark.slow),
    ],
)
def test_resume_after_an_exception_equals_the_uninterrupted_run(tmp_path, kind, total, every, at):
    needs(kind)
    reference = run_setup(kind, total, tmp_path / "reference", Trap())
    with pytest.raises(Boom):
        run_setup(kind, total, tmp_path / "run", Trap(at), **every)
    newest = latest_checkpoint(tmp_path / "run")
    meta = read_checkpoint(newest)["meta"]
    assert 0 < meta["step"] < at and not meta["finished"]
    if "every_n_steps" in every:
        assert meta["step"] == at // every["every_n_steps"] * every["every_n_steps"]
    else:
        assert meta["episode"] % every["every_n_episodes"] == 0
    resumed = run_setup(kind, total, tmp_path / "run", Trap(), resume=True, **every)
    assert_same_run(resumed, reference)
    assert resumed[2][3].steps == total
    assert read_checkpoint(latest_checkpoint(tmp_path / "run"))["meta"]["finished"]


def test_resume_continues_an_unfinished_episode_without_reset(tmp_path):
    """The checkpoint at step 10 lies in the first episode: resuming must not reset the env."""
    reference = run_setup("tabular", 60, tmp_path / "reference", Trap())
    assert reference[2][1].steps == []  # the first episode lasts longer than 60 steps
    with pytest.raises(Boom):
        run_setup("tabular", 60, tmp_path / "run", Trap(12), every_n_steps=10)
    agent, env = tabular(0)
    info = load_checkpoint(tmp_path / "run", agent, env)
    assert info.step == 10 and not env.done and not env.needs_reset
    assert env.env.unwrapped.s == env.state  # the unwrapped env is where the adapter says
    resumed = run_setup("tabular", 60, tmp_path / "run", Trap(), resume=True, every_n_steps=10)
    assert_same_run(resumed, reference)


def test_stop_exactly_at_the_end_of_an_episode_then_resume(tmp_path):
    """A step-count stop on the last step of an episode: the final checkpoint is taken after
    that episode's PostEpisode, so the resumed run does not lose or repeat it."""
    reference = run_setup("tabular", 2000, tmp_path / "reference", Trap())
    first_two = sum(reference[2][1].steps[:2])
    run_setup("tabular", first_two, tmp_path / "run", Trap())
    meta = read_checkpoint(latest_checkpoint(tmp_path / "run"))["meta"]
    assert (meta["step"], meta["episode"], meta["finished"]) == (first_two, 2, True)
    resumed = run_setup("tabular", 2000, tmp_path / "run", Trap(), resume=True)
    assert_same_run(resumed, reference)


def test_a_checkpoint_due_on_the_last_step_of_an_episode_is_taken_after_post_episode(tmp_path):
    reference = run_setup("tabular", 2000, tmp_path / "reference", Trap())
    length = reference[2][1].steps[0]
    with pytest.raises(Boom):
        run_setup("tabular", 2000, tmp_path / "run", Trap(length + 1), every_n_steps=length)
    payload = read_checkpoint(latest_checkpoint(tmp_path / "run"))
    assert (payload["meta"]["step"], payload["meta"]["episode"]) == (length, 1)
    returns = payload["hooks"][0]["state"]
    assert returns == {"rewards": reference[2][0].rewards[:1], "current": 0.0}
    resumed = run_setup("tabular", 2000, tmp_path / "run", Trap(), resume=True, every_n_steps=99)
    assert_same_run(resumed, reference)


def test_episode_stop_condition_and_experiment_resume(tmp_path):
    """rk.run(experiment, resume_from=...) with the recipe's episode-count stop condition."""
    reference = rk.make_experiment("TabularQLearning_CliffWalking", seed=3, episodes=40)
    rk.run(reference)
    first = rk.make_experiment("TabularQLearning_CliffWalking", seed=3, episodes=25)
    first.hook = first.hook + CheckpointHook(tmp_path, every_n_episodes=10)
    rk.run(first)
    assert [p.name for p in list_checkpoints(tmp_path)][-1].startswith("checkpoint-")
    second = rk.make_experiment("TabularQLearning_CliffWalking", seed=3, episodes=40)
    second.hook = second.hook + CheckpointHook(tmp_path, every_n_episodes=10)
    rk.run(second, resume_from=tmp_path)
    assert second.hook[0].rewards == reference.hook.rewards
    assert second.stop_condition.episodes == 40
    assert_same(get_state(second.policy), get_state(reference.policy))


# ---------------------------------------------------------------------------------------------
# resume after SIGKILL


def _child(kind: str, total: int, folder: str, every: str, block_at: int, ready: str) -> None:
    import torch

    torch.set_num_threads(1)
    run_setup(kind, total, folder, Trap(block_at, "block", ready), **json.loads(every))


def _spawn(*args: Any) -> subprocess.Popen:
    env = dict(os.environ, PYTHONHASHSEED="0")
    return subprocess.Popen(
        [sys.executable, str(HERE), *map(str, args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def _wait_for(path: Path, process: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None:
            output = process.stdout.read().decode() if process.stdout else ""
            pytest.fail(f"child exited with {process.returncode} before {path.name}:\n{output}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"child did not reach {path.name} in {timeout} s")
        time.sleep(0.02)


def _kill(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


@pytest.mark.parametrize(
    "kind, total, every, at",
    [
        ("tabular", 3000, {"every_n_steps": 400}, 2222),
        pytest.param("dqn", DQN_STEPS, {"every_n_steps": 500}, 1700, marks=pytest.mark.slow),
    ],
)
def test_resume_after_sigkill_equals_the_uninterrupted_run(tmp_path, kind, total, every, at):
    needs(kind)
    ready = tmp_path / "ready"
    child = _spawn("child", kind, total, tmp_path / "run", json.dumps(every), at, ready)
    _wait_for(ready, child)
    last = at // every["every_n_steps"] * every["every_n_steps"]
    assert latest_checkpoint(tmp_path / "run").name == f"checkpoint-{last:012d}.safetensors"
    _kill(child)
    reference = run_setup(kind, total, tmp_path / "reference", Trap())
    resumed = run_setup(kind, total, tmp_path / "run", Trap(), resume=True, **every)
    assert_same_run(resumed, reference)


def _child_killed_in_write(folder: str, marker: str) -> None:
    """Checkpoint every 100 steps; the second write stops half-way (and waits to be killed)."""
    import rlkit.hooks.checkpoint.files as checkpoint

    calls = []

    def slow_write(file: Any, data: bytes) -> None:
        calls.append(1)
        if len(calls) < 2:
            file.write(data)
            return
        file.write(data[: len(data) // 2])
        file.flush()
        Path(marker).write_text("writing")
        while True:  # pragma: no cover - killed by the test
            time.sleep(1)

    checkpoint._write_bytes = slow_write
    run_setup("tabular", 1000, folder, Trap(), every_n_steps=100)


def test_a_process_killed_while_writing_leaves_the_previous_checkpoint_loadable(tmp_path):
    marker = tmp_path / "writing"
    child = _spawn("child-write", tmp_path / "run", marker)
    _wait_for(marker, child)
    _kill(child)
    files = sorted(p.name for p in (tmp_path / "run").iterdir())
    assert len(files) == 2 and files[0].startswith(".checkpoint-") and files[0].endswith(".tmp")
    assert files[1] == f"checkpoint-{100:012d}.safetensors"
    with pytest.raises(CheckpointError, match="truncated|corrupt|not an rlkit"):
        read_checkpoint(tmp_path / "run" / files[0])  # the half-written file is refused
    assert latest_checkpoint(tmp_path / "run").name == files[1]
    agent, env = tabular(0)
    assert load_checkpoint(tmp_path / "run", agent, env).step == 100
    # the resumed run cleans up the temporary file and ends like the uninterrupted run
    reference = run_setup("tabular", 1000, tmp_path / "reference", Trap())
    resumed = run_setup("tabular", 1000, tmp_path / "run", Trap(), resume=True, every_n_steps=100)
    assert_same_run(resumed, reference)
    assert not [p for p in (tmp_path / "run").iterdir() if p.name.endswith(".tmp")]


# ---------------------------------------------------------------------------------------------
# run(n1) then run(n2) equals run(n1 + n2)


@pytest.mark.parametrize(
    "kind, n1, n2",
    [
        ("tabular", 1234, 1766),
        ("tabular", 1, 499),
        pytest.param("dqn", 1300, DQN_STEPS - 1300, marks=pytest.mark.slow),
    ],
)
def test_two_runs_on_the_same_objects_equal_one_run(kind, n1, n2):
    needs(kind)
    agent, env = SETUPS[kind](0)
    hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
    rk.run(agent, env, rk.StopAfterNSteps(n1), hook)
    rk.run(agent, env, rk.StopAfterNSteps(n2), hook)
    ref_agent, ref_env = SETUPS[kind](0)
    ref_hook = rk.TotalRewardPerEpisode() + rk.StepsPerEpisode()
    rk.run(ref_agent, ref_env, rk.StopAfterNSteps(n1 + n2), ref_hook)
    assert_same_run((agent, env, hook), (ref_agent, ref_env, ref_hook))


# ---------------------------------------------------------------------------------------------
# hook composition and errors


def test_a_raising_hook_stops_the_run_after_post_experiment_and_keeps_the_last_checkpoint(
    tmp_path,
):
    exits = []
    hook = (
        rk.TotalRewardPerEpisode()
        + Trap(250)
        + rk.DoOnExit(lambda policy, env: exits.append("after the trap"))
        + CheckpointHook(tmp_path, every_n_steps=100, keep_last=2)
    )
    agent, env = tabular(0)
    with pytest.raises(Boom, match="trap at step 250"):
        rk.run(agent, env, rk.StopAfterNSteps(1000), hook)
    assert exits == ["after the trap"]
    assert [p.name for p in list_checkpoints(tmp_path)] == [
        f"checkpoint-{100:012d}.safetensors",
        f"checkpoint-{200:012d}.safetensors",
    ]
    fresh_agent, fresh_env = tabular(0)
    info = load_checkpoint(tmp_path, fresh_agent, fresh_env)
    assert (info.step, info.finished) == (200, False)


def test_resume_into_objects_built_differently_is_refused(tmp_path):
    run_setup("tabular", 50, tmp_path, Trap(), every_n_steps=25)
    agent, _ = tabular(0)
    with pytest.raises(CheckpointError, match="env was a GymEnv, now it is a CountdownLike"):
        load_checkpoint(tmp_path, agent, CountdownLike())
    agent, env = tabular(0)
    hook = rk.TotalRewardPerEpisode() + CheckpointHook(tmp_path)
    with pytest.raises(CheckpointError, match=r"hooks were \['TotalRewardPerEpisode', "):
        rk.run(agent, env, rk.StopAfterNSteps(100), hook, resume_from=tmp_path)
    with pytest.raises(CheckpointError, match="missing does not exist"):
        rk.run(agent, env, rk.StopAfterNSteps(100), resume_from=tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="no checkpoint in"):
        rk.run(agent, env, rk.StopAfterNSteps(100), resume_from=tmp_path / "empty")


class CountdownLike(rk.AbstractEnv):  # an environment that is not a GymEnv
    def __init__(self) -> None:
        pass

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, action: Any) -> None:
        pass

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass


def test_a_policy_without_state_dict_is_rejected_before_the_first_step(tmp_path):
    class Stateless(rk.AbstractPolicy):
        def act(self, env: Any) -> Any:
            raise AssertionError("must not act")

    with pytest.raises(TypeError, match="policy Stateless has no state_dict"):
        rk.run(
            Stateless(), rk.GymEnv("CartPole-v1"), rk.StopAfterNSteps(5), CheckpointHook(tmp_path)
        )


# ---------------------------------------------------------------------------------------------
# the command line: rlkit run NAME --checkpoint-every N --logdir DIR; rlkit resume DIR


def _episodes_csv(run_dir: Path) -> list[list[str]]:
    rows = (run_dir / "episodes.csv").read_text().splitlines()
    return [row.split(",")[:4] for row in rows]  # without the wall-clock column


def test_cli_resume_continues_a_crashed_run_to_the_same_results(tmp_path, monkeypatch, capsys):
    from rlkit import cli

    name = "TabularQLearning_CliffWalking"
    assert cli.main(["run", name, "--seed", "2", "--logdir", str(tmp_path / "ref"), "--quiet"]) == 0
    crash_after = cli.LearningSummary.post_episode

    def crash(self: Any, policy: Any, env: Any) -> None:
        crash_after(self, policy, env)
        if len(self.returns.rewards) == 300:
            raise Boom("crash at episode 300")

    monkeypatch.setattr(cli.LearningSummary, "post_episode", crash)
    args = ["run", name, "--seed", "2", "--checkpoint-every", "1000", "--quiet"]
    with pytest.raises(Boom):
        cli.main([*args, "--logdir", str(tmp_path / "run")])
    monkeypatch.undo()
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert (config["experiment"], config["seed"], config["checkpoint_every"]) == (name, 2, 1000)
    assert cli.main([*args, "--logdir", str(tmp_path / "run")]) == 2  # not over an existing run
    assert "already holds this run" in capsys.readouterr().err
    assert cli.main(["resume", str(tmp_path / "run")]) == 0
    assert "resuming at step" in capsys.readouterr().out
    assert _episodes_csv(tmp_path / "run") == _episodes_csv(tmp_path / "ref")
    assert len(_episodes_csv(tmp_path / "ref")) == 501  # header + 500 episodes
    assert cli.main(["resume", str(tmp_path / "run")]) == 0
    assert "already finished" in capsys.readouterr().out


def test_cli_resume_errors(tmp_path, capsys):
    from rlkit import cli

    assert cli.main(["resume", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
    name = "TD0_RandomWalk1D"
    assert cli.main(["run", name, "--logdir", str(tmp_path / "r"), "--quiet"]) == 0
    assert cli.main(["resume", str(tmp_path / "r")]) == 2
    assert "--checkpoint-every N" in capsys.readouterr().err
    assert cli.main(["run", name, "--checkpoint-every", "0"]) == 2


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "child":
        kind, total, folder, every, block_at, ready = args
        _child(kind, int(total), folder, every, int(block_at), ready)
    elif command == "child-write":
        _child_killed_in_write(*args)
