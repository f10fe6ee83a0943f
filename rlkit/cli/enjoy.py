"""``rlkit enjoy RUN_DIR [--episodes N] [--video DIR] [--deterministic/--stochastic] [--seed S]``:
watch the policy a run trained (rl-baselines3-zoo's ``enjoy``).

It loads ``RUN_DIR/policy.rlkit`` (written by ``rlkit run`` at the end of a run), makes the
run's environment from ``RUN_DIR/config.json`` (its gymnasium id and keyword arguments; one
environment, even if the run trained on a vector env) and plays ``N`` episodes with rlkit's
ordinary run loop (``rk.run`` with ``rk.TotalRewardPerEpisode``), printing each episode's return
and the mean. ``--deterministic`` (the default) plays ``rk.greedy`` of the policy, as SB3's
``deterministic=True``; ``--stochastic`` plays it as it explored. ``--video DIR`` records every
episode with gymnasium's ``RecordVideo`` (the env is made with ``render_mode="rgb_array"``;
needs ``moviepy``, and ``pygame`` to render the classic-control envs), one ``.mp4`` per episode
with as many frames as the episode has steps plus one (the first observation's frame), at the
power of two of frames per second nearest the env's ``render_fps`` (:func:`video_fps`).

Example::

    rlkit run PPO_CartPole --steps 20000 --logdir runs/ppo
    rlkit enjoy runs/ppo --episodes 3 --video runs/ppo/videos
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "enjoy"]


def add_parser(sub: Any) -> None:
    """Register ``rlkit enjoy`` with the CLI's subparsers."""
    enjoy_parser = sub.add_parser(
        "enjoy", help="play the policy a run trained (RUN_DIR/policy.rlkit), optionally on video"
    )
    enjoy_parser.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    enjoy_parser.add_argument("--episodes", type=int, default=5, help="episodes to play (5)")
    enjoy_parser.add_argument(
        "--video", type=Path, default=None, metavar="DIR",
        help="record each episode as an .mp4 in DIR (gymnasium's RecordVideo; needs moviepy)",
    )  # fmt: skip
    mode = enjoy_parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--deterministic", dest="deterministic", action="store_true", default=True,
        help="act greedily (the default)",
    )  # fmt: skip
    mode.add_argument(
        "--stochastic", dest="deterministic", action="store_false",
        help="act as the policy explored (sample its distribution, epsilon-greedy)",
    )  # fmt: skip
    enjoy_parser.add_argument("--seed", type=int, default=0, help="the env's seed (0)")
    enjoy_parser.set_defaults(func=enjoy)


def _fail(message: Any, status: int = 2) -> int:
    import sys

    print(f"rlkit: {message}", file=sys.stderr)
    return status


def enjoy(args: argparse.Namespace) -> int:
    """Play ``args.episodes`` episodes of the run's policy; 0 on success."""
    import gymnasium as gym

    from ..core.dispatch import greedy
    from ..core.run import run
    from ..core.stop_conditions import StopAfterNEpisodes
    from ..deploy.errors import ArtifactError
    from ..deploy.save_load import load
    from ..envs.gym import GymEnv
    from ..hooks.basic import TotalRewardPerEpisode
    from .rundir import RunDirError, read_config

    if args.episodes < 1:
        return _fail(f"--episodes must be a positive integer, got {args.episodes}")
    if args.seed < 0:
        return _fail(f"--seed must be a non-negative integer, got {args.seed}")
    try:
        config = read_config(args.run_dir)
        env = GymEnv(_make_env(config, args.video), seed=args.seed)
        policy = load(args.run_dir, env=env)
    except (RunDirError, FileNotFoundError, ArtifactError, ValueError) as error:
        return _fail(error)
    except ModuleNotFoundError as error:  # moviepy for --video
        return _fail(error, status=1)
    player = greedy(policy) if args.deterministic else policy
    mode = "deterministic" if args.deterministic else "stochastic"
    print(f"{config['experiment']} ({getattr(policy, 'algorithm', '?')}, {mode}) on "
          f"{config['env']['id']}, {args.episodes} episode(s)")  # fmt: skip
    returns = TotalRewardPerEpisode()
    try:
        run(player, env, StopAfterNEpisodes(args.episodes), returns)
    except gym.error.DependencyNotInstalled as error:  # e.g. pygame, to render classic control
        return _fail(f"the environment cannot render for --video: {error}", status=1)
    finally:
        env.env.close()  # RecordVideo writes the last episode's file on close
    for i, total in enumerate(returns.rewards, 1):
        print(f"episode {i}: return {total:.2f}")
    print(f"mean return over {len(returns.rewards)} episode(s): "
          f"{sum(returns.rewards) / len(returns.rewards):.2f}")  # fmt: skip
    if args.video is not None:
        print(f"videos written to {args.video}")
    return 0


def _make_env(config: dict[str, Any], video: Path | None) -> Any:
    """The run's environment (gymnasium id and kwargs), recording every episode to ``video``."""
    import gymnasium as gym

    from .rundir import RunDirError

    record = config.get("env") or {}
    env_id, kwargs = record.get("id"), dict(record.get("kwargs") or {})
    try:
        gym.spec(env_id)
    except (gym.error.Error, TypeError) as error:
        raise RunDirError(
            f"the run's environment {env_id!r} is not a gymnasium id that can be made here "
            f"({error})"
        ) from None
    if video is None:
        return gym.make(env_id, **kwargs)
    try:
        import moviepy  # noqa: F401 - RecordVideo needs it
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            "rlkit enjoy --video records with gymnasium's RecordVideo, which needs moviepy: "
            "pip install moviepy",
            name="moviepy",
        ) from error
    kwargs["render_mode"] = "rgb_array"
    # frames are drawn off-screen: pygame (classic control) needs no display
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    env = gym.make(env_id, **kwargs)
    return gym.wrappers.RecordVideo(
        env, str(video), episode_trigger=lambda _: True, name_prefix="enjoy",
        fps=video_fps(env.metadata.get("render_fps")), disable_logger=True,
    )  # fmt: skip


def video_fps(render_fps: Any) -> int:
    """The power of two nearest the env's ``render_fps`` (30 when it has none): moviepy's
    ``ImageSequenceClip`` (what ``RecordVideo`` writes with) sums the frames' durations
    ``1 / fps`` in floats and drops the last frame when the sum falls short (14 frames at
    50 fps last 0.27999... s: 13 frames are written); durations ``1 / 2**k`` are exact.

    Example:
        >>> video_fps(50), video_fps(30), video_fps(None)
        (64, 32, 32)
    """
    fps = float(render_fps) if render_fps else 30.0
    return int(2 ** round(math.log2(fps)))
