"""RecurrentPPO against plain PPO on the partially observed CartPole (``rlkit/CartPoleNoVel-v1``),
with the same settings (rl-baselines3-zoo's ppo_lstm ones for CartPoleNoVel: 8 envs, n_steps 32,
batch 256, 20 epochs, gamma 0.98, gae_lambda 0.8, lr and clip linear to 0 over 100k steps), or on
the partially observed Pendulum (``--env pendulum``: ``rlkit/PendulumNoVel-v1``, the zoo's
ppo_lstm PendulumNoVel settings: 4 envs, n_steps 1024, batch 128, 10 epochs, gamma 0.9,
gae_lambda 0.95, lr 1e-3, clip 0.2, ent_coef 0, 100k steps; without the zoo's gSDE, which rlkit
does not have, for both learners unless ``--sb3-sde``).

For each seed and each learner: the wall time, the process CPU time, the first environment step
at which a training episode returned 500, the first step at which the mean of the last 20
training episodes reached 475 and 500 (CartPole only), the mean of the last 20 training
episodes, and the greedy policy's returns on 10 evaluation episodes. Torch on one thread.

Usage::

    python benchmarks/recurrent.py [--env cartpole|pendulum] [--seeds 0 1 2] [--steps 100000]
                                   [--learners rec ppo sb3] [--sb3-sde] [--sb3-normalize]
                                   [--normalize vec|obs|obs+reward]

``--normalize vec`` runs rlkit's learners in ``rk.VecNormalize`` (the zoo's ``normalize:
True``), ``--sb3-normalize`` sb3-contrib's in SB3's ``VecNormalize``.

``sb3``: sb3-contrib's RecurrentPPO with the same settings (``pip install sb3-contrib``).

Results (written by hand from the output) are in benchmarks/results_recurrent.txt.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import gymnasium as gym
import numpy as np
import torch

import rlkit as rk

ENVS = {"cartpole": "rlkit/CartPoleNoVel-v1", "pendulum": "rlkit/PendulumNoVel-v1"}
N_ENVS = {"cartpole": 8, "pendulum": 4}


# the zoo's policy_kwargs for both tasks (hyperparams/ppo_lstm.yml, "# Tuned"): ortho_init False,
# ReLU, LSTM 64 (a separate critic LSTM), net_arch pi [64] vf [64]
ZOO_ARCH = dict(lstm_hidden_size=64, ortho_init=False, activation="relu", hidden=(64,))


def settings(env: str, steps: int, arch: str = "zoo") -> dict:
    """The zoo's ppo_lstm settings for ``env`` (rlkit names), both learners; ``arch``
    ``"default"``: sb3-contrib's default policy (LSTM 256, (64, 64) tanh, ortho_init)."""
    extra = dict(ZOO_ARCH) if arch == "zoo" else {}
    if env == "pendulum":
        return dict(n_steps=1024, batch_size=128, gae_lambda=0.95, gamma=0.9, n_epochs=10,
                    ent_coef=0.0, lr=1e-3, clip_range=0.2, **extra)  # fmt: skip
    return dict(
        n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98, n_epochs=20, ent_coef=0.0,
        lr=rk.LinearSchedule(1e-3, 0.0, steps), clip_range=rk.LinearSchedule(0.2, 0.0, steps),
        **extra,
    )  # fmt: skip


def sb3_settings(env: str, steps: int, sde: bool, arch: str = "zoo") -> dict:
    """The same settings in sb3-contrib's names."""
    s = settings(env, steps, "default")
    if arch == "zoo":
        from torch import nn

        s["policy_kwargs"] = dict(
            ortho_init=False, activation_fn=nn.ReLU, lstm_hidden_size=64,
            enable_critic_lstm=True, net_arch=dict(pi=[64], vf=[64]),
        )  # fmt: skip
    if env == "pendulum":
        lr, clip = s.pop("lr"), s.pop("clip_range")
        extra = dict(use_sde=True, sde_sample_freq=4) if sde else {}
        return dict(s, learning_rate=lr, clip_range=clip, **extra)
    del s["lr"], s["clip_range"]
    return dict(s, learning_rate=lambda f: 1e-3 * f, clip_range=lambda f: 0.2 * f)


class FirstSteps(rk.TotalRewardPerEpisode):
    """Episode returns, and the transitions seen when each finished."""

    def __init__(self) -> None:
        super().__init__()
        self.at: list[int] = []

    def vector_post_act(self, policy, env) -> None:
        before = len(self.rewards)
        super().vector_post_act(policy, env)
        self.at.extend([policy.policy.transitions] * (len(self.rewards) - before))


class RawReturns(gym.Wrapper):
    """Appends ``(steps of all sub-envs so far, return)`` of each finished episode to the
    shared ``sink``, from the rewards below any normalisation wrapper."""

    def __init__(self, env: gym.Env, sink: dict) -> None:
        super().__init__(env)
        self.sink, self.total = sink, 0.0

    def reset(self, **kwargs):
        self.total = 0.0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.sink["steps"] += 1
        self.total += float(reward)
        if terminated or truncated:
            self.sink["returns"].append((self.sink["steps"], self.total))
        return obs, reward, terminated, truncated, info


def normalized_env(env_id: str, n: int, seed: int, mode: str, gamma: float):
    """A vector env whose sub-envs are in gymnasium's ``NormalizeObservation`` (and
    ``NormalizeReward`` with ``gamma`` for ``"obs+reward"``): a diagnostic stand-in for
    ``VecNormalize`` with statistics per sub-env, not shared, and no clipping. Returns the env,
    the sub-envs' ``NormalizeObservation`` wrappers and the raw-returns sink."""
    sink: dict = {"steps": 0, "returns": []}
    obs_wrappers: list = []

    def make() -> gym.Env:
        env = gym.wrappers.NormalizeObservation(RawReturns(gym.make(env_id), sink))
        obs_wrappers.append(env)
        if mode == "obs+reward":
            env = gym.wrappers.NormalizeReward(env, gamma=gamma)
        return env

    return rk.VectorGymEnv([make] * n, seed=seed), obs_wrappers, sink


def first(steps: list[int], mask: np.ndarray) -> int | None:
    where = np.flatnonzero(mask)
    return int(steps[where[0]]) if len(where) else None


def run(
    env_name: str, learner: str, seed: int, steps: int, arch: str = "zoo", normalize: str = "",
) -> dict:  # fmt: skip
    torch.set_num_threads(1)
    env_id = ENVS[env_name]
    if normalize == "vec":  # rk.VecNormalize: the zoo's normalize: True (gamma the learner's)
        gamma = settings(env_name, steps)["gamma"]
        env = rk.VecNormalize(rk.VectorGymEnv(env_id, N_ENVS[env_name], seed=seed), gamma=gamma)
    elif normalize:
        gamma = settings(env_name, steps)["gamma"]
        env, obs_wrappers, sink = normalized_env(env_id, N_ENVS[env_name], seed, normalize, gamma)
    else:
        env = rk.VectorGymEnv(env_id, N_ENVS[env_name], seed=seed)
    if learner == "rec":
        agent = rk.RecurrentPPO.agent(env, seed=seed, **settings(env_name, steps, arch))
    else:  # plain PPO: PPO_CartPole's MLP (64, 64) tanh (no LSTM to size)
        agent = rk.PPO.agent(env, seed=seed, **settings(env_name, steps, "default"))
    hook = FirstSteps()
    start, cpu = time.perf_counter(), time.process_time()
    rk.run(agent, env, rk.StopAfterNSteps(steps), hook)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    r = np.asarray(hook.rewards)
    at = hook.at
    eval_env = gym.make(env_id)
    # rk.VecNormalize: hooks add the raw rewards up (env.original_reward), and the policy
    # normalises the raw evaluation env's observations with the training statistics, frozen
    if normalize and normalize != "vec":  # raw returns; sub-env 0's statistics, frozen
        at, r = [a for a, _ in sink["returns"]], np.array([x for _, x in sink["returns"]])
        eval_env = gym.wrappers.NormalizeObservation(eval_env)
        eval_env.obs_rms = obs_wrappers[0].obs_rms
        eval_env.update_running_mean = False
    mean20 = np.convolve(r, np.ones(20) / 20, mode="valid") if len(r) >= 20 else np.array([])
    at20 = at[19:]
    evaluation = rk.run(rk.greedy(agent.policy), rk.GymEnv(eval_env, seed=1000 + seed),
                        rk.StopAfterNEpisodes(10), rk.TotalRewardPerEpisode())  # fmt: skip
    learner_name = f"RecurrentPPO ({arch} policy)" if learner == "rec" else "PPO"
    return {
        "learner": learner_name + (
            " rk.VecNormalize" if normalize == "vec"
            else f" gymnasium-normalize {normalize}" if normalize else ""
        ),
        "seed": seed,
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "first_500": first(at, r >= 500),
        "mean20_475_at": first(at20, mean20 >= 475),
        "mean20_500_at": first(at20, mean20 >= 500),
        "last20": float(r[-20:].mean()),
        "greedy": [float(x) for x in evaluation.rewards],
    }


def run_sb3(
    env_name: str, seed: int, steps: int, sde: bool = False, arch: str = "zoo",
    normalize: bool = False,
) -> dict:  # fmt: skip
    """sb3-contrib's RecurrentPPO (``MlpLstmPolicy``) with the same settings, in this process;
    ``normalize``: in ``VecNormalize`` (observations and rewards, gamma the learner's), the zoo's
    ``normalize: True`` (rlkit has no such normalisation), evaluated with the frozen
    observation statistics."""
    from sb3_contrib import RecurrentPPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import VecNormalize

    torch.set_num_threads(1)

    class Returns(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.rewards: list[float] = []
            self.at: list[int] = []

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "episode" in info:
                    self.rewards.append(float(info["episode"]["r"]))
                    self.at.append(self.num_timesteps)
            return True

        def _on_rollout_end(self) -> None:
            last = np.mean(self.rewards[-20:]) if self.rewards else float("nan")
            print(f"# sb3 step {self.num_timesteps} cpu {time.process_time():.0f} s "
                  f"last20 {last:.1f}", file=sys.stderr, flush=True)  # fmt: skip

    env_id = ENVS[env_name]
    env = make_vec_env(env_id, n_envs=N_ENVS[env_name], seed=seed)
    config = sb3_settings(env_name, steps, sde, arch)
    if normalize:
        env = VecNormalize(env, gamma=config["gamma"])
    model = RecurrentPPO("MlpLstmPolicy", env, seed=seed, device="cpu", **config)
    callback = Returns()
    start, cpu = time.perf_counter(), time.process_time()
    model.learn(steps, callback=callback)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    r = np.asarray(callback.rewards)
    mean20 = np.convolve(r, np.ones(20) / 20, mode="valid") if len(r) >= 20 else np.array([])
    at20 = callback.at[19:]
    greedy = []
    eval_env = gym.make(env_id)
    if normalize:
        env.training = False
    for episode in range(10):
        obs, _ = eval_env.reset(seed=1000 + seed + episode)
        state, start_flag, total, done = None, np.ones((1,), dtype=bool), 0.0, False
        while not done:
            seen = env.normalize_obs(obs) if normalize else obs
            action, state = model.predict(seen, state=state, episode_start=start_flag,
                                          deterministic=True)  # fmt: skip
            act = int(action) if env_name == "cartpole" else action
            obs, reward, terminated, truncated, _ = eval_env.step(act)
            start_flag = np.zeros((1,), dtype=bool)
            total += float(reward)
            done = terminated or truncated
        greedy.append(total)
    return {
        "learner": f"sb3-contrib RecurrentPPO ({arch} policy)"
        + (" gSDE" if sde else "")
        + (" VecNormalize" if normalize else ""),
        "seed": seed,
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "first_500": first(callback.at, r >= 500),
        "mean20_475_at": first(at20, mean20 >= 475),
        "mean20_500_at": first(at20, mean20 >= 500),
        "last20": float(r[-20:].mean()),
        "greedy": greedy,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=sorted(ENVS), default="cartpole")
    parser.add_argument("--sb3-sde", action="store_true", help="sb3-contrib with gSDE (zoo)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--learners", nargs="+", default=["rec", "ppo"])
    parser.add_argument(
        "--arch",
        choices=["zoo", "default"],
        default="zoo",
        help="zoo: the zoo's policy_kwargs (LSTM 64, ReLU, pi/vf [64], no "
        "ortho_init); default: sb3-contrib's default MlpLstmPolicy",
    )
    parser.add_argument(
        "--sb3-normalize",
        action="store_true",
        help="sb3-contrib in VecNormalize (the zoo's normalize: True)",
    )
    parser.add_argument("--normalize", choices=["vec", "obs", "obs+reward"], default="",
                        help="vec: rlkit's learners in rk.VecNormalize (the zoo's normalize: "
                             "True); obs, obs+reward: in gymnasium's NormalizeObservation (and "
                             "NormalizeReward) per sub-env, a diagnostic stand-in")  # fmt: skip
    args = parser.parse_args()
    for seed in args.seeds:
        for learner in args.learners:
            if learner == "sb3":
                result = run_sb3(args.env, seed, args.steps, args.sb3_sde, args.arch,
                                 args.sb3_normalize)  # fmt: skip
            else:
                result = run(args.env, learner, seed, args.steps, args.arch, args.normalize)
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
