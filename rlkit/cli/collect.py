"""``rlkit collect NAME_OR_RUN_DIR --steps N --out PATH [--epsilon E] [--seed S]
[--stochastic] [--format npz|minari]``: make an offline dataset (``rk.Dataset``) by running a
policy with ``rk.DatasetRecorder``.

The policy is either a bundled recipe's, untrained (``NAME``: the recipe's env and policy,
built with ``--seed``; nothing is learnt while collecting), or the one a run trained
(``RUN_DIR``: ``RUN_DIR/policy.rlkit``, written by ``rlkit run``, played in the run's
environment as ``rlkit enjoy`` plays it, ``rlkit/cli/enjoy.py``). It acts greedily (the default)
or as it explored (``--stochastic``), and with probability ``--epsilon`` (per step and sub-env)
a uniformly random action is taken instead: ``--epsilon 1`` makes a random dataset, a trained
run's policy an "expert" or (stopped early, or with some epsilon) a "medium" one.

``N`` transitions are recorded (a recipe on a vector env takes ``N / n_envs`` steps, so ``N``
must be a multiple of its ``n_envs``), episodes cut by the end of the budget end truncated, and
the dataset (with the env spec, the policy's description and the seed) is written atomically to
``PATH``: a ``.npz`` file, or a Minari dataset directory with ``--format minari`` (the default
format is ``npz`` for a path ending in ``.npz``, else ``minari``).

Example::

    rlkit collect DQN_CartPole --steps 10000 --epsilon 1 --out data/cartpole_random.npz
    rlkit run DQN_CartPole --logdir runs/dqn
    rlkit collect runs/dqn --steps 10000 --epsilon 0.1 --out data/cartpole_expert.npz
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ..core.interfaces import AbstractPolicy, AbstractVectorEnv

__all__ = ["add_parser", "collect", "EpsilonRandom"]


def add_parser(sub: Any) -> None:
    """Register ``rlkit collect`` with the CLI's subparsers."""
    parser = sub.add_parser(
        "collect",
        help="record an offline dataset with a recipe's (untrained) or a run's trained policy",
    )
    parser.add_argument(
        "source", metavar="NAME_OR_RUN_DIR",
        help="a bundled recipe (its untrained policy) or a run directory of 'rlkit run'",
    )  # fmt: skip
    parser.add_argument("--steps", type=int, required=True, metavar="N",
                        help="transitions to record")  # fmt: skip
    parser.add_argument("--out", type=Path, required=True, metavar="PATH",
                        help="the dataset to write (.npz file or Minari directory)")  # fmt: skip
    parser.add_argument("--epsilon", type=float, default=0.0, metavar="E",
                        help="probability of a uniformly random action (0)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed of env, policy, epsilon (0)")
    parser.add_argument("--stochastic", action="store_true",
                        help="act as the policy explores (default: greedily)")  # fmt: skip
    parser.add_argument("--format", choices=("npz", "minari"), default=None,
                        help="npz for a PATH ending in .npz, else minari")  # fmt: skip
    parser.set_defaults(func=collect)


def _fail(message: Any, status: int = 2) -> int:
    print(f"rlkit: {message}", file=sys.stderr)
    return status


class EpsilonRandom(AbstractPolicy):
    """``policy``'s action, or with probability ``epsilon`` a uniformly random one (for a vector
    env: per sub-env). The random draws come from ``seed``'s generators, not the policy's.

    Example:
        >>> import rlkit as rk
        >>> class Left(rk.AbstractPolicy):
        ...     def act(self, env):
        ...         return 0
        >>> hook = rk.run(EpsilonRandom(Left(), 1.0, seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...               rk.StopAfterNSteps(50), rk.StepsPerEpisode())
        >>> len(hook.steps) > 0  # random actions keep the pole up longer than 'always left'
        True
    """

    def __init__(self, policy: Any, epsilon: float, *, seed: int | None = None) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"EpsilonRandom: epsilon must be in [0, 1], got {epsilon}")
        self.policy, self.epsilon = policy, float(epsilon)
        self.rng = np.random.default_rng(seed)
        self._seed = seed
        self._space: Any = None

    def __repr__(self) -> str:
        return f"EpsilonRandom({self.policy!r}, epsilon={self.epsilon})"

    def plan(self, env: Any) -> dict:
        return self.policy.plan(env)

    def _random(self, env: Any) -> Any:
        if self._space is None:
            self._space = copy.deepcopy(env.action_space)
            self._space.seed(self._seed)
        return self._space.sample()

    def act(self, env: Any) -> Any:
        if self.epsilon == 0.0:
            return self.policy.act(env)
        if not isinstance(env, AbstractVectorEnv):
            if self.rng.random() < self.epsilon:
                return self._random(env)
            return self.policy.act(env)
        actions = np.array(self.policy.act(env))
        for i in np.flatnonzero(self.rng.random(env.n_envs) < self.epsilon):
            actions[i] = self._random(env)
        return actions


def collect(args: argparse.Namespace) -> int:
    """Record ``args.steps`` transitions into ``args.out``; 0 on success."""
    from ..core.run import run
    from ..core.stop_conditions import StopAfterNSteps
    from ..hooks.dataset_recorder import DatasetRecorder
    from .rundir import RunDirError

    problem = _check_args(args)
    if problem is not None:
        return _fail(problem)
    try:
        policy, env, description = _source(args)
    except ModuleNotFoundError as error:  # torch for a deep recipe
        return _fail(error, status=1)
    except (TypeError, ValueError, FileNotFoundError, LookupError, RunDirError) as error:
        return _fail(error)  # ArtifactError is a ValueError
    n_envs = env.n_envs if isinstance(env, AbstractVectorEnv) else 1
    if args.steps % n_envs:
        return _fail(
            f"--steps {args.steps} is not a multiple of the recipe's {n_envs} sub-envs (each "
            f"step of its vector env records {n_envs} transitions)"
        )
    fmt = _format(args)
    recorder = DatasetRecorder(
        args.out, format=fmt, seed=args.seed, policy_description=description
    )
    player = EpsilonRandom(policy, args.epsilon, seed=args.seed)
    print(f"collecting {args.steps} transitions: {description}", flush=True)
    try:
        run(player, env, StopAfterNSteps(args.steps), recorder)
    except ImportError as error:  # minari missing for --format minari
        return _fail(error, status=1)
    finally:
        close = getattr(env, "close", None)
        if callable(close):
            close()
    dataset = recorder.dataset()
    returns = dataset.episode_returns()
    print(
        f"{len(dataset)} transitions, {dataset.n_episodes} episodes (mean return "
        f"{returns.mean():.2f}, min {returns.min():.2f}, max {returns.max():.2f}) written to "
        f"{args.out} ({fmt})"
    )
    return 0


def _format(args: argparse.Namespace) -> str:
    return args.format or ("npz" if args.out.suffix == ".npz" else "minari")


def _check_args(args: argparse.Namespace) -> str | None:
    if args.steps < 1:
        return f"--steps must be a positive integer, got {args.steps}"
    if not 0.0 <= args.epsilon <= 1.0:
        return f"--epsilon must be between 0 and 1, got {args.epsilon}"
    if args.seed < 0:
        return f"--seed must be a non-negative integer, got {args.seed}"
    fmt = _format(args)
    if fmt == "npz" and args.out.is_dir():
        return f"--out {args.out} is a directory; give a file path for the .npz dataset"
    if fmt == "minari" and args.out.is_file():
        return f"--out {args.out} is a file; a Minari dataset is a directory (or use --format npz)"
    return None


def _source(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """The policy to play, its env and its description, from a run directory or a recipe."""
    from ..core.dispatch import greedy

    mode = "stochastic" if args.stochastic else "greedy"
    source = Path(args.source)
    if source.is_dir():
        policy, env, what = _trained(source, args.seed)
    else:
        policy, env, what = _recipe(args.source, args.seed, args.stochastic)
    if not args.stochastic:
        policy = greedy(policy, args.seed)
    return policy, env, f"{what}, {mode}, epsilon={args.epsilon}"


def _trained(run_dir: Path, seed: int) -> tuple[Any, Any, str]:
    from ..deploy.save_load import RUN_DIR_ARTIFACT, load
    from ..envs.gym import GymEnv
    from .enjoy import _make_env
    from .rundir import read_config

    config = read_config(run_dir)
    if not (run_dir / RUN_DIR_ARTIFACT).exists():
        raise FileNotFoundError(
            f"{run_dir} has no {RUN_DIR_ARTIFACT} (written at the end of 'rlkit run'); finish "
            f"the run first (rlkit resume {run_dir})"
        )
    env = GymEnv(_make_env(config, None), seed=seed)
    policy = load(run_dir, env=env)
    return policy, env, f"{config['experiment']} trained policy of {run_dir}"


def _recipe(name: str, seed: int, stochastic: bool) -> tuple[Any, Any, str]:
    from ..core.experiment import make_experiment
    from ..policies.agent import Agent

    experiment = make_experiment(name, seed=seed)
    policy = experiment.policy
    if isinstance(policy, Agent):  # collect with the policy; nothing is learnt
        policy = policy.policy
    return policy, experiment.env, f"{name} untrained policy (seed {seed})"
