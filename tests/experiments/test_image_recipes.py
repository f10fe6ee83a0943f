"""The pixel recipes (experiments/images.py): DQN_MinAtarBreakout, Rainbow_MinAtarBreakout and
DQN_Pong, tiny."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch
from state_helpers import assert_same

import rlkit as rk
from rlkit.core.state import get_state
from rlkit.hooks.checkpoint import CheckpointHook

pytest.importorskip("minatar")

TINY = {"total_steps": 400, "learning_starts": 100, "buffer_size": 500, "batch_size": 16}


def params_of(exp: rk.Experiment) -> list[torch.Tensor]:
    return [p.detach().clone() for p in exp.policy.policy.learner.approximator.model.parameters()]


def test_minatar_breakout_smoke_run_learns_from_uint8_and_is_reproducible():
    a = rk.make_experiment("DQN_MinAtarBreakout", seed=3, **TINY)
    learner = a.policy.policy.learner
    assert a.env.state_space.shape == (4, 10, 10) and a.env.state_space.dtype == np.uint8
    assert learner.pixels and a.policy.trajectory.state.dtype == np.uint8
    before = params_of(a)
    hook = rk.run(a)
    assert learner.gradient_steps == (400 - 100) // 4
    assert len(hook.rewards) > 0
    assert not all(torch.equal(x, y) for x, y in zip(before, params_of(a), strict=True))
    batch = learner.batches(a.policy.trajectory, 1).__next__()
    assert batch["state"].dtype == torch.uint8  # uint8 on the way into the network
    b = rk.make_experiment("DQN_MinAtarBreakout", seed=3, **TINY)
    rk.run(b)
    assert all(torch.equal(x, y) for x, y in zip(params_of(a), params_of(b), strict=True))


def test_other_minatar_games_by_env():
    exp = rk.make_experiment(
        "DQN_MinAtarBreakout", env="MinAtar/SpaceInvaders-v1", total_steps=50
    )
    assert exp.env.state_space.shape == (6, 10, 10)
    rk.run(exp)


def test_refuses_a_game_that_is_neither_atari_nor_minatar():
    with pytest.raises(ValueError, match="DQN_MinAtarBreakout: env must be an Atari id"):
        rk.make_experiment("DQN_MinAtarBreakout", env="CartPole-v1")
    with pytest.raises(ValueError, match="cnn must be one of"):
        rk.make_experiment("DQN_Pong", cnn="impala")


def test_missing_extra_names_the_exact_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "minatar", None)
    monkeypatch.setitem(sys.modules, "minatar.gym", None)
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'minatar>=1\.0\.15'"):
        rk.make_experiment("DQN_MinAtarBreakout")
    monkeypatch.setitem(sys.modules, "ale_py", None)
    with pytest.raises(
        ModuleNotFoundError,
        match=r"DQN_Pong needs .*pip install 'ale-py>=0\.9' 'opencv-python-headless>=4\.8'",
    ):
        rk.make_experiment("DQN_Pong")


def test_pong_smoke_run_with_frame_stack_replay():
    pytest.importorskip("ale_py")
    exp = rk.make_experiment(
        "DQN_Pong", total_steps=120, learning_starts=80, buffer_size=200, batch_size=4
    )
    replay = exp.policy.trajectory
    assert isinstance(replay, rk.FrameStackReplay)
    assert exp.env.state_space.shape == (4, 84, 84)
    rk.run(exp)
    assert exp.policy.policy.learner.gradient_steps == (120 - 80) // 4
    assert replay.nbytes / replay.capacity <= 1.1 * 84 * 84


class Boom(RuntimeError):
    pass


class Trap(rk.AbstractHook):
    def __init__(self, at=None):
        self.at, self.t = at, 0

    def post_act(self, policy, env):
        self.t += 1
        if self.t == self.at:
            raise Boom

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


def _run(folder, trap, resume=False, name="DQN_MinAtarBreakout"):
    exp = rk.make_experiment(name, seed=1, **TINY)
    hook = exp.hook + trap + CheckpointHook(folder, every_n_steps=150)
    rk.run(exp.policy, exp.env, exp.stop_condition, hook, resume_from=folder if resume else None)
    return exp, hook


@pytest.mark.parametrize("name", ["DQN_MinAtarBreakout", "Rainbow_MinAtarBreakout"])
def test_kill_and_resume_is_bit_exact(tmp_path, name):
    """Rainbow's too: its noise generator, the prioritized replay's sum tree and beta."""
    reference, ref_hook = _run(tmp_path / "reference", Trap(), name=name)
    with pytest.raises(Boom):
        _run(tmp_path / "run", Trap(at=370), name=name)  # the last checkpoint: step 300
    resumed, hook = _run(tmp_path / "run", Trap(), resume=True, name=name)
    assert hook[rk.TotalRewardPerEpisode].rewards == ref_hook[rk.TotalRewardPerEpisode].rewards
    assert_same(get_state(resumed.policy), get_state(reference.policy), "agent")
    assert_same(get_state(resumed.env), get_state(reference.env), "env")


@pytest.mark.parametrize("variant", ["double", "dueling", "qr_dqn", "n_step"])
def test_the_dqn_family_learns_from_pixels(variant):
    """Double DQN, a dueling CNN, QR-DQN and n-step returns on MinAtar through the recipe's
    ``make_learner``/``model`` hooks (how a learner swap is made)."""
    from rlkit.experiments.dqn import replay_sampler, zoo_controller
    from rlkit.experiments.images import MINATAR_DQN, image_dqn_experiment, image_q_approximator

    p = MINATAR_DQN.__class__(**{**MINATAR_DQN.__dict__, **TINY})
    if variant == "n_step":
        p = p.__class__(**{**p.__dict__, "n_step": 3})
    head = {"dueling": {"dueling": True}, "qr_dqn": {"n_quantiles": 5}}.get(variant, {})

    def model(env, p, seed):
        return image_q_approximator(env, p, seed, **head)

    def make_learner(q, p, s):
        common = {
            "target": rk.TargetNetwork(q, sync_every=p.target_update_interval),
            "sampler": replay_sampler(p, s.sampler),
            "controller": zoo_controller(p),
            "gamma": p.gamma,
        }
        if variant == "qr_dqn":
            return rk.QRDQNLearner(q, n_quantiles=5, **common)
        return rk.DQNLearner(q, double=variant == "double", **common)

    exp = image_dqn_experiment(p, 0, "test", make_learner=make_learner, model=model)
    rk.run(exp)
    learner = exp.policy.policy.learner
    assert learner.pixels and learner.gradient_steps == (400 - 100) // 4
    assert np.isfinite(learner.loss)


def test_vector_env_image_recipe():
    exp = rk.make_experiment("DQN_MinAtarBreakout", n_envs=2, **TINY)
    assert isinstance(exp.env, rk.VectorGymEnv)
    rk.run(exp)
    assert exp.policy.policy.learner.gradient_steps == (400 - 100) // 4


def test_the_recipes_hyperparameters():
    exp = rk.make_experiment("DQN_MinAtarBreakout", seed=0)
    learner, explorer = exp.policy.policy.learner, exp.policy.policy.explorer
    assert exp.stop_condition.n == 10_000_000
    assert learner.approximator.lr == pytest.approx(1e-4)
    assert learner.approximator.optimizer.param_groups[0]["eps"] == pytest.approx(3.125e-4)
    assert learner.approximator.max_grad_norm is None and learner.sampler.batch_size == 32
    assert exp.policy.trajectory.capacity == 100_000 and learner.gamma == 0.99
    assert learner.target.sync_every == 1000
    assert explorer.epsilon_at(250_000) == pytest.approx(0.01)
    assert explorer.epsilon_at(125_000 + 1000) < 0.6
    pytest.importorskip("ale_py")
    pong = rk.make_experiment("DQN_Pong", seed=0)
    learner = pong.policy.policy.learner
    assert learner.approximator.max_grad_norm == 10.0 and learner.approximator.lr == 1e-4
    assert pong.policy.trajectory.capacity == 100_000
    convs = [m for m in learner.approximator.model.modules() if isinstance(m, torch.nn.Conv2d)]
    assert [c.out_channels for c in convs] == [32, 64, 64]


# ---- Rainbow_MinAtarBreakout ----


def test_rainbow_minatar_smoke_run_learns_from_uint8_and_is_reproducible():
    a = rk.make_experiment("Rainbow_MinAtarBreakout", seed=3, **TINY)
    learner, replay = a.policy.policy.learner, a.policy.trajectory
    assert isinstance(learner, rk.RainbowLearner) and learner.pixels
    assert isinstance(replay, rk.PrioritizedCircularArraySARTTrajectory)
    assert replay.state.dtype == np.uint8
    before = params_of(a)
    hook = rk.run(a)
    assert learner.gradient_steps == (400 - 100) // 4 and np.isfinite(learner.loss)
    assert len(hook.rewards) > 0
    assert not all(torch.equal(x, y) for x, y in zip(before, params_of(a), strict=True))
    assert learner.batches(replay, 1).__next__()["state"].dtype == torch.uint8
    b = rk.make_experiment("Rainbow_MinAtarBreakout", seed=3, **TINY)
    rk.run(b)
    assert all(torch.equal(x, y) for x, y in zip(params_of(a), params_of(b), strict=True))
    c = rk.make_experiment("Rainbow_MinAtarBreakout", seed=4, **TINY)
    assert not all(torch.equal(x, y) for x, y in zip(before, params_of(c), strict=True))


def test_rainbow_minatar_hyperparameters():
    from rlkit.approximators.cnn import ImageEncoder
    from rlkit.approximators.distributional import CategoricalDuelingHead, NoisyLinear

    exp = rk.make_experiment("Rainbow_MinAtarBreakout", seed=0)
    learner, explorer = exp.policy.policy.learner, exp.policy.policy.explorer
    replay, model = exp.policy.trajectory, learner.approximator.model
    assert exp.stop_condition.n == 10_000_000
    assert (learner.n_atoms, learner.v_min, learner.v_max) == (51, -100.0, 100.0)
    assert learner.double and learner.gamma == 0.99 and learner.sampler.batch_size == 32
    assert learner.sampler.n == 3 and learner.target.sync_every == 1000
    assert learner.approximator.lr == pytest.approx(1e-4)
    assert learner.approximator.optimizer.param_groups[0]["eps"] == pytest.approx(3.125e-4)
    assert learner.approximator.max_grad_norm is None
    assert replay.capacity == 100_000 and replay.alpha == 0.5
    assert replay.beta_start == replay.beta_end == 0.5  # Dopamine holds beta at 0.5
    assert explorer.epsilon_at(999) == 1.0  # the random warm-up of learning_starts actions
    assert explorer.epsilon_at(1000) == explorer.epsilon_at(500_000) == 0.0  # the noise explores
    assert isinstance(model[0], ImageEncoder) and model[0].cnn == "minatar"
    assert isinstance(model[-1], CategoricalDuelingHead)
    assert any(isinstance(m, NoisyLinear) for m in model.modules())
    linears = [m for m in model.modules() if type(m) is torch.nn.Linear]
    assert [m.out_features for m in linears] == [128]  # MinAtar's 128-unit layer


def test_rainbow_minatar_refuses_bad_values_naming_the_recipe():
    with pytest.raises(ValueError, match="Rainbow_MinAtarBreakout.*v_min"):
        rk.make_experiment("Rainbow_MinAtarBreakout", v_min=10.0, v_max=-10.0)
    with pytest.raises(ValueError, match="Rainbow_MinAtarBreakout.*n_atoms"):
        rk.make_experiment("Rainbow_MinAtarBreakout", n_atoms=1)
    with pytest.raises(TypeError, match="Rainbow_MinAtarBreakout.*double"):
        rk.make_experiment("Rainbow_MinAtarBreakout", double="yes")
    with pytest.raises(ValueError, match="Rainbow_MinAtarBreakout: env must be"):
        rk.make_experiment("Rainbow_MinAtarBreakout", env="CartPole-v1")


def test_rainbow_minatar_missing_extra_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "minatar", None)
    monkeypatch.setitem(sys.modules, "minatar.gym", None)
    message = r"Rainbow_MinAtarBreakout needs .*pip install 'minatar>=1\.0\.15'"
    with pytest.raises(ModuleNotFoundError, match=message):
        rk.make_experiment("Rainbow_MinAtarBreakout")
