"""RLlib's side of ``benchmarks/distributed.py --part rllib``: IMPALA or APPO on CartPole-v1 with
the settings of RLlib's tuned examples (rllib/tuned_examples/impala/cartpole_impala.py and
appo/cartpole_appo.py: stop at a training return of 450 within 2M env steps), ``--actors`` env
runners. Runs in a virtualenv of its own (``ray[rllib]`` pins its own gymnasium); prints one
JSON line: the env steps and wall seconds when the smoothed training return (RLlib's
``env_runners/episode_return_mean``, the last 100 episodes) first reached ``--target``, and the
curve (env steps, seconds, return) of every training iteration.

    python benchmarks/distributed_rllib_worker.py --algo IMPALA --actors 2 --seed 0
"""

from __future__ import annotations

import argparse
import json
import time


def config(algo: str, actors: int, seed: int):
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    if algo == "IMPALA":
        from ray.rllib.algorithms.impala import IMPALAConfig

        cfg = IMPALAConfig().training(
            train_batch_size_per_learner=500,
            grad_clip=40.0,
            grad_clip_by="global_norm",
            lr=0.0005,
            vf_loss_coeff=0.05,
            entropy_coeff=0.0,
        )
        model = DefaultModelConfig(vf_share_layers=True)
    else:
        from ray.rllib.algorithms.appo import APPOConfig

        cfg = APPOConfig().training(
            train_batch_size_per_learner=1000,
            vf_loss_coeff=0.05,
            entropy_coeff=0.01,
            num_epochs=2,
            lr=0.00075,
            minibatch_size=250,
        )
        model = DefaultModelConfig(fcnet_hiddens=[32])
    return (
        cfg.environment("CartPole-v1")
        .rl_module(model_config=model)
        .env_runners(num_env_runners=actors)
        .debugging(seed=seed)
        .framework("torch")
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--algo", choices=["IMPALA", "APPO"], required=True)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target", type=float, default=450.0)
    parser.add_argument("--max-steps", type=int, default=2_000_000)
    parser.add_argument("--max-seconds", type=float, default=900.0)
    args = parser.parse_args()

    import ray

    ray.init(num_cpus=args.actors + 1, include_dashboard=False, log_to_driver=False)
    try:
        algo = config(args.algo, args.actors, args.seed).build_algo()
        start = time.perf_counter()
        curve, reached = [], None
        while True:
            result = algo.train()
            runners = result.get("env_runners", {})
            steps = int(runners.get("num_env_steps_sampled_lifetime", 0))
            mean = runners.get("episode_return_mean")
            seconds = time.perf_counter() - start
            curve.append((steps, round(seconds, 1), None if mean is None else round(mean, 1)))
            if mean is not None and mean >= args.target:
                reached = (steps, round(seconds, 1))
                break
            if steps >= args.max_steps or seconds >= args.max_seconds:
                break
        algo.stop()
    finally:
        ray.shutdown()
    print(json.dumps({"algo": args.algo, "actors": args.actors, "seed": args.seed,
                      "reached": reached, "curve": curve}))  # fmt: skip


if __name__ == "__main__":
    main()
