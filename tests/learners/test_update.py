"""The default update(policy, batch) of a built policy (rlkit/learners/update.py): VPG trained by
rk.optimizers module trees, the loss and the KL as closures the tree evaluates as often as it
needs."""

import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.learners.policy_gradient.vpg import vpg_loss

NATURAL = {"type": "natural_gradient", "max_kl": 0.01, "cg_iterations": 10}
EVOLUTIONARY = {"type": "evolutionary", "learning_rate": 0.02, "num_samples": 4,
                "noise_std": 0.05}


def cartpole(seed=0):
    return rk.GymEnv("CartPole-v1", seed=seed)


def train(policy_class, n_steps=64, total=128, seed=0, **config):
    env = cartpole(seed)
    agent = policy_class.agent(env, seed=seed, n_steps=n_steps, **config)
    hook = rk.run(agent, env, rk.StopAfterNSteps(total), rk.TotalRewardPerEpisode())
    return agent.policy, hook


def counting(calls):
    def loss_fn(policy, model, dist_class, batch):
        calls.append(len(batch["state"]))
        return vpg_loss(policy, model, dist_class, batch)

    return loss_fn


def test_natural_gradient_step_meets_its_kl_bound():
    policy, _ = train(rk.VPG.with_updates(optimizer=rk.optimizers.make(NATURAL)))
    assert policy.updates == 2 and policy.gradient_steps == 2
    stats = rk.statistics(policy)
    # the quadratic model of the KL is max_kl; the true KL after the step is close to it
    assert 0.005 < stats["kl_divergence"] < 0.015, stats
    assert np.isfinite(stats["loss"]) and stats["grad_norm"] > 0


def test_a_non_finite_loss_names_the_function_and_the_update():
    def nan_loss(policy, model, dist_class, batch):
        loss, info = vpg_loss(policy, model, dist_class, batch)
        return loss * float("nan"), info

    Broken = rk.VPG.with_updates(loss_fn=nan_loss, optimizer=rk.optimizers.make(NATURAL))
    with pytest.raises(FloatingPointError, match=r"VPG: loss_fn .*nan_loss returned a "
                                                 r"non-finite loss nan at update 1"):
        train(Broken, total=64)


def test_evolutionary_evaluates_the_loss_at_every_perturbation():
    calls = []
    Counted = rk.VPG.with_updates(
        loss_fn=counting(calls), optimizer=rk.optimizers.make(EVOLUTIONARY)
    )
    policy, _ = train(Counted, total=64)
    assert calls == [64] * (2 * 4 + 1)  # base + 4 antithetic pairs, on the whole batch
    stats = rk.statistics(policy)
    assert 0.0 < stats["kl_divergence"]  # the parameters moved


def test_a_gradient_descent_module_steps_once_per_rollout():
    calls = []
    Counted = rk.VPG.with_updates(
        loss_fn=counting(calls), optimizer=rk.optimizers.make({"type": "adam", "lr": 1e-3})
    )
    policy, _ = train(Counted)
    assert calls == [64, 64] and policy.gradient_steps == 2


def test_multi_step_minibatches_index_the_closures():
    calls = []
    spec = {"type": "multi_step", "num_steps": 2, "minibatch_size": 16,
            "optimizer": {"type": "adam", "lr": 1e-3}}
    Counted = rk.VPG.with_updates(loss_fn=counting(calls), optimizer=rk.optimizers.make(spec))
    policy, _ = train(Counted, total=64)
    assert calls == [16] * 8  # 2 epochs of 4 minibatches
    assert policy.gradient_steps == 8


def test_the_same_seed_gives_the_same_run():
    Evolved = rk.VPG.with_updates(optimizer=rk.optimizers.make(EVOLUTIONARY))
    a, hook_a = train(Evolved)
    b, hook_b = train(Evolved)
    assert hook_a.rewards == hook_b.rewards
    assert all(torch.equal(p, q) for p, q in zip(a.params, b.params, strict=True))


def test_a_policy_built_on_vpg_learns_with_its_module():
    """A user's policy with base=rk.VPG gets VPG's learning step (the module path)."""

    def loss_fn(policy, model, dist_class, batch):
        dist = dist_class.from_inputs(model(batch["state"]), policy.action_space)
        return -(dist.log_prob(batch["action"]) * batch["advantages"]).mean()

    Mine = rk.build_policy(
        "Mine",
        loss_fn=loss_fn,
        postprocess_fn=rk.VPG.postprocess_fn,
        extra_action_out_fn=rk.VPG.extra_action_out_fn,
        model_fn=rk.VPG.model_fn,
        optimizer=rk.optimizers.make(NATURAL),
        defaults={**rk.VPG.defaults},
        base=rk.VPG,
    )
    policy, _ = train(Mine)
    assert policy.updates == 2 and 0.005 < rk.statistics(policy)["kl_divergence"] < 0.015


@pytest.mark.parametrize("config", [{"n_epochs": 2}, {"batch_size": 16}])
def test_epochs_and_minibatches_belong_to_the_module(config):
    Natural = rk.VPG.with_updates(optimizer=rk.optimizers.make(NATURAL))
    with pytest.raises(ValueError, match=r"VPG: with an optimizer module \(NaturalGradient\).*"
                                         r"n_epochs must be 1 and batch_size None"):
        train(Natural, total=64, **config)


def test_the_default_vpg_learns_with_its_gradient_tree():
    policy, _ = train(rk.VPG)
    assert "learning_rate" in rk.statistics(policy)  # the tree built from the hyperparameters
    assert isinstance(policy.optimizer, rk.optimizers.ClippedStep)
    assert policy.optimizer.on == "gradient"


def test_the_module_generators_derive_from_the_policy_seed():
    spec = {"type": "multi_step", "num_steps": 1, "minibatch_size": 8, "optimizer": EVOLUTIONARY}
    Evolved = rk.VPG.with_updates(optimizer=rk.optimizers.make(spec))
    policies = [Evolved(cartpole(), seed=0), Evolved(cartpole(), seed=0),
                Evolved(cartpole(), seed=1)]
    seeds = [p.optimizer.inner.seed for p in policies]
    assert seeds[0] == seeds[1] and seeds[0] != seeds[2]


def test_multi_step_shuffles_with_the_policy_generator():
    spec = {"type": "multi_step", "num_steps": 2, "minibatch_size": 16,
            "optimizer": {"type": "gradient_descent", "optimizer": "adam", "lr": 1e-3}}
    Mine = rk.VPG.with_updates(optimizer=rk.optimizers.make(spec))
    runs = [train(Mine, seed=seed)[0] for seed in (0, 0, 1)]
    params = [torch.cat([p.detach().flatten() for p in policy.params]) for policy in runs]
    assert torch.equal(params[0], params[1]) and not torch.equal(params[0], params[2])
    own = runs[0].optimizer.rng.bit_generator.state
    assert own == rk.optimizers.MultiStep(rk.optimizers.GradientDescent("sgd"), 1, 8).rng \
        .bit_generator.state  # the module's own generator was never used


def test_explain_names_the_module_learning_step(capsys):
    env = cartpole()
    Natural = rk.VPG.with_updates(name="NaturalVPG", optimizer=rk.optimizers.make(NATURAL))
    rk.explain(Natural.agent(env, n_steps=8), env)
    post_act = capsys.readouterr().out.split("PostAct:")[1]
    assert "rlkit/learners/drivers/on_policy.py" in post_act  # the driver first
    assert "update(NaturalVPG, Batch)" in post_act and "rlkit/learners/update.py" in post_act
    assert "loss_fn = rlkit.learners.policy_gradient.vpg.vpg_loss" in post_act
    assert "optimizer: NaturalGradient(max_kl=0.01" in post_act
    rk.explain(rk.PPO.agent(env, n_steps=8, batch_size=4), env)
    post_act = capsys.readouterr().out.split("PostAct:")[1]
    assert "optimizer: MultiStep(num_steps=10, minibatch_size=4" in post_act
    assert "ClippedStep(max_norm=0.5, on='gradient')" in post_act
    assert "GradientDescent(optimizer='adam'" in post_act
