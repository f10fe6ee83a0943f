"""Semantics check of RecurrentPPO against sb3-contrib (no training): rlkit's LSTM model, given
sb3-contrib's ``MlpLstmPolicy`` weights and the hidden states sb3-contrib's rollout stored,
replays that rollout through rlkit's sequence cutting (``sequence_batch``: sequences cut at
episode starts, each started from its stored state, padding masked) and must give the
log-probabilities and values sb3-contrib stored while acting. A difference in how hidden states
are stored, reset at episode starts or replayed would show here.

Usage::

    python benchmarks/recurrent_replay.py [--rollouts 3]

Needs ``sb3-contrib``. The output is in benchmarks/results_recurrent.txt.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np
import torch

import rlkit as rk  # noqa: F401 - registers rlkit/CartPoleNoVel-v1
from rlkit.learners.policy_gradient.recurrent import sequence_batch
from rlkit.learners.policy_gradient.recurrent_models import RecurrentActorCritic
from rlkit.policies.distributions import Categorical

T, N = 32, 8  # zoo's ppo_lstm CartPoleNoVel rollout: n_steps 32, 8 envs


def copied(policy) -> RecurrentActorCritic:
    """rlkit's model with sb3-contrib's weights."""
    net = RecurrentActorCritic(2, 2, lstm_hidden_size=256)
    with torch.no_grad():
        pairs = [
            (net.lstm_actor, policy.lstm_actor), (net.lstm_critic, policy.lstm_critic),
            (net.mlp_pi, policy.mlp_extractor.policy_net),
            (net.mlp_vf, policy.mlp_extractor.value_net),
            (net.action_net, policy.action_net), (net.value_net, policy.value_net),
        ]  # fmt: skip
        for mine, theirs in pairs:
            mine.load_state_dict(theirs.state_dict())
    return net


def rollout_batch(buffer) -> dict:
    """sb3-contrib's rollout buffer as rlkit's rollout arrays ``(n_steps, n_envs, ...)``."""
    states = [buffer.hidden_states_pi, buffer.cell_states_pi, buffer.hidden_states_vf,
              buffer.cell_states_vf]  # fmt: skip
    lstm = np.stack(states, 2).transpose(0, 3, 2, 1, 4)  # (T, layers, n, h) -> (T, n, 4, layers, h)
    return {
        "state": buffer.observations.reshape(T, N, 2),
        "action": buffer.actions.reshape(T, N).astype(np.int64),
        "log_prob": buffer.log_probs.reshape(T, N),
        "value": buffer.values.reshape(T, N),
        "lstm_state": lstm,
        "episode_start": buffer.episode_starts.reshape(T, N) > 0.5,
    }


def main() -> None:
    from sb3_contrib import RecurrentPPO
    from stable_baselines3.common.env_util import make_vec_env

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    env = make_vec_env("rlkit/CartPoleNoVel-v1", n_envs=N, seed=0)
    model = RecurrentPPO("MlpLstmPolicy", env, seed=0, n_steps=T, batch_size=256, device="cpu")
    _, callback = model._setup_learn(10_000, None)
    callback.on_training_start(locals(), globals())
    net = copied(model.policy)
    for i in range(args.rollouts):
        model.collect_rollouts(model.env, callback, model.rollout_buffer, model.n_steps)
        batch = rollout_batch(model.rollout_buffer)
        seq = sequence_batch(batch, T, "cpu")
        with torch.no_grad():
            inputs, values = net.sequences(seq["state"], seq["lstm_state"], seq["episode_start"])
        mask = seq["mask"]
        dist = Categorical.from_inputs(inputs[mask], gym.spaces.Discrete(2), None)
        log_prob = dist.log_prob(seq["action"][mask])
        print(
            f"rollout {i}: {int(mask.sum())} steps in {len(mask)} sequences, "
            f"{int(batch['episode_start'][1:].sum())} episode starts inside; max |log_prob - "
            f"sb3| {float((log_prob - seq['log_prob'][mask]).abs().max()):.2e}, max |value - "
            f"sb3| {float((values[mask] - seq['value'][mask]).abs().max()):.2e}"
        )


if __name__ == "__main__":
    main()
