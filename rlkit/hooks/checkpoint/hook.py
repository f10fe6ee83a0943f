"""``CheckpointHook``: save the whole run every N steps or episodes; resume from the newest.

Example:
    >>> import rlkit as rk, tempfile
    >>> from rlkit.hooks.checkpoint import CheckpointHook, latest_checkpoint
    >>> folder = tempfile.mkdtemp()
    >>> def build():
    ...     return rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0)
    >>> policy, env = build()
    >>> hook = rk.TotalRewardPerEpisode() + CheckpointHook(folder, every_n_steps=50)
    >>> _ = rk.run(policy, env, rk.StopAfterNSteps(120), hook)
    >>> latest_checkpoint(folder).name
    'checkpoint-000000000120.safetensors'
    >>> policy, env = build()  # e.g. in a new process: same objects, then the saved state
    >>> hook = rk.TotalRewardPerEpisode() + CheckpointHook(folder, every_n_steps=50)
    >>> _ = rk.run(policy, env, rk.StopAfterNSteps(200), hook, resume_from=folder)
    >>> hook[1].steps  # steps 121 to 200 were run
    200
"""

from __future__ import annotations

import contextlib
import os
import warnings
from pathlib import Path
from typing import Any

from ...core.checks import optional_positive_int
from ...core.dispatch import restore
from ...core.interfaces import AbstractHook
from ...core.interrupt import ctrl_c_pressed
from ...core.state import get_state, has_state
from ...core.stop_conditions import StopSignal
from .files import is_temporary, list_checkpoints
from .format import checked_format, checked_metadata
from .run_state import load_checkpoint, save_checkpoint

__all__ = ["CheckpointHook"]

_NAME = "CheckpointHook"




class CheckpointHook(AbstractHook):
    """Save the whole run every ``every_n_steps`` environment steps and/or ``every_n_episodes``
    finished episodes, and when the run stops; keep the newest ``keep_last`` files.

    A checkpoint is taken at a step boundary: after every policy and hook call of the step *and*
    the stop condition's check, so that resuming from it (``rk.run(..., resume_from=dir)``)
    continues exactly where the run was, bit for bit. At the end of an episode the boundary is
    after PostEpisode and the episode check. ``rk.run`` gives the hook the run's policy,
    environment, stop condition and whole hook chain (:meth:`attach`; it saves all of them) and
    calls it at those boundaries (``after_step_check``, ``after_episode_check``); the hook must
    therefore be run by ``rk.run``.

    When the stop condition ends the run, a final checkpoint is written (marked ``finished``,
    unless Ctrl-C, see ``rk.run``, or a ``StopSignal`` in the condition ended it: then resuming
    continues).
    Resuming from a finished checkpoint (a process killed after its final checkpoint, then
    started again) restores the run and runs no step when the stop condition is still
    satisfied (its ``progress()`` reached, or unknown: then with a warning), only the
    PostExperiment the killed process did not get to, so that it ends as the uninterrupted run
    did (e.g. an ``EvaluationHook(restore_best=True)`` restores the best policy); a stop condition
    with a larger budget (e.g. ``StopAfterNSteps`` with a larger ``n``) continues the run.
    When the run ends with an exception (a hook raised, a second Ctrl-C), the state is in the
    middle of a step and cannot be resumed exactly, so nothing is written at PostExperiment: the
    newest checkpoint stays the last valid one.

    Args:
        dir: folder of the checkpoints (created; use one folder per run).
        every_n_steps: save every this many environment steps (None: not by steps).
        every_n_episodes: save after every this many finished episodes (None: not by episodes).
        keep_last: how many checkpoints to keep (older ones are deleted; None keeps all).
        format: ``"auto"`` (safetensors when installed, else npz), ``"safetensors"`` or ``"npz"``.
        metadata: JSON-able dict stored in every checkpoint (e.g. experiment name and seed).

    With a vector env ``steps`` counts transitions (``n_envs`` per step; a save is due when a
    step passes a multiple of ``every_n_steps``) and ``episodes`` every finished sub-env episode;
    checkpoints are taken at the boundary after a step's episode checks.

    Counters: ``steps`` and ``episodes`` (environment steps and finished episodes, continued
    across runs and restored on resume), ``last_path`` (the newest file written).

    Example:
        >>> import rlkit as rk, tempfile
        >>> from rlkit.hooks.checkpoint import CheckpointHook
        >>> hook = CheckpointHook(tempfile.mkdtemp(), every_n_episodes=2, keep_last=1)
        >>> _ = rk.run(rk.RandomPolicy(seed=0), rk.GymEnv("CartPole-v1", seed=0),
        ...            rk.StopAfterNEpisodes(5), hook)
        >>> hook.episodes, hook.last_path.name.startswith("checkpoint-")
        (5, True)
    """

    saves_run = True  # its counters are the checkpoint's own, not a hook part of it

    def __init__(
        self,
        dir: str | os.PathLike,
        *,
        every_n_steps: int | None = None,
        every_n_episodes: int | None = None,
        keep_last: int | None = 3,
        format: str = "auto",
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.dir = Path(dir)
        if self.dir.exists() and not self.dir.is_dir():
            raise ValueError(
                f"{_NAME}: dir {str(self.dir)!r} is an existing file; expected a folder for the "
                f"checkpoints (created if missing)"
            )
        self.every_n_steps = optional_positive_int(_NAME, "every_n_steps", every_n_steps)
        self.every_n_episodes = optional_positive_int(_NAME, "every_n_episodes", every_n_episodes)
        self.keep_last = optional_positive_int(_NAME, "keep_last", keep_last)
        self.format = checked_format(format)
        self.metadata = checked_metadata(_NAME, metadata)
        self.steps = 0
        self.episodes = 0
        self.last_path: Path | None = None
        self._run: tuple[Any, Any, Any, Any] | None = None
        self._due = False  # a step-count save deferred to the episode's end
        self._stopping = False  # the step check said stop at the last step of an episode
        self._ends_left = 0  # vector env: episode checks still to come at this step
        self.finished = False  # the last run ended by its stop condition (final checkpoint)
        self._stopped_early = False  # the last run's final checkpoint was an interrupted one

    def __repr__(self) -> str:
        every = [
            f"{name}={value}"
            for name, value in (
                ("every_n_steps", self.every_n_steps),
                ("every_n_episodes", self.every_n_episodes),
            )
            if value is not None
        ]
        options = ", ".join([*every, f"keep_last={self.keep_last}"])
        return f"CheckpointHook({str(self.dir)!r}, {options})"

    # ---- the run: rk.run attaches the hook to the run's objects ----
    def attach(self, policy: Any, env: Any, stop_condition: Any, hook: Any) -> None:
        """Keep what the hook saves: the run's policy, env, stop condition and hook chain."""
        for what, obj in (("policy", policy), ("env", env)):
            if not has_state(obj):
                raise TypeError(
                    f"CheckpointHook: the {what} {type(obj).__name__} has no state_dict(); every "
                    f"stateful object of a checkpointed run implements state_dict() and "
                    f"load_state_dict(state)"
                )
        get_state(env)  # an env that cannot be saved (e.g. a wrapper's state) fails before a step
        self._run = (policy, env, stop_condition, hook)

    # ---- PreExperiment: a fresh start of the boundary bookkeeping ----
    def pre_experiment(self, policy: Any, env: Any) -> None:
        if self._run is None:
            raise RuntimeError(
                "CheckpointHook: not attached to a run; run it with rk.run(policy, env, "
                "stop_condition, hook), which tells it what to save"
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        for stale in self.dir.iterdir():  # temporaries of a process killed while writing
            if is_temporary(stale.name):
                with contextlib.suppress(OSError):
                    stale.unlink()
        self._due = self._stopping = self.finished = self._stopped_early = False

    # ---- PostExperiment: the final checkpoint was written at the stop; nothing after errors ----
    def post_experiment(self, policy: Any, env: Any) -> None:
        self._run = None

    # ---- step and episode boundaries: after the stop condition's checks ----
    def after_step_check(self, policy: Any, env: Any, stop: bool) -> None:
        """Count one environment step; save if due (at the boundary after the stop check)."""
        self.steps += 1
        due = self.every_n_steps is not None and self.steps % self.every_n_steps == 0
        if env.done:  # the episode's boundary comes after PostEpisode and the episode check
            self._due = self._due or due
            self._stopping = stop
        elif stop:
            self.save(finished=not self._interrupted())
        elif due:
            self.save()

    def after_episode_check(self, policy: Any, env: Any, stop: bool) -> None:
        """Count one finished episode; save if due or if the run stops here."""
        self.episodes += 1
        due = self._due or (
            self.every_n_episodes is not None and self.episodes % self.every_n_episodes == 0
        )
        stopping = stop or self._stopping
        self._due = self._stopping = False
        if due or stopping:
            self.save(finished=stopping and not self._interrupted())

    def _interrupted(self) -> bool:
        """The run stops because Ctrl-C or a ``StopSignal`` asked it to, not because it is
        over: its final checkpoint is not ``finished``, and resuming it continues the run."""
        return ctrl_c_pressed() or (self._run is not None and _signal_set(self._run[2]))

    def resume_hint(self) -> str | None:
        """After a run stopped early with a final checkpoint: where it is and how to go on."""
        if self.last_path is None or self.finished or not self._stopped_early:
            return None
        return (
            f"checkpoint of step {self.steps:,} written to {self.last_path}; continue with "
            f"rk.run(<the same objects, built again>, resume_from={str(self.dir)!r})"
        )

    # ---- vector envs: a step counts n_envs transitions; its boundary is after the episode
    # checks of the sub-envs that finished at it (the vector loop calls them after the step
    # check, one per finished episode) ----
    def vector_after_step_check(self, policy: Any, env: Any, stop: bool) -> None:
        before, self.steps = self.steps, self.steps + env.n_envs
        every = self.every_n_steps
        due = every is not None and self.steps // every > before // every
        self._ends_left = int(env.done.sum())
        if self._ends_left:
            self._due = self._due or due
            self._stopping = stop
        elif stop:
            self.save(finished=not self._interrupted())
        elif due:
            self.save()

    def vector_after_episode_check(self, policy: Any, env: Any, stop: bool) -> None:
        self.episodes += 1
        every = self.every_n_episodes
        self._due = self._due or (every is not None and self.episodes % every == 0)
        self._stopping = self._stopping or stop
        self._ends_left -= 1
        if self._ends_left <= 0:
            due, stopping = self._due, self._stopping
            self._due = self._stopping = False
            if due or stopping:
                self.save(finished=stopping and not self._interrupted())

    def save(self, *, finished: bool = False) -> Path:
        """Write a checkpoint of the bound run now (named by the step count); return its path."""
        if self._run is None:
            raise RuntimeError("CheckpointHook.save: not attached to a run (see attach)")
        policy, env, stop_condition, hook = self._run
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / f"checkpoint-{self.steps:012d}.{self.format}"
        save_checkpoint(
            path,
            policy,
            env,
            stop_condition,
            hook,
            step=self.steps,
            episode=self.episodes,
            finished=finished,
            metadata=self.metadata,
            format=self.format,
        )
        self.last_path = path
        self.finished = finished
        self._stopped_early = not finished and self._interrupted()
        if self.keep_last is not None:
            for old in list_checkpoints(self.dir)[: -self.keep_last]:
                with contextlib.suppress(OSError):
                    old.unlink()
        return path

    def state_dict(self) -> dict[str, Any]:
        """The counters (a checkpoint stores them as its step and episode)."""
        return {"steps": self.steps, "episodes": self.episodes}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["steps"])
        self.episodes = int(state["episodes"])


# ---- rk.run(..., resume_from=source): restore the saved run before it continues ----
@restore.dispatch
def _(source: str | os.PathLike, policy: object, env: object, stop: object, hook: object, /):
    """Load the checkpoint; True (no step left to run, only PostExperiment) when it is the
    final checkpoint of a finished run and the restored stop condition is still satisfied."""
    info = load_checkpoint(source, policy, env, stop, hook)
    if not info.finished:
        return False
    satisfied = _satisfied(stop)
    if satisfied is None:
        warnings.warn(
            f"rk.run: {info.path} is the final checkpoint of a finished run (step {info.step}) "
            f"and the stop condition {stop!r} cannot tell whether it is still satisfied: the "
            f"state is restored and nothing is run. To run a finished run further, load it with "
            f"rlkit.hooks.checkpoint.load_checkpoint(...) and call rk.run without resume_from.",
            stacklevel=3,
        )
        return True
    return satisfied


def _satisfied(stop: Any) -> bool | None:
    """Whether a stop condition's ``progress()`` says it is reached (None: it cannot tell)."""
    progress = getattr(stop, "progress", None)
    found = progress() if callable(progress) else None
    if found is None:
        return None
    done, total, _ = found
    return bool(done >= total)


def _signal_set(condition: Any) -> bool:
    """Whether ``condition`` is, or is composed with, a ``StopSignal`` that was set."""
    if isinstance(condition, StopSignal):
        return condition.is_set()
    return any(_signal_set(part) for part in getattr(condition, "conditions", ()))
