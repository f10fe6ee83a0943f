"""rk.build_policy, with_updates, the learning step's errors and rk.explain."""

import gymnasium as gym
import numpy as np
import pytest
import torch
from user_reinforce import MyReinforce, reinforce_loss  # a user's module (tests/ is on the path)

import rlkit as rk
from rlkit.learners.policy_gradient import ppo


def cartpole(seed=0):
    return rk.GymEnv("CartPole-v1", seed=seed)


def test_user_algorithm_runs_learns_and_shows_in_explain(capsys):
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    agent = MyReinforce.agent(env, seed=0)
    before = [p.detach().clone() for p in agent.policy.params]
    rk.run(agent, env, rk.StopAfterNSteps(64))
    assert agent.policy.updates == 2
    assert any(not torch.equal(a, b) for a, b in zip(before, agent.policy.params, strict=True))
    rk.explain(agent, env)
    out = capsys.readouterr().out
    assert "loss_fn = user_reinforce.reinforce_loss" in out
    assert "postprocess_fn = user_reinforce.returns_to_go" in out
    assert "rlkit/learners/drivers/on_policy.py" in out  # the driver of user algorithms
    assert "extra_action_out_fn" not in out  # the user gave none
    env.close()


def test_ppo_explain_names_its_own_file(capsys):
    env = cartpole()
    rk.explain(rk.PPO.agent(env, n_steps=8, batch_size=8), env)
    out = capsys.readouterr().out
    post_act = out[out.index("PostAct:"):]
    assert "rlkit/learners/policy_gradient/ppo.py" in post_act
    assert "loss_fn = rlkit.learners.policy_gradient.ppo.ppo_loss" in post_act
    pre_act = out[out.index("PreAct:"):out.index("PostAct:")]
    assert "extra_action_out_fn = rlkit.learners.policy_gradient.functions." in pre_act


def test_with_updates_replaces_exactly_what_it_names():
    def other_loss(policy, model, dist_class, batch):
        return reinforce_loss(policy, model, dist_class, batch)

    New = rk.PPO.with_updates(loss_fn=other_loss, defaults={"n_epochs": 3})
    assert New.loss_fn is other_loss and rk.PPO.loss_fn is ppo.ppo_loss
    for name in ("postprocess_fn", "stats_fn", "extra_action_out_fn", "model_fn", "optimizer"):
        assert getattr(New, name) is getattr(rk.PPO, name)
    assert New.defaults["n_epochs"] == 3 and rk.PPO.defaults["n_epochs"] == 10
    assert {k: v for k, v in New.defaults.items() if k != "n_epochs"} == {
        k: v for k, v in rk.PPO.defaults.items() if k != "n_epochs"
    }
    assert issubclass(New, rk.PPO) and New.name == "PPO"


def test_with_updates_unknown_name_lists_the_known_ones():
    with pytest.raises(TypeError, match=r"unknown name\(s\) \['los_fn'\]; known: .*'loss_fn'"):
        rk.PPO.with_updates(los_fn=reinforce_loss)


def test_unknown_hyperparameter_lists_the_known_ones():
    with pytest.raises(TypeError, match=r"PPO: unknown hyperparameter\(s\) \['n_step'\].*n_steps"):
        rk.PPO(cartpole(), n_step=3)


def test_unsupported_action_space_is_refused():
    space = gym.spaces.Dict({"a": gym.spaces.Discrete(2)})
    with pytest.raises(TypeError, match="no action distribution supports .*Dict"):
        rk.PPO(state_space=gym.spaces.Box(-1, 1, (3,)), action_space=space)


def _learn_once(cls, n_steps=4):
    env = cartpole()
    agent = cls.agent(env, seed=0, n_steps=n_steps, batch_size=n_steps)
    rk.run(agent, env, rk.StopAfterNSteps(n_steps))


def test_non_scalar_loss_names_the_function_and_step():
    def vector_loss(policy, model, dist_class, batch):
        return model.value(batch["state"])

    with pytest.raises(ValueError, match=r"PPO: loss_fn .*vector_loss must return a scalar "
                       r"tensor, got \(4,\) at update 1 \(gradient step 1\)"):
        _learn_once(rk.PPO.with_updates(loss_fn=vector_loss))


def test_non_finite_loss_names_the_function_and_step():
    def nan_loss(policy, model, dist_class, batch):
        return model.value(batch["state"]).sum() * float("nan")

    with pytest.raises(FloatingPointError, match=r"loss_fn .*nan_loss returned a non-finite "
                       r"loss nan at update 1"):
        _learn_once(rk.PPO.with_updates(loss_fn=nan_loss))


def test_postprocess_dropping_a_key_names_the_key():
    def drop_returns(policy, batch):
        batch = ppo.add_advantages(policy, batch)
        del batch["returns"]
        return batch

    with pytest.raises(KeyError, match="no key 'returns'"):
        _learn_once(rk.PPO.with_updates(postprocess_fn=drop_returns))


def test_bad_build_arguments():
    with pytest.raises(TypeError, match="loss_fn must be callable"):
        rk.build_policy("X", loss_fn=3, model_fn=ppo.actor_critic_model,
                        optimizer=ppo.adam_optimizer, defaults={})
    with pytest.raises(ValueError, match="name must be an identifier"):
        rk.build_policy("a b", loss_fn=reinforce_loss, model_fn=ppo.actor_critic_model,
                        optimizer=ppo.adam_optimizer, defaults={})
    Bad = rk.PPO.with_updates(optimizer=lambda config: "not an optimizer")
    with pytest.raises(TypeError, match="optimizer must be an rk.optimizers module tree"):
        Bad(cartpole())


def test_an_optimizer_object_with_step_is_used():
    class Counting(rk.optimizers.GradientDescent):
        calls = 0

        def step(self, params, fn_loss, **fns):
            type(self).calls += 1
            return super().step(params, fn_loss, **fns)

    cls = rk.PPO.with_updates(
        optimizer=rk.optimizers.MultiStep(Counting(torch.optim.Adam), 2),
        defaults={"n_epochs": 1, "batch_size": None},
    )
    env = cartpole()
    rk.run(cls.agent(env, seed=0, n_steps=8), env, rk.StopAfterNSteps(8))
    assert Counting.calls == 2


def test_gradients_fn_runs_after_backpropagation():
    seen = []

    def zero_grads(params):
        seen.append(len(params))
        for p in params:
            p.grad.zero_()

    cls = rk.A2C.with_updates(gradients_fn=zero_grads)
    env = cartpole()
    agent = cls.agent(env, seed=0, n_steps=4)
    before = [p.detach().clone() for p in agent.policy.params]
    rk.run(agent, env, rk.StopAfterNSteps(4))
    assert seen and all(torch.equal(a, b) for a, b in zip(before, agent.policy.params,
                                                           strict=True))


def test_box_actions_clipped_when_stepping_but_stored_unclipped():
    env = rk.GymEnv("Pendulum-v1", seed=0)
    agent = rk.PPO.agent(env, seed=0, n_steps=64, batch_size=64, log_std_init=1.0)
    seen = []
    hook = lambda stage, policy, env, action=None: seen.append(action) if action is not None \
        else None  # noqa: E731
    rk.run(agent, env, rk.StopAfterNSteps(20), hook)
    stored = agent.trajectory.batch()["action"][:, 0, 0]
    sent = np.array([a[0] for a in seen])
    assert np.abs(stored).max() > 2.0  # std e: some samples leave [-2, 2]
    np.testing.assert_array_equal(sent, np.clip(stored, -2.0, 2.0))


def test_statistics_and_greedy():
    env = cartpole()
    agent = rk.PPO.agent(env, seed=0, n_steps=16, batch_size=8, n_epochs=2)
    rk.run(agent, env, rk.StopAfterNSteps(16))
    stats = rk.statistics(agent.policy)
    assert {"loss", "approx_kl", "clip_fraction", "learning_rate", "explained_variance"} <= set(
        stats
    )
    greedy = rk.greedy(agent)
    env.reset()
    assert greedy(env) == greedy(env)  # deterministic


def test_target_kl_stops_epochs_early():
    env = cartpole()
    agent = rk.PPO.agent(env, seed=0, n_steps=64, batch_size=16, n_epochs=50, lr=0.05,
                         target_kl=1e-4)
    rk.run(agent, env, rk.StopAfterNSteps(64))
    assert agent.policy.gradient_steps < 50 * 4
    assert "early_stop_epoch" in agent.policy.stats


@pytest.mark.parametrize("env", ["CartPole-v1", gym.make("CartPole-v1")])
def test_an_env_that_is_not_an_rlkit_env_is_refused_naming_the_wrapper(env):
    with pytest.raises(TypeError, match=r"PPO: env must be an rlkit environment .*rk\.GymEnv"):
        rk.PPO.agent(env)


def test_a_bad_or_unavailable_device_is_refused_at_construction():
    with pytest.raises(ValueError, match="PPO: device must be 'cpu', 'cuda'.*got 'gpu'"):
        rk.PPO(cartpole(), device="gpu")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="A2C: device 'cuda' was requested but"):
            rk.A2C(cartpole(), device="cuda")


def test_with_updates_checks_defaults_and_name():
    with pytest.raises(TypeError, match=r"PPO.with_updates: defaults must be a mapping, got \["):
        rk.PPO.with_updates(defaults=[("lr", 1e-3)])
    with pytest.raises(ValueError, match="with_updates: name must be an identifier, got 'my ppo'"):
        rk.PPO.with_updates(name="my ppo")


def test_a_model_fn_that_returns_no_module_is_named():
    Mine = rk.PPO.with_updates(name="Mine", model_fn=lambda *args: (64, 64))
    with pytest.raises(TypeError, match=r"Mine: model_fn .*<lambda> must return a torch.nn.Module, "
                       r"got tuple: \(64, 64\)"):
        Mine(cartpole())


def test_explain_of_the_ppo_class_prints_its_update_and_module_tree(capsys):
    rk.explain(rk.PPO)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("PPO: update(PPO, Batch)  [rlkit/learners/update.py:")
    tree = [line.strip().split("(")[0] for line in out if line.endswith(("step", "with"))]
    assert tree == ["MultiStep", "ClippedStep", "GradientDescent"]
    assert "ClippedStep(max_norm=0.5, on='gradient')" in "\n".join(out)
