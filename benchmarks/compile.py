"""Eager against ``compile=True`` (rlkit/learners/compiled.py), one torch thread, per seed.

For each case and seed, in one process: the recipe built twice (``compile=False`` and
``compile=True``, the same seed), each trained for the same short budget, then measured:

* ``first``: the time of the warm-up run, which reaches the first gradient steps; for the
  compiled learner it holds the compilation (``compile`` = its first minus the eager one's, the
  extra time compilation took; inductor compiles C++ in worker processes, so wall time);
* ``train/step``: CPU time of a further training run (environment steps, acting and
  gradient steps) per gradient step;
* ``update``: for SAC and TD3, the CPU time of ``update(policy, batch)`` alone on replay batches
  (the loss, backward, Adam steps and target networks), per gradient step.

Then the ratios compiled / eager, and the break-even: the number of gradient steps after which
compiling has paid for its compile time (``compile / (eager - compiled per step)``), to compare
with a run of 100k gradient steps. Targets (issue 28) on the CPU: update ratio <= 0.7 for SAC
and TD3; training with compile time <= eager for runs of 100k gradient steps or more.

``--floor`` measures, for SAC and TD3, the share of eager's update time spent in matrix
products instead: every ``mm``/``addmm``/``bmm`` of two eager updates is recorded (shapes and
strides) and replayed alone, in the same process, interleaved with eager updates. No compiler
that keeps the arithmetic (and the BLAS kernels, which inductor calls too) can bring an update
under that share of eager's time.

``--cache`` measures inductor's on-disk cache instead: the same compiled warm-up run in two fresh
processes sharing a new ``TORCHINDUCTOR_CACHE_DIR``; the second reuses the first's compiled
graphs. ``--device cuda --quick``: SAC and TD3 on Pendulum only (no MuJoCo needed), fewer steps,
eager against compiled with CUDA graphs (``mode="reduce-overhead"``) on the same GPU. Usage::

    python benchmarks/compile.py [--seeds 1] [--cases SAC_Pendulum TD3_Pendulum ...]
    python benchmarks/compile.py --device cuda --quick
    python benchmarks/compile.py --cache SAC_Pendulum
    python benchmarks/compile.py --floor --cases SAC_Pendulum TD3_Pendulum
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any

import torch

import rlkit as rk

# recipe -> (overrides making a short run, warm-up budget, timed budget), in env steps
CASES: dict[str, tuple[dict[str, Any], int, int]] = {
    "PPO_CartPole": ({}, 512, 2048),
    "DQN_CartPole": ({"learning_starts": 500}, 1200, 1200),
    "SAC_Pendulum": ({"learning_starts": 100}, 110, 200),
    "TD3_Pendulum": ({"learning_starts": 100}, 110, 200),
    "SAC_HalfCheetah": ({"learning_starts": 100}, 110, 200),
}
QUICK = ("SAC_Pendulum", "TD3_Pendulum")
UPDATE_ONLY = ("SAC_Pendulum", "TD3_Pendulum", "SAC_HalfCheetah")


def learner(experiment: rk.Experiment) -> Any:
    """The object that counts gradient steps (a built policy, or a DQN learner)."""
    policy = experiment.policy.policy
    return getattr(policy, "learner", policy)


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def measure(
    name: str, seed: int, compile: bool, device: str, scale: float, extra: dict | None = None  # noqa: A002
) -> dict:
    """``first`` (wall s), ``step`` (CPU s per gradient step in training), ``update`` (CPU s
    per gradient step of update alone, or None)."""
    overrides, warm, timed = CASES[name]
    warm, timed = int(warm), max(int(timed * scale), 10)
    experiment = rk.make_experiment(
        name, seed, total_steps=warm + timed, compile=compile, device=device,
        **{**overrides, **(extra or {})},
    )  # fmt: skip
    agent, env = experiment.policy, experiment.env
    start = time.perf_counter()
    rk.run(agent, env, rk.StopAfterNSteps(warm))
    sync(device)
    first = time.perf_counter() - start
    counter = learner(experiment)
    before, cpu, wall = counter.gradient_steps, time.process_time(), time.perf_counter()
    rk.run(agent, env, rk.StopAfterNSteps(timed))
    sync(device)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    steps = max(counter.gradient_steps - before, 1)
    update = None
    if name in UPDATE_ONLY:
        policy, replay = agent.policy, agent.trajectory
        batches = [policy._replay_batch(replay) for _ in range(max(int(100 * scale), 20))]
        sync(device)
        t_cpu, t_wall = time.process_time(), time.perf_counter()
        for batch in batches:
            rk.update(policy, batch)
        sync(device)
        t_cpu, t_wall = time.process_time() - t_cpu, time.perf_counter() - t_wall
        update = (t_wall if device.startswith("cuda") else t_cpu) / len(batches)
    env.close() if hasattr(env, "close") else None
    per_step = (wall if device.startswith("cuda") else cpu) / steps
    return {"first": first, "step": per_step, "update": update}


def compare(name: str, seed: int, device: str, scale: float, extra: dict) -> None:
    eager = measure(name, seed, False, device, scale, extra)
    compiled = measure(name, seed, True, device, scale, extra)
    compile_s = compiled["first"] - eager["first"]
    line = (
        f"{name} seed {seed}: compile {compile_s:.1f} s; train/step eager "
        f"{eager['step'] * 1e3:.2f} ms, compiled {compiled['step'] * 1e3:.2f} ms, ratio "
        f"{compiled['step'] / eager['step']:.2f}"
    )
    if eager["update"] is not None:
        line += (
            f"; update eager {eager['update'] * 1e3:.2f} ms, compiled "
            f"{compiled['update'] * 1e3:.2f} ms, ratio {compiled['update'] / eager['update']:.2f}"
        )
    gain = eager["step"] - compiled["step"]
    if gain > 0:
        even = compile_s / gain
        line += f"; break-even after {even:,.0f} gradient steps"
        line += " (pays within 100k)" if even <= 100_000 else " (does not pay within 100k)"
    else:
        line += "; compiled is not faster per step: never pays"
    print(line, flush=True)


_MATMULS = ("mm.default", "addmm.default", "bmm.default")


def matmul_floor(name: str, extra: dict) -> None:
    """Eager update time against the time of its matrix products replayed alone (module
    docstring), five interleaved repetitions."""
    from torch.utils._python_dispatch import TorchDispatchMode

    overrides, warm, _ = CASES[name]
    experiment = rk.make_experiment(
        name, 0, total_steps=10 * warm, **{**overrides, **extra}
    )  # fmt: skip
    agent = experiment.policy
    rk.run(agent, experiment.env, rk.StopAfterNSteps(warm))
    policy, replay = agent.policy, agent.trajectory
    calls = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            if str(func).removeprefix("aten.") in _MATMULS:
                calls.append((func, [(a.shape, a.stride()) if torch.is_tensor(a) else a
                                     for a in args]))  # fmt: skip
            return func(*args, **(kwargs or {}))

    def strided(shape: Any, stride: Any) -> torch.Tensor:
        size = sum((n - 1) * s for n, s in zip(shape, stride, strict=True)) + 1
        return torch.as_strided(torch.randn(size), shape, stride)

    with Record():
        for _ in range(2):  # two updates: TD3's actor steps every other one
            rk.update(policy, policy._replay_batch(replay))
    replayed = [(f, [strided(*a) if isinstance(a, tuple) else a for a in args])
                for f, args in calls]  # fmt: skip
    for _ in range(5):
        batches = [policy._replay_batch(replay) for _ in range(40)]
        start = time.process_time()
        for batch in batches:
            rk.update(policy, batch)
        eager = (time.process_time() - start) / len(batches)
        start = time.process_time()
        for _ in range(20):
            for func, args in replayed:
                func(*args)
        products = (time.process_time() - start) / 40
        print(f"{name}: eager update {eager * 1e3:.2f} ms, its {len(calls) // 2} matrix products "
              f"alone {products * 1e3:.2f} ms, share {products / eager:.2f}", flush=True)


def cache_check(name: str) -> None:
    """The compiled warm-up run in two fresh processes sharing a new inductor cache."""
    with tempfile.TemporaryDirectory(prefix="rlkit-inductor-") as folder:
        env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": folder}
        times = []
        for run in ("cold", "warm"):
            out = subprocess.run(
                [sys.executable, __file__, "--first-only", name], env=env, capture_output=True,
                text=True, check=True,
            )  # fmt: skip
            times.append(float(out.stdout.strip().splitlines()[-1]))
            print(f"{name}: compiled warm-up run with a {run} cache: {times[-1]:.1f} s", flush=True)
        print(f"{name}: the cache saves {times[0] - times[1]:.1f} s of {times[0]:.1f} s "
              f"(TORCHINDUCTOR_CACHE_DIR={folder})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--quick", action="store_true", help="SAC and TD3 on Pendulum, short")
    parser.add_argument("--cache", metavar="CASE", choices=list(CASES), default=None)
    parser.add_argument("--floor", action="store_true", help="matrix products' share (SAC, TD3)")
    parser.add_argument("--hidden", default=None, help="hidden layers of every case, e.g. 64,64")
    parser.add_argument("--first-only", metavar="CASE", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(1)
    extra = {} if args.hidden is None else {"hidden": tuple(map(int, args.hidden.split(",")))}
    if args.first_only:  # a subprocess of --cache: the compiled warm-up run's wall time
        print(measure(args.first_only, 0, True, args.device, 0.1)["first"])
        return
    print(f"torch {torch.__version__}, Python {platform.python_version()}, "
          f"{platform.processor() or platform.machine()}, device {args.device}, 1 torch thread"
          + ("" if args.hidden is None else f", hidden {args.hidden}"))
    if args.device.startswith("cuda"):
        print(f"GPU: {torch.cuda.get_device_name()}")
    print(f"load average before: {os.getloadavg()}", flush=True)
    if args.cache:
        cache_check(args.cache)
    elif args.floor:
        for name in [c for c in args.cases if c in UPDATE_ONLY]:
            matmul_floor(name, extra)
    else:
        cases = [c for c in args.cases if c in QUICK] if args.quick else args.cases
        scale = 0.5 if args.quick else 1.0
        for name in cases:
            for seed in range(args.seeds):
                try:
                    compare(name, seed, args.device, scale, extra)
                except Exception:  # noqa: BLE001 - report the case and go on with the others
                    print(f"{name} seed {seed}: FAILED", flush=True)
                    traceback.print_exc()
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
