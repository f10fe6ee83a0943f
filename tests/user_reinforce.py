"""A user's own algorithm, written outside rlkit with public names only (rk.build_policy and
torch; used by test_builder and test_user_algorithm)."""

import numpy as np
import torch

import rlkit as rk


class PolicyAndValue(torch.nn.Module):
    """``model(obs)``: the action distribution's inputs; ``model.value(obs)``: V(s)."""

    def __init__(self, n_obs: int, n_out: int, seed) -> None:
        super().__init__()
        torch.manual_seed(int(seed.generate_state(1)[0]))
        self.pi = torch.nn.Sequential(torch.nn.Linear(n_obs, 64), torch.nn.Tanh(),
                                      torch.nn.Linear(64, n_out))
        self.vf = torch.nn.Sequential(torch.nn.Linear(n_obs, 64), torch.nn.Tanh(),
                                      torch.nn.Linear(64, 1))

    def forward(self, obs):
        return self.pi(obs)

    def value(self, obs):
        return self.vf(obs).squeeze(-1)


def model_fn(state_space, action_space, dist_class, config, seed):
    return PolicyAndValue(int(np.prod(state_space.shape)), int(action_space.n), seed)


def returns_to_go(policy, batch):
    """Discounted returns within each env's episodes (cut at the rollout's end)."""
    reward, done = batch["reward"], batch["terminated"] | batch["truncated"]
    returns = np.zeros_like(reward, dtype=np.float32)
    running = np.zeros(reward.shape[1], dtype=np.float32)
    for t in reversed(range(len(reward))):
        running = reward[t] + policy.hp("gamma") * running * (1.0 - done[t])
        returns[t] = running
    return {**batch, "returns": returns}


def reinforce_loss(policy, model, dist_class, batch):
    dist = dist_class.from_inputs(model(batch["state"]), policy.action_space)
    return -(dist.log_prob(batch["action"]) * batch["returns"]).mean()


def adam(config):
    return rk.optimizers.GradientDescent("adam", lr=config["lr"])


MyReinforce = rk.build_policy(
    "MyReinforce",
    loss_fn=reinforce_loss,
    postprocess_fn=returns_to_go,
    model_fn=model_fn,
    optimizer=adam,
    defaults={"lr": 1e-2, "gamma": 0.99, "n_steps": 16},
)
