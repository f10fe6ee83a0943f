"""DDPG (Lillicrap et al. 2016) as Stable-Baselines3 defines it: TD3's pure functions with one
critic, no target policy smoothing (``target_policy_noise=0``) and the actor updated at every
gradient step (``policy_delay=1``), compiled by ``rk.build_policy`` on the same base, so TD3's
``update(policy: TD3Base, batch: Batch)`` is DDPG's too. One gradient step: the critic's Adam
step on :func:`~rlkit.learners.actor_critic.td3.critic_loss` (the target
``r + (1 - terminal) * gamma * Q'(s', mu'(s'))``), the actor's on
:func:`~rlkit.learners.actor_critic.td3.actor_loss` (``-Q(s, mu(s))``), then both targets move
by ``tau``.

Example:
    >>> import rlkit as rk
    >>> env = rk.GymEnv("Pendulum-v1", seed=0)
    >>> agent = rk.DDPG.agent(env, seed=0, learning_starts=50, batch_size=32, hidden=(16, 16),
    ...                       action_noise=rk.OrnsteinUhlenbeckActionNoise(0.2))
    >>> _ = rk.run(agent, env, rk.StopAfterNSteps(60))
    >>> agent.policy.gradient_steps, len(agent.policy.model.critic.qs)
    (10, 1)
"""

from __future__ import annotations

from ..builder import build_policy
from .td3 import TD3_DEFAULTS, TD3Base, actor_loss, adam, critic_loss, td3_model

__all__ = ["DDPG", "DDPG_DEFAULTS"]

DDPG_DEFAULTS = {**TD3_DEFAULTS, "policy_delay": 1, "n_critics": 1, "target_policy_noise": 0.0}

DDPG = build_policy(
    "DDPG",
    loss_fn={"critic": critic_loss, "actor": actor_loss},
    model_fn=td3_model,
    optimizer={"critic": adam, "actor": adam},
    defaults=DDPG_DEFAULTS,
    base=TD3Base,
    doc=__doc__,  # the module docstring: the algorithm, its defaults and an example
)
