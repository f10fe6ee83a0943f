"""Recurrent-policy recipes: RecurrentPPO (an LSTM policy, rlkit/learners/policy_gradient/
recurrent.py) on the partially observed classic-control tasks ``rlkit/CartPoleNoVel-v1`` and
``rlkit/PendulumNoVel-v1`` (velocities removed: a policy needs memory).

Hyperparameters are rl-baselines3-zoo's ``ppo_lstm`` ones (hyperparams/ppo_lstm.yml, the
entries marked "Tuned") on top of sb3-contrib's RecurrentPPO defaults (LSTM of 256, one layer,
a separate critic LSTM, MLPs (64, 64) tanh after it, n_steps 128, batch_size 128):

* ``RecurrentPPO_CartPoleNoVel``: 8 envs, 100k steps, n_steps 32, batch 256, gae_lambda 0.8,
  gamma 0.98, 20 epochs, ent_coef 0, learning rate linear from 1e-3 to 0, clip range linear
  from 0.2 to 0 (zoo's ``lin_0.001`` and ``lin_0.2``), and the zoo's ``policy_kwargs``: an LSTM
  of 64 (``lstm_hidden_size``; the critic's own LSTM too), one ReLU layer of 64 after it for
  the policy and one for the value (``net_arch=dict(pi=[64], vf=[64])``: ``hidden=(64,)``,
  ``activation="relu"``), ``ortho_init=False`` (torch's default initialisation), and the zoo's
  ``normalize: True``: the run is in ``rk.VecNormalize`` (``normalize=True``: running mean and
  variance of the observations, rewards scaled by the running std of the return with gamma
  0.98, both clipped at 10; docs/how-to/normalization.md), so these are the zoo's settings in
  full. The hooks add up the raw rewards, and the saved policy normalises raw observations with
  the training statistics;
* ``RecurrentPPO_PendulumNoVel``: 4 envs, 100k steps, n_steps 1024, gae_lambda 0.95, gamma 0.9,
  10 epochs, ent_coef 0, lr 1e-3, clip 0.2, sb3-contrib's default policy; zoo also sets
  ``use_sde`` (gSDE, sde_sample_freq 4), which rlkit does not have (plain Gaussian exploration
  instead), and the same ``policy_kwargs`` and ``normalize: True`` as for CartPoleNoVel, which
  this recipe does not take (not measured with them: benchmarks/results_recurrent.txt;
  ``--set normalize=true`` adds the normalisation).

Minibatches are sb3-contrib's (``minibatch_layout="sb3"``: each epoch the rollout rotated at
a random split point and cut into runs of ``batch_size`` consecutive transitions, sequences cut
at episode starts, sub-env changes and minibatch starts); ``--set minibatch_layout=sequences``
gives rlkit's other layout (whole sequences shuffled and packed, the recipes' layout before;
the module docstring of rlkit/learners/policy_gradient/recurrent.py describes both). The
measured returns are in benchmarks/recurrent.py's results file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import rlkit as rk

from .policy_gradient import PPOParams, build_pg_agent

__all__ = ["RecurrentPPOParams", "RECURRENT_PPO_CARTPOLE_NOVEL", "RECURRENT_PPO_PENDULUM_NOVEL"]


@dataclass(frozen=True)
class RecurrentPPOParams(PPOParams):
    """RecurrentPPO's hyperparameters with sb3-contrib's defaults (``rk.RecurrentPPO.defaults``).

    Example:
        >>> p = RecurrentPPOParams(total_steps=1000)
        >>> p.algorithm_config()["lstm_hidden_size"], p.algorithm_config()["n_steps"]
        (256, 128)
    """

    n_steps: int = 128
    batch_size: int | None = 128
    lstm_hidden_size: int = 256
    n_lstm_layers: int = 1
    shared_lstm: bool = False
    enable_critic_lstm: bool = True
    ortho_init: bool = True
    sequence_length: int | None = None
    minibatch_layout: str = "sb3"

    algorithm: ClassVar[str] = "RecurrentPPO"


RECURRENT_PPO_CARTPOLE_NOVEL = RecurrentPPOParams(
    total_steps=100_000,
    n_envs=8,
    n_steps=32,
    batch_size=256,
    gae_lambda=0.8,
    gamma=0.98,
    n_epochs=20,
    ent_coef=0.0,
    lr="lin_1e-3",
    clip_range="lin_0.2",
    lstm_hidden_size=64,
    hidden=(64,),
    activation="relu",
    ortho_init=False,
    normalize=True,
)
RECURRENT_PPO_PENDULUM_NOVEL = RecurrentPPOParams(
    total_steps=100_000,
    n_envs=4,
    n_steps=1024,
    gae_lambda=0.95,
    gamma=0.9,
    n_epochs=10,
    ent_coef=0.0,
    lr=1e-3,
    clip_range=0.2,
)


def _experiment(env_id: str, p: RecurrentPPOParams, seed: int, name: str, doc: str):
    agent, env = build_pg_agent(env_id, p, seed, owner=name)
    return rk.Experiment(
        policy=agent,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=rk.TotalRewardPerEpisode(),
        description=doc.strip(),
        threads=1,
    )


@rk.experiment
def RecurrentPPO_CartPoleNoVel(
    seed: int = 0, p: RecurrentPPOParams = RECURRENT_PPO_CARTPOLE_NOVEL
) -> rk.Experiment:
    """RecurrentPPO (LSTM) on CartPole without velocities, zoo's ppo_lstm settings in full
    (100k steps, in rk.VecNormalize as the zoo's normalize: True)."""
    return _experiment("rlkit/CartPoleNoVel-v1", p, seed, "RecurrentPPO_CartPoleNoVel",
                       RecurrentPPO_CartPoleNoVel.__doc__ or "")  # fmt: skip


@rk.experiment
def RecurrentPPO_PendulumNoVel(
    seed: int = 0, p: RecurrentPPOParams = RECURRENT_PPO_PENDULUM_NOVEL
) -> rk.Experiment:
    """RecurrentPPO (LSTM) on Pendulum without velocity, zoo's ppo_lstm settings without gSDE."""
    return _experiment("rlkit/PendulumNoVel-v1", p, seed, "RecurrentPPO_PendulumNoVel",
                       RecurrentPPO_PendulumNoVel.__doc__ or "")  # fmt: skip
