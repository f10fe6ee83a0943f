"""Issue 21, items 7 and 20: build_policy checks the functions' signatures when the class is
built, the model against the spaces with one forward pass when a run is planned, and what
stats_fn / extra_action_out_fn return; model_fn's seed, ``hidden`` and ``policy.hp`` as a
newcomer meets them."""

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.core.seeding import int_seed
from rlkit.learners.policy_gradient.vpg import vpg_loss


def cartpole():
    return rk.GymEnv("CartPole-v1", seed=0)


def linear(n_in, n_out):
    def model_fn(state_space, action_space, dist_class, config, seed):
        torch.manual_seed(int_seed(seed))
        return torch.nn.Sequential(torch.nn.Linear(n_in, 8), torch.nn.Tanh(),
                                   torch.nn.Linear(8, n_out))

    return model_fn


def build(**functions):
    return rk.build_policy(
        "Mine",
        **{"loss_fn": vpg_loss, "model_fn": rk.VPG.model_fn,
           "optimizer": rk.optimizers.make({"type": "adam", "lr": 1e-3}),
           "postprocess_fn": rk.VPG.postprocess_fn,
           "extra_action_out_fn": rk.VPG.extra_action_out_fn,
           "defaults": dict(rk.VPG.defaults), **functions},
    )


# ---- signatures, when the class is built ----


def test_a_loss_fn_with_the_wrong_arguments_is_refused_when_built():
    def my_loss(policy, batch):
        return torch.zeros(())

    with pytest.raises(TypeError, match=r"build_policy\('Mine'\): loss_fn my_loss\(policy, "
                       r"batch\) cannot be called as loss_fn\(policy, model, dist_class, "
                       r"batch\) \(4 positional arguments\)"):
        build(loss_fn=my_loss)
    with pytest.raises(TypeError, match=r"build_policy\('PPO'\): loss_fn my_loss"):
        rk.PPO.with_updates(loss_fn=my_loss)


@pytest.mark.parametrize(
    ("key", "fn", "call"),
    [
        ("model_fn", lambda state_space, action_space, config: None,
         r"model_fn\(state_space, action_space, dist_class, config, seed\)"),
        ("stats_fn", lambda policy: {}, r"stats_fn\(policy, batch\)"),
        ("extra_action_out_fn", lambda policy, model, dist: {},
         r"extra_action_out_fn\(policy, model, dist, obs, actions\)"),
        ("postprocess_fn", lambda policy, batch, extra: batch, r"postprocess_fn\(policy, batch\)"),
        ("gradients_fn", lambda: None, r"gradients_fn\(params\)"),
    ],
)
def test_every_function_signature_is_checked_when_built(key, fn, call):
    with pytest.raises(TypeError, match=rf"build_policy\('Mine'\): {key} .* cannot be called "
                       rf"as {call}"):
        build(**{key: fn})


def test_signatures_with_defaults_and_var_args_are_accepted():
    def loss(policy, model, dist_class, batch, scale=1.0):
        return vpg_loss(policy, model, dist_class, batch)

    def stats(*args):
        return {}

    build(loss_fn=loss, stats_fn=stats)


# ---- the model, with one forward pass when the run is planned ----


def test_a_model_with_three_outputs_for_discrete_two_is_refused_by_explain():
    env = cartpole()
    agent = build(model_fn=linear(4, 3)).agent(env, seed=0)
    with pytest.raises(ValueError, match=r"Mine: the model of model_fn .*model_fn returns "
                       r"\(1, 3\) for a batch of one observation; the Categorical of the action "
                       r"space Discrete\(2\) needs \(1, 2\)"):
        rk.explain(agent, env)
    with pytest.raises(ValueError, match="returns \\(1, 3\\)"):
        rk.run(agent, env, rk.StopAfterNSteps(10))
    assert agent.policy.transitions == 0  # refused before the first step


def test_a_first_linear_sized_for_another_observation_names_the_spaces():
    env = cartpole()
    agent = build(model_fn=linear(5, 2)).agent(env, seed=0)
    with pytest.raises(ValueError, match=r"Mine: the model of model_fn .* cannot take one "
                       r"observation of the state space Box.*\(a tensor of shape \(1, 4\): 4 "
                       r"features; its first Linear takes 5\); torch says: mat1 and mat2"):
        rk.run(agent, env, rk.StopAfterNSteps(10))


def test_the_forward_pass_changes_no_random_stream_nor_batch_norm_statistics():
    def bn_model(state_space, action_space, dist_class, config, seed):
        torch.manual_seed(int_seed(seed))
        return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8),
                                   torch.nn.Dropout(0.5), torch.nn.Linear(8, 2))

    env = cartpole()
    policy = build(model_fn=bn_model)(env, seed=0)
    stats = policy.model[1].running_mean.clone()
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    rk.explain(rk.Agent(policy, rk.RolloutTrajectory(1, 1)), env)
    assert torch.equal(torch.rand(3), expected)
    assert torch.equal(policy.model[1].running_mean, stats) and policy.model.training


# ---- what stats_fn and extra_action_out_fn return ----


def test_a_stats_fn_returning_a_list_is_named():
    env = cartpole()
    agent = build(stats_fn=lambda policy, batch: [1.0]).agent(env, seed=0, n_steps=16)
    with pytest.raises(TypeError, match=r"Mine: stats_fn .*<lambda> must return a dict of "
                       r"name -> value, got list: \[1.0\]"):
        rk.run(agent, env, rk.StopAfterNSteps(16))


def test_an_extra_action_out_fn_returning_a_list_is_named():
    env = cartpole()
    Broken = build(extra_action_out_fn=lambda policy, model, dist, obs, actions: [1.0])
    with pytest.raises(TypeError, match=r"Mine: extra_action_out_fn .*<lambda> must return a "
                       r"dict of name -> value, got list"):
        rk.run(Broken.agent(env, seed=0, n_steps=16), env, rk.StopAfterNSteps(4))


# ---- item 20: model_fn's seed, hidden, policy.hp ----


def test_model_fn_gets_a_seed_sequence_that_int_seed_turns_into_a_torch_seed():
    seen = []

    def model_fn(state_space, action_space, dist_class, config, seed):
        seen.append(seed)
        torch.manual_seed(int_seed(seed))  # as the build_policy docstring shows
        return torch.nn.Linear(4, 2)

    a = build(model_fn=model_fn)(cartpole(), seed=3)
    b = build(model_fn=model_fn)(cartpole(), seed=3)
    assert isinstance(seen[0], np.random.SeedSequence)
    assert torch.equal(a.model.weight, b.model.weight)


def test_hidden_is_free_for_a_custom_model_and_an_int_for_rlkits():
    Mine = build(model_fn=linear(4, 2), defaults={**rk.VPG.defaults, "hidden": "my own"})
    assert Mine(cartpole()).hp("hidden") == "my own"
    policy = rk.PPO(cartpole(), hidden=32)  # one hidden layer of 32 units
    widths = [m.out_features for m in policy.model.modules() if isinstance(m, torch.nn.Linear)]
    assert 32 in widths and 64 not in widths
    with pytest.raises(ValueError, match=r"PPO: hidden must be .*got \(0,\)"):
        rk.PPO(cartpole(), hidden=(0,))


def test_hp_of_a_typo_names_the_policy_the_key_and_the_closest_name():
    policy = rk.PPO(cartpole(), n_steps=64, batch_size=32)
    with pytest.raises(KeyError) as caught:
        policy.hp("gama")
    assert str(caught.value).startswith(
        "PPO has no hyperparameter 'gama'; did you mean 'gamma'? known: ['activation', "
    )
    with pytest.raises(KeyError, match=r"PPO has no hyperparameter 'typo'; known: \["):
        policy.hp("typo")
