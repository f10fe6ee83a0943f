"""Issue 21 item 6: a subprocess worker that dies (SIGKILL) surfaces as SubEnvError naming the
sub-env, its seed, the worker's exit code and what to do (rlkit/envs/vector.py,
vector_group.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import warnings

import numpy as np
import pytest

import rlkit as rk
from rlkit.envs.vector import SubEnvError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")


def killed(index: int = 1) -> rk.VectorGymEnv:
    env = rk.VectorGymEnv("CartPole-v1", 3, backend="subprocess", seed=4)
    env.reset()
    os.kill(env._group.vec.processes[index].pid, signal.SIGKILL)
    return env


def assert_names_the_dead_worker(error: SubEnvError, env: rk.VectorGymEnv, index: int) -> None:
    message = str(error)
    assert message.startswith("VectorGymEnv('CartPole-v1', 3, backend='subprocess'): ")
    assert f"sub-env {index} (seed {env.seeds[index]})" in message
    assert "exit code -9 (killed by SIGKILL)" in message
    assert "Build a new VectorGymEnv" in message and "resume_from" in message


@pytest.mark.parametrize(
    "call",
    [
        lambda env: env.act(np.zeros(3, dtype=np.int64)),
        lambda env: env.reset(),
        lambda env: env.state_dict(),  # a checkpoint reads the workers' states
    ],
    ids=["act", "reset", "state_dict"],
)
def test_a_killed_worker_is_a_sub_env_error(call):
    env = killed(index=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no gymnasium warning about closing
        with pytest.raises(SubEnvError) as error:
            call(env)
    assert_names_the_dead_worker(error.value, env, 1)
    assert isinstance(error.value.__cause__, (EOFError, OSError))  # gymnasium's, kept as cause


def test_a_run_whose_worker_is_killed_raises_the_sub_env_error():
    env = rk.VectorGymEnv("CartPole-v1", 3, backend="subprocess", seed=4)

    def kill(t, policy, env):
        os.kill(env._group.vec.processes[2].pid, signal.SIGKILL)

    hook = rk.DoEveryNSteps(kill, n=10)
    with pytest.raises(SubEnvError, match=r"sub-env 2 \(seed \d+\): its worker process"):
        rk.run(rk.RandomPolicy(seed=0), env, rk.StopAfterNSteps(300), hook)


def test_workers_leave_ctrl_c_to_the_main_process():
    """A terminal's Ctrl-C reaches the whole process group: the workers ignore it, so that the
    main process can stop the run cleanly (and step the env to its end)."""
    code = (
        "import os, signal, numpy as np, rlkit as rk\n"
        "env = rk.VectorGymEnv('CartPole-v1', 2, backend='subprocess', seed=0)\n"
        "env.reset()\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "for p in env._group.vec.processes: os.kill(p.pid, signal.SIGINT)\n"
        "import time; time.sleep(0.3)\n"
        "env.act(np.zeros(2, dtype=np.int64)); env.close(); print('stepped')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "stepped"


def test_building_a_subprocess_env_leaves_ctrl_c_in_this_process_alone():
    before = signal.getsignal(signal.SIGINT)
    env = rk.VectorGymEnv("CartPole-v1", 2, backend="subprocess", seed=0)
    env.reset()
    assert signal.getsignal(signal.SIGINT) is before  # gymnasium builds sub-env 0 here too
    env.close()
