"""The d3rlpy side of ``benchmarks/offline.py``: run inside the virtualenv that script makes
(d3rlpy pins ``gymnasium==1.0.0``), never imported by rlkit.

Reads a job (JSON on stdin: the ``.npz`` dataset written by ``rk.Dataset.save``, the algorithm,
its hyperparameters, the number of gradient steps, the seed, the evaluation env and its reset
seed), trains d3rlpy's algorithm on the same transitions with one torch thread, evaluates it
deterministically in the real env and prints one JSON line: the wall and CPU seconds of
``create`` + ``fit`` and the evaluation returns. With ``eval_every`` in the job it also evaluates
every ``eval_every`` gradient steps (the same episodes; the result's ``curve`` lists ``(step,
mean return)``; those evaluations' CPU time is left out of ``cpu``, not of ``wall``).

The transitions are exactly the dataset's: d3rlpy's episodes take their next observations from
the following row, and drop the last step of an episode that did not terminate (it has no next
row). So each episode is given to d3rlpy with its final ``next_observation`` appended as one
more row (zero action and reward, never a transition's start): an episode of ``T`` transitions
(truncated) is then ``T + 1`` rows, and d3rlpy's ``T`` transitions are the dataset's ``T``, each
with its real next observation. A terminated episode's last next observation is not used
(d3rlpy bootstraps nothing from it), so it is given as is. Usage (from ``offline.py``)::

    echo '{"dataset": "...", "algo": "cql", ...}' | .venv-d3rlpy/bin/python offline_d3rlpy_worker.py
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import numpy as np


def episodes(data: Any) -> list[tuple[int, int]]:
    """(start, end) row ranges of the dataset's episodes: each ends at a termination or a
    truncation."""
    ends = np.flatnonzero(data["terminations"] | data["truncations"]) + 1
    if len(ends) == 0 or ends[-1] != len(data["rewards"]):
        ends = np.append(ends, len(data["rewards"]))
    starts = np.concatenate([[0], ends[:-1]])
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def mdp_dataset(data: Any, discrete: bool, n_actions: int | None = None) -> Any:
    """d3rlpy's ``MDPDataset`` holding exactly the dataset's transitions (module docstring)."""
    import d3rlpy

    obs, act, rew, term, trunc = [], [], [], [], []
    for start, end in episodes(data):
        o = data["observations"][start:end]
        a = data["actions"][start:end]
        r = data["rewards"][start:end]
        t = data["terminations"][start:end]
        if t[-1]:  # terminated: d3rlpy keeps all T transitions, the last one bootstrapping nothing
            obs.append(o), act.append(a), rew.append(r)
            term.append(t.astype(np.float32)), trunc.append(np.zeros(len(o), np.float32))
            continue
        obs.append(np.concatenate([o, data["next_observations"][end - 1 : end]]))
        act.append(np.concatenate([a, np.zeros_like(a[:1])]))
        rew.append(np.concatenate([r, np.zeros(1, r.dtype)]))
        term.append(np.zeros(len(o) + 1, np.float32))
        trunc.append(np.concatenate([np.zeros(len(o), np.float32), np.ones(1, np.float32)]))
    space = d3rlpy.ActionSpace.DISCRETE if discrete else d3rlpy.ActionSpace.CONTINUOUS
    actions = np.concatenate(act)
    return d3rlpy.dataset.MDPDataset(
        observations=np.concatenate(obs).astype(np.float32),
        actions=actions.reshape(-1, 1) if discrete else actions.astype(np.float32),
        rewards=np.concatenate(rew).astype(np.float32),
        terminals=np.concatenate(term),
        timeouts=np.concatenate(trunc),
        action_space=space,
        action_size=n_actions,
    )


def make_algo(job: dict) -> Any:
    """d3rlpy's algorithm with the job's hyperparameters (``offline.py`` maps rlkit's onto these
    names)."""
    import d3rlpy

    hp = dict(job["hyperparameters"])
    if "action_low" in job:
        hp["action_scaler"] = d3rlpy.preprocessing.MinMaxActionScaler(
            minimum=np.asarray(job["action_low"], np.float32),
            maximum=np.asarray(job["action_high"], np.float32),
        )
    if "reward_scale" in hp:  # rlkit's reward_scale (IQL): d3rlpy's MultiplyRewardScaler
        hp["reward_scaler"] = d3rlpy.preprocessing.MultiplyRewardScaler(hp.pop("reward_scale"))
    if hp.pop("standard_observation_scaler", False):
        hp["observation_scaler"] = d3rlpy.preprocessing.StandardObservationScaler()
    hidden = hp.pop("hidden")
    encoder = d3rlpy.models.VectorEncoderFactory(hidden_units=list(hidden), activation="relu")
    critic_encoder = d3rlpy.models.VectorEncoderFactory(
        hidden_units=list(hidden), activation="relu",
        use_layer_norm=hp.pop("critic_layer_norm", False),
    )  # fmt: skip
    configs = {
        "cql": (d3rlpy.algos.CQLConfig, ("actor_encoder_factory", "critic_encoder_factory")),
        "iql": (
            d3rlpy.algos.IQLConfig,
            ("actor_encoder_factory", "critic_encoder_factory", "value_encoder_factory"),
        ),
        "td3bc": (
            d3rlpy.algos.TD3PlusBCConfig,
            ("actor_encoder_factory", "critic_encoder_factory"),
        ),
        "bc": (d3rlpy.algos.BCConfig, ("encoder_factory",)),
        "discrete_cql": (d3rlpy.algos.DiscreteCQLConfig, ("encoder_factory",)),
        "discrete_bc": (d3rlpy.algos.DiscreteBCConfig, ("encoder_factory",)),
    }
    configs["cql_ln"] = configs["cql"]  # the layer norm is in the critics' encoder above
    config_class, encoders = configs[job["algo"]]
    for name in encoders:
        hp[name] = critic_encoder if name == "critic_encoder_factory" else encoder
    return config_class(**hp).create(device="cpu:0")


def evaluate(algo: Any, env_id: str, reset_seed: int, n_episodes: int) -> list[float]:
    """Deterministic returns: ``reset(seed=reset_seed)`` once, then ``reset()`` per episode (as
    ``rk.evaluate`` resets its env), acting with ``algo.predict``."""
    import gymnasium as gym

    env = gym.make(env_id)
    returns = []
    obs, _ = env.reset(seed=reset_seed)
    for _ in range(n_episodes):
        total, done = 0.0, False
        while not done:
            action = algo.predict(np.asarray(obs, np.float32)[None])[0]
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
        obs, _ = env.reset()
    env.close()
    return returns


def main() -> None:
    import d3rlpy
    import torch

    job = json.load(sys.stdin)
    torch.set_num_threads(int(job["threads"]))
    data = dict(np.load(job["dataset"], allow_pickle=False))
    discrete = job["algo"].startswith("discrete")
    dataset = mdp_dataset(data, discrete, job.get("n_actions"))
    d3rlpy.seed(int(job["seed"]))
    wall, cpu = time.perf_counter(), time.process_time()
    algo = make_algo(job)
    every = int(job.get("eval_every") or job["steps"])
    curve: list[tuple[int, float]] = []
    evaluation_cpu = 0.0

    def evaluate_epoch(algo: Any, epoch: int, step: int) -> None:  # an intermediate evaluation
        nonlocal evaluation_cpu
        if step == int(job["steps"]) or not job.get("eval_every"):
            return
        start = time.process_time()
        returns = evaluate(algo, job["env_id"], int(job["reset_seed"]), int(job["n_episodes"]))
        curve.append((step, float(np.mean(returns))))
        print(json.dumps({"step": step, "mean": curve[-1][1]}), file=sys.stderr, flush=True)
        evaluation_cpu += time.process_time() - start

    algo.fit(
        dataset,
        n_steps=int(job["steps"]),
        n_steps_per_epoch=every,
        show_progress=False,
        save_interval=10**9,
        logger_adapter=d3rlpy.logging.NoopAdapterFactory(),
        epoch_callback=evaluate_epoch,
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu - evaluation_cpu
    returns = evaluate(algo, job["env_id"], int(job["reset_seed"]), int(job["n_episodes"]))
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "returns": returns,
                "curve": curve + [(int(job["steps"]), float(np.mean(returns)))],
                "transitions": int(dataset.transition_count),
                "d3rlpy": d3rlpy.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()
