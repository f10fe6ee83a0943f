"""Semantics check of RecurrentPPO's *learning* against sb3-contrib's, in lock step (no training
of its own): sb3-contrib's ``RecurrentPPO`` collects each rollout (the zoo's CartPoleNoVel
settings and policy_kwargs, in SB3's ``VecNormalize``), rlkit's ``RecurrentPPO`` starts from
sb3-contrib's initial weights, and for every rollout

1. rlkit's ``add_recurrent_advantages`` (GAE, the value of each cut episode's final observation
   from the critic's state after its step) is given the rollout as rlkit's trajectory holds it
   (the normalised rewards before sb3-contrib folds the truncation bootstrap into them, the
   terminated and truncated flags, the final observations, the stored values, log-probabilities,
   episode starts and hidden states, the hidden state after the rollout) and must give
   sb3-contrib's advantages and returns;
2. rlkit's update (``learn_sequences``: sequences from the stored states, the masked loss,
   advantages normalised per minibatch, Adam eps 1e-5 with its moments carried from update to
   update, the global gradient norm clipped at 0.5 over every parameter, 20 epochs) on that
   rollout must move the weights where sb3-contrib's ``train()`` moves them.

rlkit's weights are set to sb3-contrib's before each update (so differences do not add up over
rollouts) while its Adam moments are its own from the first update on: an optimizer rebuilt or
reset between updates, a parameter left out of the clipping or the optimizer, a different
advantage or value target would each show as a large difference. Learning rate and clip range
are constant here (1e-3, 0.2: the schedules' timing was checked separately,
benchmarks/results_recurrent.txt). ``--max-episode-steps 20`` cuts the episodes short so that
truncation (bootstrapping from the critic's state) happens in every rollout; with CartPole's 500
it never does this early in training.

Usage::

    python benchmarks/recurrent_lockstep.py [--rollouts 10] [--max-episode-steps 500] [--seed 0]

Needs ``sb3-contrib``. The output is in benchmarks/results_recurrent.txt.
"""

from __future__ import annotations

import argparse
import contextlib

import numpy as np
import torch
from torch import nn

import rlkit as rk
from rlkit.learners.batch import Batch
from rlkit.learners.policy_gradient.recurrent import add_recurrent_advantages, learn_sequences

ENV_ID = "rlkit/CartPoleNoVel-v1"
T, N = 32, 8  # the zoo's ppo_lstm CartPoleNoVel rollout: n_steps 32, 8 envs
COMMON = dict(n_steps=T, batch_size=256, n_epochs=20, gamma=0.98, gae_lambda=0.8, ent_coef=0.0)
LR, CLIP = 1e-3, 0.2


def sb3_model(seed: int, max_episode_steps: int):
    """sb3-contrib's RecurrentPPO with the zoo's CartPoleNoVel settings in VecNormalize."""
    from sb3_contrib import RecurrentPPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    env = make_vec_env(ENV_ID, n_envs=N, seed=seed,
                       env_kwargs={"max_episode_steps": max_episode_steps})  # fmt: skip
    env = VecNormalize(env, gamma=COMMON["gamma"])
    policy_kwargs = dict(ortho_init=False, activation_fn=nn.ReLU, lstm_hidden_size=64,
                         enable_critic_lstm=True, net_arch=dict(pi=[64], vf=[64]))  # fmt: skip
    return RecurrentPPO("MlpLstmPolicy", env, seed=seed, device="cpu", learning_rate=LR,
                        clip_range=CLIP, policy_kwargs=policy_kwargs, **COMMON)  # fmt: skip


def rlkit_policy(seed: int, layout: str):
    """rlkit's RecurrentPPO with the same settings (its weights are replaced by sb3-contrib's)."""
    env = rk.VectorGymEnv(ENV_ID, N, seed=seed)
    return rk.RecurrentPPO(env, seed=seed, lr=LR, clip_range=CLIP, lstm_hidden_size=64,
                           ortho_init=False, activation="relu", hidden=(64,),
                           minibatch_layout=layout, **COMMON)  # fmt: skip


def pairs(net, policy) -> list:
    return [
        (net.lstm_actor, policy.lstm_actor), (net.lstm_critic, policy.lstm_critic),
        (net.mlp_pi, policy.mlp_extractor.policy_net),
        (net.mlp_vf, policy.mlp_extractor.value_net),
        (net.action_net, policy.action_net), (net.value_net, policy.value_net),
    ]  # fmt: skip


def copy_weights(net, policy) -> None:
    with torch.no_grad():
        for mine, theirs in pairs(net, policy):
            mine.load_state_dict(theirs.state_dict())


def copy_adam_moments(policy, net, sb3_policy) -> None:
    """Set the Adam moments (and step counts) of rlkit's optimizer to sb3-contrib's."""
    from rlkit.optimizers import GradientDescent

    def find(tree):
        if isinstance(tree, GradientDescent):
            return tree
        return next((m for c in tree.children().values() if (m := find(c))), None)

    mine, theirs = find(policy.optimizer).optimizer, sb3_policy.optimizer
    for a_module, b_module in pairs(net, sb3_policy):
        for a, b in zip(a_module.parameters(), b_module.parameters(), strict=True):
            ours, other = mine.state[a], theirs.state[b]
            ours["exp_avg"].copy_(other["exp_avg"])
            ours["exp_avg_sq"].copy_(other["exp_avg_sq"])
            ours["step"].copy_(torch.as_tensor(float(other["step"])))


def max_weight_difference(net, policy) -> float:
    """The largest absolute difference of any weight."""
    worst = 0.0
    for mine, theirs in pairs(net, policy):
        a, b = mine.state_dict(), theirs.state_dict()
        for key in a:
            worst = max(worst, float((a[key] - b[key]).abs().max()))
    return worst


def flat(policy) -> torch.Tensor:
    return torch.cat([p.detach().flatten().clone() for p in policy.parameters()])


def lstm_states(states) -> np.ndarray:
    """sb3-contrib's ``RNNStates`` (pi (h, c), vf (h, c)), each ``(layers, n, hidden)``, as
    rlkit's ``(n, 4, layers, hidden)``."""
    parts = [states.pi[0], states.pi[1], states.vf[0], states.vf[1]]
    return torch.stack(parts).permute(2, 0, 1, 3).cpu().numpy()


def rollout_batch(buf, rows: list[dict]) -> dict:
    """sb3-contrib's rollout buffer (not yet flattened by ``get``) and the per-step ``rows`` as
    rlkit's rollout arrays ``(n_steps, n_envs, ...)``."""
    return {
        "state": buf.observations.reshape(T, N, 2).copy(),
        "action": buf.actions.reshape(T, N).astype(np.int64),
        "log_prob": buf.log_probs.reshape(T, N).copy(),
        "value": buf.values.reshape(T, N).copy(),
        "episode_start": buf.episode_starts.reshape(T, N) > 0.5,
        "lstm_state": np.stack([buf.hidden_states_pi, buf.cell_states_pi,
                                buf.hidden_states_vf, buf.cell_states_vf],
                               2).transpose(0, 3, 2, 1, 4).copy(),  # fmt: skip
        **{k: np.stack([r[k] for r in rows]) for k in rows[0]},
    }


@contextlib.contextmanager
def sb3_splits(splits: list[int] | None):
    """While active, sb3-contrib's ``RecurrentRolloutBuffer.get`` takes its split points
    (``np.random.randint``, the only draw of ``train()``) from ``splits`` in order (None: its
    own draws)."""
    if splits is None:
        yield
        return
    draw, given = np.random.randint, iter(splits)
    np.random.randint = lambda *args, **kwargs: next(given)
    try:
        yield
    finally:
        np.random.randint = draw


@contextlib.contextmanager
def recorded_splits(splits: list[int]):
    """While active, the split points rlkit's ``minibatch_layout="sb3"`` draws are appended to
    ``splits``."""
    from rlkit.learners.policy_gradient import recurrent_minibatches as module

    draw = module.rotated_minibatches

    def recording(n, size, generator):
        parts = draw(n, size, generator)
        splits.append(int(parts[0][0]))
        return parts

    module.rotated_minibatches = recording
    try:
        yield
    finally:
        module.rotated_minibatches = draw


def steps_callback():
    """A callback that keeps, per step, what rlkit's trajectory holds (``rows``), taken before
    sb3-contrib adds the truncation bootstrap to the rewards in place."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Steps(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[dict] = []

        def _on_step(self) -> bool:
            loc = self.locals
            dones = np.asarray(loc["dones"], dtype=bool)
            infos = loc["infos"]
            truncated = np.array([bool(d and i.get("TimeLimit.truncated", False))
                                  for d, i in zip(dones, infos, strict=True)])  # fmt: skip
            final = np.array(loc["new_obs"], dtype=np.float32, copy=True)
            for idx in np.flatnonzero(dones):
                final[idx] = infos[idx]["terminal_observation"]
            self.rows.append({"reward": np.array(loc["rewards"], dtype=np.float64, copy=True),
                              "terminated": dones & ~truncated, "truncated": truncated,
                              "final_state": final})  # fmt: skip
            return True

    return Steps()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rollouts", type=int, default=10)
    parser.add_argument("--max-episode-steps", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=256,
                        help="both learners' batch_size (the zoo's 256: the whole rollout)")
    parser.add_argument("--layout", choices=["same", "own", "sequences"], default="same",
                        help="same: rlkit's minibatch_layout sb3, sb3-contrib takes the split "
                             "points rlkit drew; own: each draws its own; sequences: rlkit's "
                             "minibatch_layout sequences, sb3-contrib's split point 0")  # fmt: skip
    parser.add_argument("--sync-adam", action="store_true",
                        help="also set rlkit's Adam moments to sb3-contrib's before each update "
                             "(from the second on): each update from the same state")
    args = parser.parse_args()
    torch.set_num_threads(1)
    COMMON["batch_size"] = args.batch_size

    model = sb3_model(args.seed, args.max_episode_steps)
    layout = "sequences" if args.layout == "sequences" else "sb3"
    policy = rlkit_policy(args.seed, layout)
    net = policy.model
    copy_weights(net, model.policy)
    steps = steps_callback()
    _, callback = model._setup_learn(10**9, steps)
    callback.on_training_start(locals(), globals())
    print(f"seed {args.seed}, max_episode_steps {args.max_episode_steps}, lr {LR}, clip {CLIP}, "
          f"layout {args.layout}")  # fmt: skip
    for i in range(args.rollouts):
        steps.rows.clear()
        model.collect_rollouts(model.env, callback, model.rollout_buffer, model.n_steps)
        buf = model.rollout_buffer
        batch = rollout_batch(buf, steps.rows)
        before = flat(model.policy)
        copy_weights(net, model.policy)
        if args.sync_adam and i > 0:
            copy_adam_moments(policy, net, model.policy)
        policy.act_state.advance(torch.as_tensor(lstm_states(model._last_lstm_states)))
        ours = add_recurrent_advantages(policy, Batch(batch))
        adv_diff = np.abs(ours["advantages"] - buf.advantages.reshape(T, N)).max()
        ret_diff = np.abs(ours["returns"] - buf.returns.reshape(T, N)).max()
        splits: list[int] = []
        with recorded_splits(splits):
            learn_sequences(policy, Batch(batch))
        given = {"same": splits, "own": None, "sequences": [0] * COMMON["n_epochs"]}
        with sb3_splits(given[args.layout]):
            model.train()
        moved = float((flat(model.policy) - before).abs().max())
        weight_diff = max_weight_difference(net, model.policy)
        print(
            f"rollout {i}: {int(batch['episode_start'][1:].sum())} episode starts inside, "
            f"{int(batch['truncated'].sum())} truncated, {int(batch['terminated'].sum())} "
            f"terminated; max |advantage - sb3| {adv_diff:.2e} (sb3 max |adv| "
            f"{np.abs(buf.advantages).max():.2f}), max |return - sb3| {ret_diff:.2e}; update: "
            f"max |weight - sb3| {weight_diff:.2e} (sb3's largest weight change {moved:.2e}); "
            f"grad_norm {policy.stats['grad_norm']:.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
