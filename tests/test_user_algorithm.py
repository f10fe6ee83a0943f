"""A new algorithm written outside the package with public names only: a loss and
``with_updates`` on PPO's hyperparameters (a clipped surrogate whose value loss is Huber instead
of PPO's squared error). It learns CartPole to a deterministic mean of at least 475 and
``rk.explain`` shows its update and loss."""

import pytest
import torch

import rlkit as rk


def huber_ppo_loss(policy, model, dist_class, batch):
    """The clipped surrogate plus ``vf_coef`` times a Huber value loss."""
    dist = dist_class.from_inputs(model(batch["state"]), policy.action_space)
    log_prob = dist.log_prob(batch["action"])
    advantages = batch["advantages"]
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
    ratio = torch.exp(log_prob - batch["log_prob"])
    clip = policy.hp("clip_range")
    surrogate = torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages)
    value_loss = torch.nn.functional.smooth_l1_loss(model.value(batch["state"]), batch["returns"])
    return -surrogate.mean() + policy.hp("vf_coef") * value_loss


HuberPPO = rk.PPO.with_updates(name="HuberPPO", loss_fn=huber_ppo_loss)
TOTAL = 100_000


def make_agent(seed=0):
    env = rk.VectorGymEnv("CartPole-v1", 8, seed=seed)
    agent = HuberPPO.agent(
        env, seed=seed, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20,
        lr=rk.LinearSchedule(1e-3, 0.0, TOTAL), clip_range=rk.LinearSchedule(0.2, 0.0, TOTAL),
    )
    return agent, env


def test_the_new_algorithm_shows_in_explain(capsys):
    agent, env = make_agent()
    rk.explain(agent, env)
    post_act = capsys.readouterr().out.split("PostAct:")[1]
    assert "rlkit/learners/drivers/on_policy.py" in post_act
    assert "update(HuberPPO, Batch)" in post_act
    assert "huber_ppo_loss  [tests/test_user_algorithm.py:" in post_act
    assert "MultiStep(num_steps=20, minibatch_size=256" in post_act
    env.close()


@pytest.mark.slow
def test_the_new_algorithm_learns_cartpole():
    agent, env = make_agent(seed=0)
    rk.run(agent, env, rk.StopAfterNSteps(TOTAL))
    env.close()
    result = rk.evaluate(agent, rk.GymEnv("CartPole-v1"), n_episodes=10, seed=0)
    assert result.mean >= 475, result
