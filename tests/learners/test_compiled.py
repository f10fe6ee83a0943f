"""compile=True (rlkit/learners/compiled.py): a compiled update learns the same numbers as the
eager one (to float rounding), and learners that cannot be compiled say so."""

from __future__ import annotations

import pytest
import torch

import rlkit as rk
from rlkit.core.experiment import _recipe, recipe_parameters


def _params(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _assert_close(eager: dict, compiled: dict, before: dict) -> None:
    assert eager.keys() == compiled.keys()
    moved = [k for k in eager if not torch.equal(eager[k], before[k])]
    assert moved, "the update moved no parameter"
    for key in eager:
        torch.testing.assert_close(compiled[key], eager[key], rtol=1e-5, atol=1e-6, msg=key)


def _trained(make, steps: int, compile: bool):  # noqa: A002
    torch.manual_seed(0)
    agent, env, model_of = make(compile)
    before = _params(model_of(agent))
    rk.run(agent, env, rk.StopAfterNSteps(steps))
    return before, _params(model_of(agent)), agent


def _ppo(compile: bool):  # noqa: A002
    env = rk.GymEnv("CartPole-v1", seed=0)
    agent = rk.PPO.agent(
        env, seed=0, n_steps=32, batch_size=16, n_epochs=2, hidden=(16,), compile=compile
    )
    return agent, env, lambda a: a.policy.model


def _sac(compile: bool):  # noqa: A002
    env = rk.GymEnv("Pendulum-v1", seed=0)
    agent = rk.SAC.agent(
        env, seed=0, learning_starts=20, batch_size=16, hidden=(16,), compile=compile
    )
    return agent, env, lambda a: a.policy.model


def _td3(compile: bool):  # noqa: A002
    env = rk.GymEnv("Pendulum-v1", seed=0)
    agent = rk.TD3.agent(
        env, seed=0, learning_starts=20, batch_size=16, hidden=(16,), policy_delay=1,
        action_noise=rk.GaussianActionNoise(0.1), compile=compile,
    )  # fmt: skip
    return agent, env, lambda a: a.policy.model


def _dqn(compile: bool):  # noqa: A002
    experiment = rk.make_experiment(
        "DQN_CartPole", seed=0, total_steps=1100, learning_starts=1000, train_freq=16,
        gradient_steps=2, hidden=(16,), compile=compile,
    )  # fmt: skip
    return experiment.policy, experiment.env, lambda a: a.policy.learner.model


def test_compiled_ppo_update_equals_eager():
    """One PPO update (2 epochs of 2 minibatches, clipped Adam steps), eager and compiled."""
    before, eager, _ = _trained(_ppo, 32, compile=False)
    before_c, compiled, agent = _trained(_ppo, 32, compile=True)
    assert agent.policy.updates == 1 and agent.policy.compile_mode == "default"
    _assert_close(eager, compiled, before)
    for key in before:
        assert torch.equal(before[key], before_c[key])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("make", "steps"), [(_sac, 23), (_td3, 23), (_dqn, 1104)], ids=["SAC", "TD3", "DQN"]
)
def test_compiled_updates_equal_eager(make, steps):
    """A few gradient steps of SAC (entropy coefficient, critics, actor, Polyak targets), TD3
    (critics, actor, targets) and DQN (Huber loss, clipped Adam), eager and compiled."""
    before, eager, _ = _trained(make, steps, compile=False)
    _, compiled, _ = _trained(make, steps, compile=True)
    _assert_close(eager, compiled, before)


def test_compile_refused_where_unsupported():
    env = rk.GymEnv("CartPole-v1")
    with pytest.raises(ValueError, match="TRPO: compile=True is not supported"):
        rk.TRPO(env, compile=True)
    with pytest.raises(ValueError, match="ES: compile=True is not supported"):
        rk.ES(env, compile=True)
    with pytest.raises(ValueError, match=r"PPO: compile must be True, False or a torch.compile"):
        rk.PPO(env, compile="fast")
    with pytest.raises(ValueError, match="TRPO_CartPole: compile=True is not supported|TRPO:"):
        rk.make_experiment("TRPO_CartPole", compile=True)


_FAMILIES = ("policy_gradient", "continuous", "dqn", "optimizers")  # the online deep recipes


def test_compile_is_a_parameter_of_every_online_deep_recipe():
    checked = 0
    for name in rk.list_experiments():
        params = recipe_parameters(name)
        family = _recipe(name).__module__.rsplit(".", 1)[-1]
        if family in _FAMILIES:
            assert "compile" in params, name
            assert params["compile"].default is False, name
            checked += 1
    assert checked >= 15  # PPO, A2C, VPG, TRPO, ES, DQN-family, SAC, TD3, DDPG recipes
