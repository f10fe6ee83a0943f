"""ES: a policy trained by the Evolutionary module alone."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

import rlkit as rk
from rlkit.core.state import get_state, set_state
from rlkit.optimizers import Evolutionary


def _agent(seed=0, **config):
    env = rk.GymEnv("CartPole-v1", seed=seed)
    return rk.ES.agent(env, seed=seed, **{"num_samples": 2, **config}), env


def _params(policy):
    return [p.detach().clone() for p in policy.model.parameters()]


def test_one_generation_per_episode_moves_only_the_policy_network():
    agent, env = _agent()
    before = dict(agent.policy.model.named_parameters())
    before = {n: p.detach().clone() for n, p in before.items()}
    rk.run(agent, env, rk.StopAfterNEpisodes(1))
    stats = rk.statistics(agent.policy)
    assert agent.policy.updates == 1
    # 2 pairs + the unperturbed policy, one episode each
    assert stats["fitness_steps"] >= 5 and stats["fitness"] >= 8
    for name, p in agent.policy.model.named_parameters():
        changed = not torch.equal(p.detach(), before[name])
        assert changed == (not name.startswith("vf.")), name
        assert p.grad is None  # no gradients anywhere


def test_es_is_reproducible_and_its_generator_is_checkpointed():
    a, env_a = _agent(seed=4)
    b, env_b = _agent(seed=4)
    rk.run(a, env_a, rk.StopAfterNEpisodes(2))
    rk.run(b, env_b, rk.StopAfterNEpisodes(2))
    for p, q in zip(_params(a.policy), _params(b.policy), strict=True):
        assert torch.equal(p, q)
    saved = get_state(a.policy)
    assert "generator" in saved["optimizer"]["own"]
    rk.run(a, env_a, rk.StopAfterNEpisodes(1))
    expected = _params(a.policy)
    set_state(b.policy, saved)
    rk.run(b, env_b, rk.StopAfterNEpisodes(1))
    for p, q in zip(_params(b.policy), expected, strict=True):
        assert torch.equal(p, q)


def test_es_takes_an_optimizer_spec():
    agent, _ = _agent(
        optimizer_spec={"type": "evolutionary", "learning_rate": 0.01, "num_samples": 3}
    )
    assert isinstance(agent.policy.optimizer, Evolutionary)
    assert agent.policy.optimizer.num_samples == 3


def test_es_bad_settings():
    with pytest.raises(ValueError, match="Evolutionary: num_samples must be a positive integer"):
        _agent(num_samples=0)
    with pytest.raises(ValueError, match="ES: lr must be a positive finite number, got -1.0"):
        _agent(lr=-1.0)


def test_es_refuses_a_vector_env_naming_it():
    env = rk.VectorGymEnv("CartPole-v1", 2, seed=0)
    with pytest.raises(ValueError, match="ES: runs on one environment .* VectorGymEnv of 2 envs"):
        rk.ES.agent(env, seed=0)
    env.close()


class _OneLegalAction(gym.Env):
    """Only action ``t % 3`` is legal (``info["action_mask"]``); an illegal one raises."""

    observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gym.spaces.Discrete(3)

    def _info(self):
        mask = np.zeros(3, np.int8)
        mask[self.t % 3] = 1
        return {"action_mask": mask}

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), self._info()

    def step(self, action):
        if not self._info()["action_mask"][action]:
            raise AssertionError(f"illegal action {action} at step {self.t}")
        self.t += 1
        return np.full(2, self.t / 10, np.float32), 1.0, False, self.t >= 6, self._info()


def test_fitness_episodes_play_legal_actions_only():
    # the fitness episodes ignored the mask the training env enforces
    gym.register("rlkit_test/OneLegalAction-v0", entry_point=_OneLegalAction)
    try:
        env = rk.GymEnv(_OneLegalAction(), seed=0)
        agent = rk.ES.agent(env, seed=0, num_samples=2, fitness_env="rlkit_test/OneLegalAction-v0")
        rk.run(agent, env, rk.StopAfterNEpisodes(2))
        steps = agent.policy.fitness_steps
        assert steps > 0 and steps % 6 == 0  # every fitness episode played to its end
    finally:
        gym.registry.pop("rlkit_test/OneLegalAction-v0", None)


@pytest.mark.parametrize(
    ("env_id", "cause"), [("NoSuch-v0", "NameNotFound"), ("CartPole-v9", "VersionNotFound")]
)
def test_an_unknown_fitness_env_names_es_and_the_setting(env_id, cause):
    env = rk.GymEnv("CartPole-v1", seed=0)
    with pytest.raises(ValueError, match=rf"ES: fitness_env='{env_id}' is not a registered "
                       rf"gymnasium environment \({cause}: .*give the id of a registered one"):
        rk.ES(env, fitness_env=env_id)
