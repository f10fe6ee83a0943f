"""rlkit's PPO, A2C, SAC, TD3 and DDPG against Stable-Baselines3's, update for update.

PPO and A2C (CartPole's spaces, 4 envs): both sides start from the same weights and learn from
the same rollout (states, actions, rewards, terminations, and the values and log-probabilities
of the shared initial network), PPO with one minibatch of the whole rollout per epoch
(shuffling only reorders a mean) and the entropy bonus on; GAE, advantage normalisation, the
clipped surrogate, the value loss, gradient clipping and the optimizer (Adam, or A2C's RMSprop)
are then compared through the weights they produce after ``--updates`` updates.

SAC, TD3 and DDPG (Pendulum's spaces):
both sides start from the same weights (SB3's, copied into rlkit's networks), take ``--steps``
gradient steps on the same batches (SB3's replay sampling is replaced by the same arrays) with
the same noise (SB3 draws the actor's and the target policy's noise from torch's global
generator, rlkit from its training generator; both are seeded alike, and both draw in the same
order), and the largest absolute difference over every weight of every network (targets
included) and SAC's entropy coefficient is printed. The learning rules are the same when it
stays at float32 rounding (1e-7 here; rlkit's fused Adam rounds differently from SB3's). The
script exits 1 when a difference exceeds ``--tolerance``. Needs stable-baselines3. Usage::

    python benchmarks/sb3_equivalence.py [--steps 5] [--updates 3] [--batch-size 32]
        [--tolerance 1e-5]
"""

from __future__ import annotations

import argparse
import sys

import gymnasium as gym
import numpy as np
import torch

import rlkit as rk
from rlkit.learners.batch import Batch
from rlkit.learners.builder import learn
from rlkit.trajectories.rollout import RolloutTrajectory

N_STEPS, N_ENVS = 16, 4


def _linears(module: torch.nn.Module) -> list[torch.nn.Linear]:
    return [m for m in module.modules() if isinstance(m, torch.nn.Linear)]


def _pairs(algo: str, model, sb3_model) -> list[tuple[torch.nn.Linear, torch.nn.Linear]]:
    """(rlkit layer, SB3 layer) for every linear layer of every network."""
    if algo == "SAC":
        actor = sb3_model.actor
        pairs = list(
            zip(
                _linears(model.actor),
                [*_linears(actor.latent_pi), actor.mu, actor.log_std],
                strict=True,
            )
        )
    else:
        pairs = list(zip(_linears(model.actor), _linears(sb3_model.actor.mu), strict=True))
        pairs += zip(_linears(model.actor_target), _linears(sb3_model.actor_target.mu), strict=True)
    for ours, theirs in (
        (model.critic, sb3_model.critic),
        (model.critic_target, sb3_model.critic_target),
    ):
        for q, sb3_q in zip(ours.qs, theirs.q_networks, strict=True):
            pairs += zip(_linears(q), _linears(sb3_q), strict=True)
    return pairs


def _batches(
    steps: int, batch_size: int, n_obs: int, n_actions: int
) -> list[tuple[np.ndarray, ...]]:
    g = np.random.default_rng(1)
    out = []
    for _ in range(steps):
        obs, next_obs = (g.normal(size=(batch_size, n_obs)).astype(np.float32) for _ in range(2))
        actions = g.uniform(-1, 1, size=(batch_size, n_actions)).astype(np.float32)
        rewards = g.normal(size=(batch_size, 1)).astype(np.float32)
        dones = (g.random((batch_size, 1)) < 0.1).astype(np.float32)
        out.append((obs, actions, rewards, next_obs, dones))
    return out


def compare(algo: str, steps: int, batch_size: int, hidden: tuple[int, ...]) -> float:
    """The largest |rlkit - SB3| after ``steps`` gradient steps of ``algo`` on Pendulum's spaces."""
    import stable_baselines3 as sb3
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.type_aliases import ReplayBufferSamples

    env = gym.make("Pendulum-v1")
    sb3_model = getattr(sb3, algo)(
        "MlpPolicy",
        env,
        learning_starts=0,
        batch_size=batch_size,
        seed=0,
        device="cpu",
        policy_kwargs={"net_arch": list(hidden)},
    )
    sb3_model.set_logger(configure(None, []))
    policy = getattr(rk, algo)(
        rk.GymEnv("Pendulum-v1", seed=0),
        seed=0,
        hidden=hidden,
        batch_size=batch_size,
        learning_starts=0,
    )
    model = policy.model
    pairs = _pairs(algo, model, sb3_model)
    with torch.no_grad():
        for ours, theirs in pairs:
            ours.weight.copy_(theirs.weight)
            ours.bias.copy_(theirs.bias)
        if algo == "SAC":
            model.log_ent_coef.copy_(sb3_model.log_ent_coef.reshape(model.log_ent_coef.shape))
    data = _batches(steps, batch_size, 3, 1)
    replay = iter(data)

    def sample(batch_size: int, env=None) -> ReplayBufferSamples:
        obs, actions, rewards, next_obs, dones = (torch.as_tensor(x) for x in next(replay))
        return ReplayBufferSamples(obs, actions, next_obs, dones, rewards)

    sb3_model.replay_buffer.sample = sample
    torch.manual_seed(123)
    sb3_model.train(gradient_steps=steps, batch_size=batch_size)
    policy.train_generator = torch.Generator().manual_seed(123)
    for obs, actions, rewards, next_obs, dones in data:
        batch = Batch(
            state=torch.as_tensor(obs),
            action=torch.as_tensor(actions),
            reward=torch.as_tensor(rewards[:, 0]),
            terminal=torch.as_tensor(dones[:, 0]),
            next_state=torch.as_tensor(next_obs),
        )
        rk.update(policy, batch)
    with torch.no_grad():
        worst = max(
            float((a - b).abs().max())
            for ours, theirs in pairs
            for a, b in ((ours.weight, theirs.weight), (ours.bias, theirs.bias))
        )
        if algo == "SAC":
            worst = max(worst, abs(float(model.log_ent_coef) - float(sb3_model.log_ent_coef)))
    return worst


def _on_policy_pairs(model, sb3_policy) -> list[tuple[torch.nn.Linear, torch.nn.Linear]]:
    pi = [*_linears(sb3_policy.mlp_extractor.policy_net), sb3_policy.action_net]
    vf = [*_linears(sb3_policy.mlp_extractor.value_net), sb3_policy.value_net]
    return [
        *zip(_linears(model.pi), pi, strict=True),
        *zip(_linears(model.vf), vf, strict=True),
    ]


def _rollout(sb3_policy, g: np.random.Generator) -> dict[str, np.ndarray]:
    """A CartPole-shaped rollout with the values and log-probabilities of ``sb3_policy``."""
    obs = g.normal(size=(N_STEPS + 1, N_ENVS, 4)).astype(np.float32)
    actions = g.integers(0, 2, size=(N_STEPS, N_ENVS))
    terminated = g.random((N_STEPS, N_ENVS)) < 0.1
    final = obs[1:].copy()
    final[terminated] = g.normal(size=(int(terminated.sum()), 4))  # the real last observation
    with torch.no_grad():
        flat = torch.as_tensor(obs[:N_STEPS].reshape(-1, 4))
        values, log_prob, _ = sb3_policy.evaluate_actions(flat, torch.as_tensor(actions.ravel()))
        last = sb3_policy.predict_values(torch.as_tensor(obs[N_STEPS])).numpy().ravel()
    return {
        "obs": obs,
        "actions": actions,
        "rewards": g.normal(size=(N_STEPS, N_ENVS)),
        "terminated": terminated,
        "final": final,
        "last_values": last,
        "values": values.numpy().reshape(N_STEPS, N_ENVS),
        "log_prob": log_prob.numpy().reshape(N_STEPS, N_ENVS),
    }


def _fill_sb3(sb3_model, r: dict[str, np.ndarray]) -> None:
    buffer = sb3_model.rollout_buffer
    buffer.reset()
    starts = np.zeros(N_ENVS, dtype=np.float32)
    for t in range(N_STEPS):
        buffer.add(
            r["obs"][t],
            r["actions"][t][:, None],
            r["rewards"][t],
            starts,
            torch.as_tensor(r["values"][t]),
            torch.as_tensor(r["log_prob"][t]),
        )
        starts = r["terminated"][t].astype(np.float32)
    buffer.compute_returns_and_advantage(torch.as_tensor(r["last_values"]), r["terminated"][-1])


def _fill_rlkit(r: dict[str, np.ndarray]) -> RolloutTrajectory:
    trajectory = RolloutTrajectory(N_STEPS, N_ENVS)
    for t in range(N_STEPS):
        extras = {"value": r["values"][t], "log_prob": r["log_prob"][t]}
        trajectory.write_action(r["obs"][t], r["actions"][t], extras)
        truncated = np.zeros(N_ENVS, dtype=bool)
        trajectory.write_outcome(r["rewards"][t], r["terminated"][t], truncated, r["final"][t])
    return trajectory


def compare_on_policy(algo: str, updates: int) -> float:
    """The largest |rlkit - SB3| over the weights after ``updates`` updates of PPO or A2C."""
    import stable_baselines3 as sb3
    from stable_baselines3.common.logger import configure

    settings = {"n_steps": N_STEPS, "gamma": 0.99, "gae_lambda": 0.95, "ent_coef": 0.01}
    if algo == "PPO":
        settings.update(batch_size=N_STEPS * N_ENVS, n_epochs=4)
    sb3_model = getattr(sb3, algo)(
        "MlpPolicy",
        sb3.common.env_util.make_vec_env("CartPole-v1", N_ENVS),
        seed=0,
        device="cpu",
        **settings,
    )
    sb3_model.set_logger(configure(None, []))
    env = rk.VectorGymEnv("CartPole-v1", N_ENVS, seed=0)
    policy = getattr(rk, algo)(env, seed=0, **settings)
    pairs = _on_policy_pairs(policy.model, sb3_model.policy)
    with torch.no_grad():
        for ours, theirs in pairs:
            ours.weight.copy_(theirs.weight)
            ours.bias.copy_(theirs.bias)
    g = np.random.default_rng(2)
    for _ in range(updates):
        rollout = _rollout(sb3_model.policy, g)  # the shared network's values, as acting would
        _fill_sb3(sb3_model, rollout)
        sb3_model.train()
        learn(policy, _fill_rlkit(rollout))
    env.close()
    with torch.no_grad():
        return max(
            float((a - b).abs().max())
            for ours, theirs in pairs
            for a, b in ((ours.weight, theirs.weight), (ours.bias, theirs.bias))
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--updates", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    failed = False
    for algo in ("PPO", "A2C"):
        worst = compare_on_policy(algo, args.updates)
        ok = worst <= args.tolerance
        failed |= not ok
        print(
            f"{algo}: {args.updates} updates, max |rlkit - SB3| {worst:.2e} "
            f"({'same' if ok else 'DIFFERENT'})"
        )
    for algo in ("SAC", "TD3", "DDPG"):
        worst = compare(algo, args.steps, args.batch_size, (64, 64))
        ok = worst <= args.tolerance
        failed |= not ok
        print(
            f"{algo}: {args.steps} gradient steps, max |rlkit - SB3| {worst:.2e} "
            f"({'same' if ok else 'DIFFERENT'})"
        )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
