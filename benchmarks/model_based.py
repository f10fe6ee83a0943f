"""Sample efficiency of the model-based recipes (experiments/model_based.py) on Pendulum-v1, the
ensemble's prediction error, and MBPO on HalfCheetah.

    OMP_NUM_THREADS=1 nice python benchmarks/model_based.py sample --seeds 5 \
        --recipes MBPO_Pendulum PETS_Pendulum SAC_Pendulum
    OMP_NUM_THREADS=1 nice python benchmarks/model_based.py error [--recipe PETS_Pendulum]
    OMP_NUM_THREADS=1 nice python benchmarks/model_based.py cheetah --steps 8000

``sample``: each recipe runs with an ``rk.EvaluationHook`` (the deterministic policy,
``--episodes`` episodes) every ``--every`` steps up to its budget (``--max-steps``, SAC_Pendulum
20,000), and stops at the first evaluation whose mean is at least ``--threshold`` (-200); one
line per run: the steps to the threshold (or "not reached" and the best mean), the wall time
to it (training and evaluations), its CPU time, and both per environment step. ``error``: an
``rk.EnsembleDynamicsModel`` (``--recipe``'s settings: MBPO_Pendulum's, or PETS_Pendulum's with
its known reward) trained on ``--train`` random-action transitions, its elites' mean prediction
rolled open loop with the real actions on held-out episodes: the mean squared error of the
state after 1, 5, 10 and 20 steps. ``cheetah``: MBPO_HalfCheetah for ``--steps`` steps, the
training episodes' returns. benchmarks/results_model_based.txt holds a measured output.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import rlkit as rk

BUDGET = {"MBPO_Pendulum": 5000, "PETS_Pendulum": 5000, "SAC_Pendulum": 20_000}


class StopAtThreshold(rk.AbstractStopCondition):
    """Stop once the evaluation hook's last mean reaches ``threshold``; print each new
    evaluation as it comes (a long run shows its progress)."""

    def __init__(self, hook: rk.EvaluationHook, threshold: float, label: str) -> None:
        self.hook, self.threshold, self.label, self.seen = hook, threshold, label, 0
        self.start, self.cpu_start = time.perf_counter(), time.process_time()

    def step(self, policy, env) -> bool:
        results = self.hook.results
        if len(results) > self.seen:
            self.seen = len(results)
            last = results[-1]
            print(f"  {self.label}: {last.step} steps: {last.mean:.1f} "
                  f"({time.perf_counter() - self.start:.0f} s wall, "
                  f"{time.process_time() - self.cpu_start:.0f} s CPU)", flush=True)  # fmt: skip
        return bool(results) and results[-1].mean >= self.threshold


def sample_efficiency(args: argparse.Namespace) -> None:
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for name in args.recipes:
            budget = args.max_steps or BUDGET.get(name, 5000)
            experiment = rk.make_experiment(name, seed, total_steps=budget)
            evaluation = rk.EvaluationHook(
                rk.GymEnv("Pendulum-v1"), every_n_steps=args.every, n_episodes=args.episodes,
                seed=10_000 + seed,
            )  # fmt: skip
            label = f"{name} seed {seed}"
            stop = rk.StopAfterNSteps(budget) | StopAtThreshold(evaluation, args.threshold, label)
            start, cpu_start = time.perf_counter(), time.process_time()
            rk.run(experiment.policy, experiment.env, stop, evaluation)
            seconds = time.perf_counter() - start
            cpu = time.process_time() - cpu_start
            results = evaluation.results
            reached = [r for r in results if r.mean >= args.threshold]
            curve = " ".join(f"{r.step}:{r.mean:.0f}" for r in results)
            if reached:
                steps = reached[0].step
                verdict = f"reached {args.threshold:.0f} at {steps} steps"
            else:
                steps = results[-1].step if results else 0
                best = max((r.mean for r in results), default=float("nan"))
                verdict = f"not reached in {steps} steps (best {best:.1f})"
            per_step = 1000 / max(steps, 1)
            print(f"{name} seed {seed}: {verdict}; {seconds:.0f} s wall, {cpu:.0f} s CPU "
                  f"({per_step * seconds:.1f} ms wall, {per_step * cpu:.1f} ms CPU per step "
                  f"incl. evaluations); curve {curve}", flush=True)  # fmt: skip


def _episodes(n_steps: int, seed: int) -> list[dict[str, np.ndarray]]:
    """Random-action Pendulum-v1 episodes (200 steps each) of ``n_steps`` transitions in all."""
    env = rk.GymEnv("Pendulum-v1", seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(max(n_steps // 200, 1)):
        env.reset()
        rows: dict[str, list] = {"state": [], "action": [], "reward": [], "next_state": []}
        while not env.done:
            state = np.asarray(env.state, np.float32)
            action = rng.uniform(-2, 2, size=1).astype(np.float32)
            env.act(action)
            for key, value in zip(rows, (state, action, env.reward, env.state), strict=True):
                rows[key].append(np.asarray(value, np.float32))
        out.append({k: np.stack(v) for k, v in rows.items()})
    return out


def recipe_model(name: str, env: rk.GymEnv) -> rk.EnsembleDynamicsModel:
    """A fresh ensemble with the model settings of the recipe ``name`` (MBPO_Pendulum or
    PETS_Pendulum): its members, elites, layers, minibatch, epochs and known reward."""
    from rlkit.experiments.model_based import MBPO_PENDULUM, PETS_PENDULUM, pendulum_reward

    p = {"MBPO_Pendulum": MBPO_PENDULUM, "PETS_Pendulum": PETS_PENDULUM}[name]
    return rk.EnsembleDynamicsModel(
        env.state_space, env.action_space, ensemble_size=p.ensemble_size, n_elites=p.n_elites,
        hidden=p.model_hidden, lr=p.model_lr, batch_size=p.model_batch_size,
        holdout_ratio=p.model_holdout_ratio, max_epochs_since_update=p.max_epochs_since_update,
        max_epochs=p.model_max_epochs, reward_fn=pendulum_reward if p.known_reward else None,
        seed=0,
    )  # fmt: skip


def prediction_error(args: argparse.Namespace) -> None:
    torch.manual_seed(0)
    train = _episodes(args.train, seed=0)
    data = {k: np.concatenate([e[k] for e in train]) for k in train[0]}
    model = recipe_model(args.recipe, rk.GymEnv("Pendulum-v1"))
    start = time.perf_counter()
    stats = model.fit(data)
    fit_seconds = time.perf_counter() - start
    held_out = _episodes(2000, seed=1)
    horizons = (1, 5, 10, 20)
    errors: dict[int, list[float]] = {h: [] for h in horizons}
    for episode in held_out:
        for t in range(0, 200 - max(horizons), 10):
            state = episode["state"][t : t + 1]
            for h in range(1, max(horizons) + 1):
                action = episode["action"][t + h - 1 : t + h]
                state, _ = model((state, action))
                if h in errors:
                    errors[h].append(
                        float(((state - episode["next_state"][t + h - 1]) ** 2).mean())
                    )
    print(f"{args.recipe}'s model: {model!r}, trained on {len(data['state'])} random "
          f"transitions in {fit_seconds:.0f} s ({stats['model_epochs']:.0f} epochs, held-out "
          f"MSE of the elites {stats['model_holdout_mse']:.2e})")  # fmt: skip
    for h in horizons:
        print(f"open-loop {h:2d}-step state MSE on held-out episodes: {np.mean(errors[h]):.2e}")


def cheetah(args: argparse.Namespace) -> None:
    experiment = rk.make_experiment("MBPO_HalfCheetah", args.seed, total_steps=args.steps)
    start = time.perf_counter()
    rk.run(experiment)
    seconds = time.perf_counter() - start
    returns = [round(r, 1) for r in experiment.hook.rewards]
    print(
        f"MBPO_HalfCheetah seed {args.seed}: {args.steps} steps in {seconds:.0f} s; "
        f"training episode returns {returns}; {rk.statistics(experiment.policy.policy)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--recipes", nargs="+", default=list(BUDGET))
    s.add_argument("--seeds", type=int, default=5)
    s.add_argument("--first-seed", type=int, default=0)
    s.add_argument("--every", type=int, default=500)
    s.add_argument("--episodes", type=int, default=5)
    s.add_argument("--threshold", type=float, default=-200.0)
    s.add_argument("--max-steps", type=int, default=None)
    e = sub.add_parser("error")
    e.add_argument("--train", type=int, default=2000)
    e.add_argument("--recipe", choices=["MBPO_Pendulum", "PETS_Pendulum"], default="MBPO_Pendulum")
    c = sub.add_parser("cheetah")
    c.add_argument("--steps", type=int, default=8000)
    c.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    {"sample": sample_efficiency, "error": prediction_error, "cheetah": cheetah}[args.command](args)


if __name__ == "__main__":
    main()
