"""An MBPO run killed in a subprocess and resumed from its last checkpoint in another ends with
exactly the parameters (SAC's and the model's) of an uninterrupted run (issue 27)."""

import pytest
from kill_resume import script, straight_killed_resumed

SCRIPT = script(
    """
    env = rk.GymEnv("Pendulum-v1", seed=3)
    agent = rk.MBPO.agent(env, seed=5, learning_starts=100, model_train_freq=50, batch_size=32,
                          hidden=(16, 16), model_hidden=(16,), ensemble_size=3, n_elites=2,
                          rollout_batch_size=20, gradient_steps=2, model_max_epochs=3,
                          rollout_schedule=(0, 2, 1, 3), epoch_length=100)
    """,
    """
    for p in agent.policy.model.state_dict().values():
        digest.update(p.numpy().tobytes())
    for p in agent.policy.dynamics.network.state_dict().values():
        digest.update(p.numpy().tobytes())
    digest.update(agent.policy.model_replay.data["state"].numpy().tobytes())
    print(digest.hexdigest(), agent.policy.model_fits, agent.policy.gradient_steps,
          agent.policy.transitions)
    """,
    total=300, limit=230, every=120,
)  # fmt: skip


@pytest.mark.slow
def test_killed_mbpo_run_resumes_bit_exactly(tmp_path):
    straight, resumed = straight_killed_resumed(SCRIPT, tmp_path)
    assert resumed.split() == straight.split()
    # model trained at 100, 150, 200, 250, 300; SAC's updates after 100 transitions
    assert straight.split()[1:] == ["5", str(2 * 200), "300"]
