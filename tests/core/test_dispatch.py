"""The dispatch core: resolving a method once, no-op and forwarding markers, errors, statistics,
and the conventions every registered method must follow (docs/concepts/dispatch.md)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import rlkit as rk
from rlkit.core import dispatch
from rlkit.core.dispatch import PlanStep, collect_statistics, forward, noop

# ---- types of this test module and their methods ----


class Tape(rk.AbstractTrajectory):
    """A trajectory that records which method ran."""

    def __init__(self) -> None:
        self.calls: list = []

    def __len__(self) -> int:
        return len(self.calls)


class SpecialTape(Tape):
    pass


class Lazy(rk.AbstractLearner):
    pass


class Wrapper(rk.RandomPolicy):
    def __init__(self, inner) -> None:
        super().__init__(seed=0)
        self.inner = inner


# ---- PreEpisode: Tape records ----
@rk.update.dispatch
def tape_pre_episode(
    trajectory: Tape, policy: rk.AbstractPolicy, env: rk.AbstractEnv, stage: rk.PreEpisodeStage, /
):
    trajectory.calls.append(("Tape", repr(stage)))


# ---- PreEpisode: SpecialTape is more specific ----
@rk.update.dispatch
def special_tape_pre_episode(
    trajectory: SpecialTape,
    policy: rk.AbstractPolicy,
    env: rk.AbstractEnv,
    stage: rk.PreEpisodeStage,
    /,
):
    trajectory.calls.append(("SpecialTape", repr(stage)))


# ---- PreAct: Tape records the action ----
@rk.update.dispatch
def tape_pre_act(
    trajectory: Tape,
    policy: rk.AbstractPolicy,
    env: rk.AbstractEnv,
    stage: rk.PreActStage,
    action: object,
    /,
):
    trajectory.calls.append(("action", action))


# ---- PostAct: Lazy does nothing, and says so ----
@rk.update.dispatch
@noop
def _(learner: Lazy, trajectory: Tape, env: rk.AbstractEnv, stage: rk.PostActStage, /):
    return None


# ---- any stage: Wrapper forwards to its inner object ----
@rk.update.dispatch
@forward("inner")
def _(policy: Wrapper, trajectory: Tape, env: rk.AbstractEnv, stage: rk.AbstractStage, /):
    rk.update(policy.inner, trajectory, env, stage)


# ---- statistics: Lazy reports a loss ----
@rk.statistics.dispatch
def _(learner: Lazy, /):
    return {"loss": 1.5}


@pytest.fixture
def env():
    return rk.GymEnv("CartPole-v1", seed=0)


# ---- resolve ----


def test_resolve_returns_a_plain_call_bound_to_the_arguments(env):
    tape, policy = Tape(), rk.RandomPolicy()
    step = dispatch.resolve(rk.update, tape, policy, env, rk.PRE_EPISODE_STAGE)
    assert isinstance(step, PlanStep)
    assert step.name == "update(Tape, RandomPolicy, GymEnv, PreEpisodeStage)"
    assert step.where.endswith(f"test_dispatch.py:{_line_of('def tape_pre_episode') - 1}")
    assert str(step) == f"{step.name}  [{step.where}]"
    step.call()
    step.call()
    assert tape.calls == [("Tape", "PreEpisode")] * 2


def test_resolve_picks_the_most_specific_method(env):
    tape = SpecialTape()
    step = dispatch.resolve(rk.update, tape, rk.RandomPolicy(), env, rk.PRE_EPISODE_STAGE)
    step.call()
    assert tape.calls == [("SpecialTape", "PreEpisode")]


def test_resolve_with_a_trailing_argument_given_at_call_time(env):
    tape = Tape()
    step = dispatch.resolve(
        rk.update, tape, rk.RandomPolicy(), env, rk.PRE_ACT_STAGE, extra=(object,)
    )
    assert step.name.endswith("PreActStage, object)")
    step.call(7)
    assert tape.calls == [("action", 7)]


def test_noop_methods_resolve_to_nothing(env):
    assert dispatch.resolve(rk.update, Lazy(), Tape(), env, rk.POST_ACT_STAGE) is None
    # the AbstractLearner default is a no-op too
    assert dispatch.resolve(rk.update, Lazy(), Tape(), env, rk.PRE_ACT_STAGE) is None


def test_forwarding_methods_are_followed(env):
    tape = Tape()
    step = dispatch.resolve(rk.update, Wrapper(Lazy()), tape, env, rk.POST_ACT_STAGE)
    assert step is None  # Wrapper -> Lazy at PostAct: a no-op, dropped
    with pytest.raises(rk.DispatchError, match=r"\(object, Tape, GymEnv, PostActStage\)"):
        dispatch.resolve(rk.update, Wrapper(object()), tape, env, rk.POST_ACT_STAGE)


def test_missing_method_names_the_types(env):
    with pytest.raises(rk.DispatchError) as info:
        dispatch.resolve(rk.update, 1.5, "x", env, rk.POST_ACT_STAGE)
    assert "(float, str, GymEnv, PostActStage)" in str(info.value)
    assert "@rk.update.dispatch" in str(info.value)
    assert issubclass(rk.DispatchError, TypeError)


def test_ambiguous_methods_name_the_types(env):
    class Both(SpecialTape):
        pass

    class Policy(rk.RandomPolicy):
        pass

    @rk.update.dispatch
    def first(t: Both, p: rk.AbstractPolicy, e: rk.AbstractEnv, s: rk.PostEpisodeStage, /):
        return None

    @rk.update.dispatch
    def second(t: Tape, p: Policy, e: rk.AbstractEnv, s: rk.PostEpisodeStage, /):
        return None

    with pytest.raises(rk.DispatchError, match=r"more than one.*\(Both, Policy, GymEnv"):
        dispatch.resolve(rk.update, Both(), Policy(), env, rk.POST_EPISODE_STAGE)


def test_where_gives_file_and_line():
    assert dispatch.where(_line_of).endswith(f"test_dispatch.py:{_line_of('def _line_of')}")
    assert dispatch.where(rk.AbstractHook.post_act).startswith("rlkit/core/interfaces.py:")
    assert dispatch.where(len) == "?"  # no Python source


def test_where_of_code_run_from_a_text_file_is_unknown(tmp_path):
    """A README's example is compiled with the README as its file name: the lines there are not
    the function's source (they may not even tokenize)."""
    text = tmp_path / "README.md"
    text.write_text("A [link](\n\n```python\ndef f():\n    return 1\n```\n")
    namespace: dict = {}
    exec(compile("def f():\n    return 1\n", str(text), "exec"), namespace)
    assert dispatch.where(namespace["f"]) == "?"


def _line_of(text: str) -> int:
    lines = inspect.getsource(inspect.getmodule(_line_of)).splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(text))


# ---- statistics ----


def test_statistics_default_is_empty_and_methods_add_scalars():
    assert rk.statistics(object()) == {}
    assert rk.statistics(Lazy()) == {"loss": 1.5}


def test_collect_statistics_prefixes_the_parts():
    class WithLearner(rk.RandomPolicy):
        learner = Lazy()

    agent = rk.Agent(WithLearner(), Tape())
    assert collect_statistics(agent) == {"learner/loss": 1.5}
    assert collect_statistics(rk.RandomPolicy()) == {}


# ---- conventions of every registered method (docs/concepts/dispatch.md) ----


def _import_all_rlkit_modules() -> None:
    for info in pkgutil.walk_packages(rk.__path__, "rlkit."):
        importlib.import_module(info.name)
    importlib.import_module("rlkit.experiments")


def test_every_registered_method_follows_the_dispatch_rules():
    """Faithful types only (else plum never caches), positional-only, no return annotation."""
    _import_all_rlkit_modules()
    functions = dispatch._dispatch.functions
    assert set(functions) >= {"update", "run_loop", "statistics", "greedy", "compose", "restore"}
    problems = []
    for name, function in functions.items():
        function._resolve_pending_registrations()
        if not function._resolver.is_faithful:
            problems.append(f"{name}: a method has a non-faithful type in its signature")
        for method in function.methods:
            impl = method.implementation
            params = inspect.signature(impl).parameters.values()
            label = f"{name} method at {dispatch.where(impl)}"
            if inspect.signature(impl).return_annotation is not inspect.Signature.empty:
                problems.append(f"{label}: has a return annotation")
            if any(p.kind is not p.POSITIONAL_ONLY for p in params):
                problems.append(f"{label}: parameters must be positional-only (end with /)")
    assert problems == []


def test_where_in_a_clone_named_rlkit_tells_user_files_from_library_files(tmp_path):
    """A repository cloned into a folder named ``rlkit``: a user's file beside the package is
    not shown as one of rlkit's files (``rlkit/...``), the package's files are."""
    import shutil
    import subprocess
    import sys

    clone = tmp_path / "rlkit"
    source = Path(dispatch.__file__).resolve().parents[1]
    shutil.copytree(source, clone / "rlkit", ignore=shutil.ignore_patterns("__pycache__"))
    (clone / "my_learner.py").write_text("def learn():\n    pass\n")
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(clone)!r})\n"
        "import my_learner, rlkit.core.run\n"
        "from rlkit.core.dispatch import where\n"
        "print(rlkit.__file__)\n"
        "print(where(my_learner.learn))\n"
        "print(where(rlkit.core.run.run))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=clone, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    package, user, library = result.stdout.splitlines()
    assert package == str(clone / "rlkit" / "__init__.py")
    assert not user.startswith("rlkit/") and user.endswith("my_learner.py:1")
    assert re.fullmatch(r"rlkit/core/run\.py:\d+", library)
