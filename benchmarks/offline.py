"""Offline RL, rlkit beside d3rlpy: the same dataset file, the same hyperparameters, the same
number of gradient steps, several seeds; deterministic returns in the real env side by side and
the wall-time (and CPU-time) ratio rlkit / d3rlpy per algorithm.

The dataset is a "medium" Pendulum one, made once by rlkit and cached (``--data``): the
``SAC_Pendulum`` recipe trained briefly (``--sac-steps``, default 3,000 environment steps: a
policy at a fraction of the expert's return), then its stochastic policy (nothing learning) run
for ``--collect-steps`` transitions (whole 200-step episodes) with ``rk.DatasetRecorder``.

For each algorithm and seed, interleaved (so a change in the shared machine's load touches both
sides alike): rlkit's ``rk.CQL`` / ``rk.IQL`` / ``rk.TD3BC`` / ``rk.BC`` trained by ``rk.run``
on an ``rk.OfflineEnv`` of the dataset for ``--steps`` gradient steps, then d3rlpy's
``CQL`` / ``IQL`` / ``TD3PlusBC`` / ``BC`` for the same steps on the same transitions, in a
subprocess (``offline_d3rlpy_worker.py``) of a virtualenv this script makes on first use
(``benchmarks/.venv-d3rlpy``: ``python -m venv``, CPU torch, ``pip install d3rlpy``; d3rlpy pins
``gymnasium==1.0.0``). Both sides use one torch thread; the time is that of building the
algorithm and its gradient steps (not the process start, the dataset's loading or the
evaluation). Each trained policy is evaluated on ``--eval-episodes`` deterministic episodes of
``Pendulum-v1`` from the same initial states on both sides (``rk.evaluate`` seeded ``10_000 +
seed``; the worker resets its env with the reset seed ``rk.evaluate`` derives from it).

The discrete algorithms (``--algos discrete_cql discrete_bc``) run the same way on a CartPole
dataset (``--discrete-data``; made once when missing: the whole ``--dqn-steps``-step training
run of ``DQN_CartPole``, as ``DiscreteCQL_CartPoleReplay``'s): rlkit's ``rk.DiscreteCQL`` (in a
greedy ``rk.QBasedPolicy``, the recipe's 64-64 Q-network, Adam at 1e-3, batch 64, Huber loss,
double DQN, target synchronised every 500 updates, ``alpha`` 1) beside d3rlpy's
``DiscreteCQL`` (on its double DQN, Huber loss) with the same values, and ``rk.BC`` beside
d3rlpy's ``DiscreteBC`` (cross-entropy plus ``beta = 0.5`` times the logits' squares, 256-256,
Adam at 1e-3, batch 100). ``--d3rlpy-path DIR`` runs the worker with this python and d3rlpy's
packages copied to ``DIR`` (d3rlpy and its dependencies but torch, e.g. from the virtualenv's
site-packages) instead of the virtualenv.

The hyperparameters are rlkit's defaults (d3rlpy's, see ``docs/how-to/offline-rl.md``), named
explicitly on both sides in :data:`ALGOS`: 256-256 ReLU networks, batch 256 (BC: 100, d3rlpy's),
gamma 0.99, tau 0.005, two critics; actions scaled from ``[-2, 2]`` to ``[-1, 1]`` (d3rlpy: a
``MinMaxActionScaler``); TD3+BC's observations standardised (d3rlpy: a
``StandardObservationScaler``). Where the two cannot be made the same: CQL's conservative
``alpha`` is fixed at 1 on both sides (rlkit's default; d3rlpy's default learns it, here
``alpha_learning_rate=0``); ``cql_ln`` is CQL with a layer normalisation in the critics'
hidden layers (rlkit's ``critic_layer_norm=True``: before each ReLU, as Ball et al. 2023 place
it; d3rlpy's ``VectorEncoderFactory(use_layer_norm=True)`` for the critics: after each ReLU, where
d3rlpy places it); BC is rlkit's Gaussian negative log-likelihood (acting with the
mean) beside d3rlpy's default deterministic BC (squared error); the order of the updates within
a step differs as ``docs/how-to/offline-rl.md`` says. Usage::

    python benchmarks/offline.py [--steps 3000] [--seeds 0 1 2] [--algos cql cql_ln iql td3bc
        bc discrete_cql discrete_bc] [--eval-episodes 10] [--data PATH] [--discrete-data PATH]
        [--no-d3rlpy | --d3rlpy-path DIR] [--profile ALGO]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import platform
import pstats
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

import rlkit as rk
from rlkit.core.seeding import int_seed, spawn_seeds

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-d3rlpy"
WORKER = HERE / "offline_d3rlpy_worker.py"
DEFAULT_DATA = HERE / ".offline-data" / "pendulum_medium.npz"
DEFAULT_DISCRETE_DATA = HERE / ".offline-data" / "cartpole_replay.npz"
ENV_ID = "Pendulum-v1"
TORCH_VERSION = "2.13.0"  # the CPU wheel, as .ci/run installs it

_COMMON = {"gamma": 0.99, "tau": 0.005, "hidden": (256, 256)}
_D3_COMMON = {"gamma": 0.99, "tau": 0.005, "hidden": (256, 256), "n_critics": 2}

# name: (rlkit class, rlkit kwargs, batch size, d3rlpy algorithm, d3rlpy config kwargs)
ALGOS: dict[str, tuple[str, dict[str, Any], int, dict[str, Any]]] = {
    "cql": (
        "CQL",
        {**_COMMON, "lr": 3e-4, "actor_lr": 1e-4, "conservative_weight": 5.0,
         "n_action_samples": 10, "cql_alpha": 1.0, "soft_q_backup": False},
        256,
        {**_D3_COMMON, "critic_learning_rate": 3e-4, "actor_learning_rate": 1e-4,
         "temp_learning_rate": 1e-4, "initial_temperature": 1.0, "initial_alpha": 1.0,
         "alpha_learning_rate": 0.0, "conservative_weight": 5.0, "n_action_samples": 10,
         "soft_q_backup": False, "batch_size": 256},
    ),
    "iql": (
        "IQL",
        {**_COMMON, "lr": 3e-4, "actor_lr": 3e-4, "expectile": 0.7, "beta": 3.0,
         "max_weight": 100.0},
        256,
        {**_D3_COMMON, "critic_learning_rate": 3e-4, "actor_learning_rate": 3e-4,
         "expectile": 0.7, "weight_temp": 3.0, "max_weight": 100.0, "batch_size": 256},
    ),
    "td3bc": (
        "TD3BC",
        {**_COMMON, "lr": 3e-4, "alpha": 2.5, "policy_delay": 2, "target_policy_noise": 0.2,
         "target_noise_clip": 0.5, "normalize_observations": True},
        256,
        {**_D3_COMMON, "critic_learning_rate": 3e-4, "actor_learning_rate": 3e-4,
         "alpha": 2.5, "update_actor_interval": 2, "target_smoothing_sigma": 0.2,
         "target_smoothing_clip": 0.5, "standard_observation_scaler": True, "batch_size": 256},
    ),
    "bc": (
        "BC",
        {"lr": 1e-3, "hidden": (256, 256)},
        100,
        {"learning_rate": 1e-3, "hidden": (256, 256), "policy_type": "deterministic",
         "batch_size": 100},
    ),
    "discrete_cql": (
        "DiscreteCQL",
        {"lr": 1e-3, "hidden": (64, 64), "alpha": 1.0, "gamma": 0.99, "double": True,
         "loss": "huber", "target_update_interval": 500},
        64,
        {"learning_rate": 1e-3, "hidden": (64, 64), "alpha": 1.0, "gamma": 0.99,
         "n_critics": 1, "target_update_interval": 500, "batch_size": 64},
    ),
    "discrete_bc": (
        "BC",
        {"lr": 1e-3, "hidden": (256, 256)},
        100,
        {"learning_rate": 1e-3, "hidden": (256, 256), "beta": 0.5, "batch_size": 100},
    ),
}  # fmt: skip
_CQL = ALGOS["cql"]
#: CQL with a layer normalisation in the critics' hidden layers (see the module's text)
ALGOS["cql_ln"] = (_CQL[0], {**_CQL[1], "critic_layer_norm": True}, _CQL[2],
                   {**_CQL[3], "critic_layer_norm": True})  # fmt: skip

#: the environment of each algorithm's dataset (the discrete ones: CartPole)
ENVS = {name: "CartPole-v1" if name.startswith("discrete") else ENV_ID for name in ALGOS}


# ---- the dataset ----


def make_dataset(path: Path, sac_steps: int, collect_steps: int) -> None:
    """Train ``SAC_Pendulum`` for ``sac_steps`` and record ``collect_steps`` transitions of its
    stochastic policy into ``path`` (``rk.DatasetRecorder``)."""
    print(f"making {path}: SAC_Pendulum for {sac_steps} steps, then {collect_steps} transitions")
    experiment = rk.make_experiment("SAC_Pendulum", seed=0, total_steps=sac_steps)
    rk.run(experiment)
    policy = experiment.policy.policy  # the SAC policy, outside its Agent: nothing learns
    path.parent.mkdir(parents=True, exist_ok=True)
    description = f"SAC_Pendulum (seed 0) after {sac_steps} steps, stochastic"
    recorder = rk.DatasetRecorder(path, seed=0, policy_description=description)
    with warnings.catch_warnings():  # "nothing will be learned": collecting, as intended
        warnings.simplefilter("ignore", UserWarning)
        rk.run(policy, rk.GymEnv(ENV_ID, seed=1), rk.StopAfterNSteps(collect_steps), recorder)


def make_discrete_dataset(path: Path, dqn_steps: int) -> None:
    """Record the whole ``dqn_steps``-step training run of ``DQN_CartPole`` (seed 0) into
    ``path``: a "replay" dataset, the kind Tianshou's offline CI trains DiscreteCQL on."""
    print(f"making {path}: DQN_CartPole's {dqn_steps}-step training run recorded")
    experiment = rk.make_experiment("DQN_CartPole", seed=0, total_steps=dqn_steps)
    path.parent.mkdir(parents=True, exist_ok=True)
    description = f"DQN_CartPole (seed 0): its whole {dqn_steps}-step training run"
    recorder = rk.DatasetRecorder(path, seed=0, policy_description=description)
    rk.run(experiment.policy, experiment.env, experiment.stop_condition, recorder)


def describe(dataset: rk.Dataset) -> str:
    returns = dataset.episode_returns()
    return (
        f"{len(dataset)} transitions, {dataset.n_episodes} episodes, return mean "
        f"{returns.mean():.1f} std {returns.std():.1f} min {returns.min():.1f} max "
        f"{returns.max():.1f} ({dataset.policy_description})"
    )


# ---- rlkit ----


def rlkit_policy(algo: str, seed: int) -> tuple[Any, int]:
    name, kwargs, batch_size, _ = ALGOS[algo]
    env = rk.GymEnv(ENVS[algo])
    if name == "DiscreteCQL":
        return discrete_cql(env, seed, **kwargs), batch_size
    return getattr(rk, name)(env, seed=seed, **kwargs), batch_size


def discrete_cql(env: rk.GymEnv, seed: int, *, lr: float, hidden: tuple[int, ...],
                 target_update_interval: int, **kwargs: Any) -> rk.QBasedPolicy:  # fmt: skip
    """``rk.DiscreteCQL`` on a ``hidden`` Q-network trained by Adam at ``lr`` (as the recipe
    ``DiscreteCQL_CartPoleReplay`` builds it), acting greedily."""
    from rlkit.approximators.neural import q_network

    approx = rk.NeuralNetworkApproximator(
        q_network(env.state_space, env.action_space, hidden, seed=seed),
        lambda params: torch.optim.Adam(params, lr=lr),
    )
    target = rk.TargetNetwork(approx, sync_every=target_update_interval)
    learner = rk.DiscreteCQL(approx, target=target, **kwargs)
    return rk.QBasedPolicy(learner, rk.GreedyExplorer(seed=seed))


def rlkit_seed(algo: str, dataset: rk.Dataset, seed: int, steps: int, n_eval: int) -> dict:
    """Train rlkit's ``algo`` for ``steps`` gradient steps; times and evaluation returns."""
    wall, cpu = time.perf_counter(), time.process_time()
    policy, batch_size = rlkit_policy(algo, seed)
    rk.run(policy, rk.OfflineEnv(dataset, batch_size, seed=seed), rk.StopAfterNSteps(steps))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    result = rk.evaluate(policy, rk.GymEnv(ENVS[algo]), n_eval, seed=10_000 + seed)
    return {"wall": wall, "cpu": cpu, "returns": list(result.returns)}


# ---- d3rlpy ----


def ensure_venv(venv: Path) -> Path:
    """The virtualenv's python, made on first use (CPU torch first, then d3rlpy)."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import d3rlpy"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"making {venv} (python -m venv; torch=={TORCH_VERSION}, d3rlpy): a few minutes")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, f"torch=={TORCH_VERSION}"], check=True)
    subprocess.run([*pip, "d3rlpy"], check=True)
    return python


def d3rlpy_seed(
    python: Path,
    algo: str,
    data: Path,
    seed: int,
    steps: int,
    n_eval: int,
    threads: int,
    eval_every: int = 0,
) -> dict:
    """Train d3rlpy's ``algo`` in the virtualenv's worker; its JSON result (with
    ``eval_every``, its ``curve``: the mean return every ``eval_every`` gradient steps)."""
    space = rk.GymEnv(ENVS[algo]).action_space
    job: dict[str, Any] = {
        "dataset": str(data),
        "algo": algo,
        "hyperparameters": ALGOS[algo][3],
        "steps": steps,
        "seed": seed,
        "threads": threads,
        "env_id": ENVS[algo],
        "reset_seed": int_seed(spawn_seeds(10_000 + seed, 2)[0]),  # rk.evaluate's env seed
        "n_episodes": n_eval,
        "eval_every": eval_every,
    }
    if hasattr(space, "low"):  # a Box: d3rlpy scales the actions to [-1, 1] as rlkit does
        job.update(action_low=space.low.tolist(), action_high=space.high.tolist())
    else:
        job["n_actions"] = int(space.n)
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONWARNINGS": "ignore"}
    out = subprocess.run(
        [str(python), str(WORKER)], input=json.dumps(job), capture_output=True, text=True,
        env=env, check=False,
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(f"the d3rlpy worker failed on {algo} seed {seed}:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---- report ----


def _mean_std(values: list[float]) -> str:
    return f"{np.mean(values):8.1f} ± {np.std(values):5.1f}"


def summary(results: dict[str, dict[str, list[dict]]], dataset_means: dict[str, float]) -> None:
    dataset = ", ".join(f"{algo} {mean:.1f}" for algo, mean in dataset_means.items())
    print(f"\nsummary (mean over seeds of each seed's mean return; dataset means: {dataset})")
    header = (
        f"{'algo':6} {'rlkit return':>17} {'d3rlpy return':>17} {'d3rlpy seeds':>19} "
        f"{'within/better':>13} {'wall rlkit/d3':>13} {'cpu rlkit/d3':>12}"
    )
    print(header)
    for algo, sides in results.items():
        ours = [float(np.mean(r["returns"])) for r in sides["rlkit"]]
        line = f"{algo:6} {_mean_std(ours) if ours else 'not run':>17}"
        theirs = [float(np.mean(r["returns"])) for r in sides.get("d3rlpy", [])]
        if theirs and not ours:  # --d3rlpy-only
            line += f" {_mean_std(theirs):>17} [{min(theirs):.1f}, {max(theirs):.1f}]"
        elif theirs:
            wall = sum(r["wall"] for r in sides["rlkit"]) / sum(r["wall"] for r in sides["d3rlpy"])
            cpu = sum(r["cpu"] for r in sides["rlkit"]) / sum(r["cpu"] for r in sides["d3rlpy"])
            ok = "yes" if np.mean(ours) >= min(theirs) else "no"
            spread = f"[{min(theirs):.1f}, {max(theirs):.1f}]"
            line += f" {_mean_std(theirs):>17} {spread:>19} {ok:>13} {wall:13.2f} {cpu:12.2f}"
        print(line, flush=True)


def profile(algo: str, dataset: rk.Dataset, steps: int) -> None:
    """cProfile ``steps`` gradient steps of rlkit's ``algo`` (after 20 warm-up steps)."""
    policy, batch_size = rlkit_policy(algo, 0)
    env = rk.OfflineEnv(dataset, batch_size, seed=0)
    rk.run(policy, env, rk.StopAfterNSteps(20))
    profiler = cProfile.Profile()
    profiler.enable()
    rk.run(policy, env, rk.StopAfterNSteps(steps))
    profiler.disable()
    stream = io.StringIO()
    stats = pstats.Stats(profiler, stream=stream)
    stats.sort_stats("tottime").print_stats(25)
    print(f"\ncProfile of {steps} rlkit {algo} gradient steps (by own time):")
    print(stream.getvalue())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000, help="gradient steps per run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--algos", nargs="+", default=list(ALGOS), choices=list(ALGOS))
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the .npz dataset")
    parser.add_argument(
        "--discrete-data", type=Path, default=DEFAULT_DISCRETE_DATA,
        help="the CartPole .npz dataset of the discrete algorithms",
    )  # fmt: skip
    parser.add_argument("--dqn-steps", type=int, default=10_000)
    parser.add_argument(
        "--d3rlpy-path", type=Path, default=None,
        help="run the worker with this python and d3rlpy's packages (no torch) in this folder",
    )  # fmt: skip
    parser.add_argument("--sac-steps", type=int, default=3000)
    parser.add_argument("--collect-steps", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--venv", type=Path, default=VENV)
    parser.add_argument("--no-d3rlpy", action="store_true", help="rlkit's side only")
    parser.add_argument("--d3rlpy-only", action="store_true", help="d3rlpy's side only")
    parser.add_argument(
        "--eval-every", type=int, default=0,
        help="d3rlpy's side: also evaluate every N gradient steps (its learning curve)",
    )  # fmt: skip
    parser.add_argument("--profile", choices=list(ALGOS), help="profile rlkit's updates only")
    parser.add_argument("--json", type=Path, help="also write the per-seed results there")
    parser.add_argument(
        "--merge", type=Path, nargs="+", metavar="JSON",
        help="only print the summary of the --json files of runs made in parallel",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.steps < 1:
        parser.error(f"--steps must be a positive integer, got {args.steps}")
    if args.eval_every < 0:
        parser.error(f"--eval-every must be 0 (off) or a positive integer, got {args.eval_every}")
    if args.d3rlpy_only and args.no_d3rlpy:
        parser.error("--d3rlpy-only and --no-d3rlpy leave nothing to run; give one of them")
    torch.set_num_threads(args.threads)
    if args.merge:
        merged: dict[str, dict[str, list[dict]]] = {}
        for path in args.merge:
            for algo, sides in json.loads(path.read_text()).items():
                for side, runs in sides.items():
                    merged.setdefault(algo, {}).setdefault(side, []).extend(runs)
        paths = {ENV_ID: args.data, "CartPole-v1": args.discrete_data}
        means = {e: float(rk.Dataset.load(p).episode_returns().mean()) for e, p in paths.items()
                 if any(ENVS[algo] == e for algo in merged)}  # fmt: skip
        summary(merged, {algo: means[ENVS[algo]] for algo in merged})
        return
    paths = {ENV_ID: args.data, "CartPole-v1": args.discrete_data}
    datasets = {}
    for env_id in sorted({ENVS[algo] for algo in args.algos + [args.profile] if algo}):
        path = paths[env_id]
        if not path.exists() and env_id == ENV_ID:
            make_dataset(path, args.sac_steps, args.collect_steps)
        elif not path.exists():
            make_discrete_dataset(path, args.dqn_steps)
        datasets[env_id] = rk.Dataset.load(path)
        print(f"dataset {path}: {describe(datasets[env_id])}")
    if args.profile:
        profile(args.profile, datasets[ENVS[args.profile]], min(args.steps, 300))
        return
    python = None
    if args.d3rlpy_path is not None:  # d3rlpy's packages (no torch) copied to a folder
        python = Path(sys.executable)
        os.environ["PYTHONPATH"] = str(args.d3rlpy_path)
    elif not args.no_d3rlpy:
        python = ensure_venv(args.venv)
    print(
        f"python {platform.python_version()}, torch {torch.__version__}, {args.threads} torch "
        f"thread(s), {args.steps} gradient steps, seeds {args.seeds}, {args.eval_episodes} "
        f"deterministic evaluation episodes; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores at the start",
        flush=True,
    )
    results: dict[str, dict[str, list[dict]]] = {}
    for algo in args.algos:
        sides = results.setdefault(algo, {"rlkit": []})
        for seed in args.seeds:
            dataset = datasets[ENVS[algo]]
            line = f"{algo:6} seed {seed}:"
            ours = None
            if not args.d3rlpy_only:
                ours = rlkit_seed(algo, dataset, seed, args.steps, args.eval_episodes)
                sides["rlkit"].append(ours)
                line += (
                    f" rlkit  return {np.mean(ours['returns']):8.1f} "
                    f"(std {np.std(ours['returns']):6.1f}) wall {ours['wall']:6.1f} s "
                    f"cpu {ours['cpu']:6.1f} s"
                )
            if python is not None:
                data = paths[ENVS[algo]]
                theirs = d3rlpy_seed(
                    python, algo, data, seed, args.steps, args.eval_episodes, args.threads,
                    args.eval_every,
                )  # fmt: skip
                sides.setdefault("d3rlpy", []).append(theirs)
                line += (
                    f"{' |' if ours is not None else ''} d3rlpy {theirs['d3rlpy']} return "
                    f"{np.mean(theirs['returns']):8.1f} "
                    f"(std {np.std(theirs['returns']):6.1f}) wall {theirs['wall']:6.1f} s "
                    f"cpu {theirs['cpu']:6.1f} s"
                )
                if ours is not None:
                    line += f" | wall ratio {ours['wall'] / theirs['wall']:.2f}"
                if args.eval_every:
                    curve = ", ".join(f"{step}: {mean:.1f}" for step, mean in theirs["curve"])
                    line += f"\n  d3rlpy curve: {curve}"
            print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(results))
    means = {env_id: float(d.episode_returns().mean()) for env_id, d in datasets.items()}
    summary(results, {algo: means[ENVS[algo]] for algo in results})
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
