"""The Ray backend gives the local backend's numbers for a seed (the same transitions, the same
learner), and an actor acts with the weights it was sent (not the learner's live ones)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from distributed_helpers import CARTPOLE, dqn_agent, fingerprint, impala_agent

import rlkit as rk
from rlkit.distributed import actor_learner
from rlkit.distributed.acting import acting_copy


class Chunks(list):
    """Records every round's chunks (the transitions the learner consumes)."""

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        original = actor_learner.ActorLearner._next_round

        def next_round(al: actor_learner.ActorLearner) -> None:
            original(al)
            self.append({k: np.array(v) for k, v in al.chunk.items()})

        monkeypatch.setattr(actor_learner.ActorLearner, "_next_round", next_round)


def run(make_agent, backend: str, steps: int, monkeypatch: pytest.MonkeyPatch, **kwargs) -> tuple:
    chunks = Chunks()
    chunks.install(monkeypatch)
    agent = make_agent()
    al = rk.distributed.ActorLearner(agent, CARTPOLE, 2, backend=backend, seed=5, **kwargs)
    hook = al.run(rk.StopAfterNSteps(steps), rk.TotalRewardPerEpisode())
    info = al.info()
    al.close()
    monkeypatch.undo()
    return chunks, fingerprint(agent), hook.rewards, info


@pytest.mark.parametrize(
    ("make_agent", "kwargs"),
    [(dqn_agent, {"rollout_length": 10, "sync_every": 8}), (impala_agent, {})],
    ids=["apex", "impala"],
)
def test_ray_gives_the_local_backends_transitions_and_learner(ray_session, monkeypatch,
                                                              make_agent, kwargs):  # fmt: skip
    local = run(make_agent, "local", 800, monkeypatch, **kwargs)
    ray = run(make_agent, "ray", 800, monkeypatch, **kwargs)
    assert local[3] == ray[3] and local[3]["version"] > 0 and local[3]["max_policy_lag"] > 0
    assert len(local[0]) == len(ray[0]) >= 10
    for round_, (a, b) in enumerate(zip(local[0], ray[0], strict=True)):
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key], err_msg=f"round {round_}: {key}")
    for x, y in zip(local[1], ray[1], strict=True):
        np.testing.assert_array_equal(x, y)
    assert local[2] == ray[2] and len(local[2]) >= 5


def test_an_ape_x_actor_acts_with_its_own_network_not_the_learners():
    learner = dqn_agent().policy.learner
    copy = acting_copy(learner)
    env = CARTPOLE()
    env.reset(seed=0)
    before = copy(env).copy()
    with torch.no_grad():  # the learner's weights change; the copy's do not
        for p in learner.model.parameters():
            p.add_(1.0)
    np.testing.assert_array_equal(copy(env), before)
    assert not np.array_equal(learner(env), before)
    copy.model.load_state_dict(learner.model.state_dict())  # what the actor loads, it uses
    np.testing.assert_array_equal(copy(env), learner(env))


@pytest.mark.parametrize("backend", ["local", "ray"])
def test_ape_x_actors_act_with_the_weights_sent_to_them(request, backend):
    if backend == "ray":
        request.getfixturevalue("ray_session")
    agent = dqn_agent()
    al = rk.distributed.ActorLearner(agent, CARTPOLE, 2, backend=backend, seed=5)
    weights = {k: v.detach().clone() for k, v in agent.policy.learner.model.state_dict().items()}
    last_bias = [k for k in weights if k.endswith("bias")][-1]
    weights[last_bias] = torch.tensor([-100.0, 100.0])  # these weights always choose action 1
    al.actors.request(1, 30, weights, 7)  # actor 1: epsilon 0.4**8, almost always greedy
    chunk = al.actors.collect(1)
    al.close()
    assert chunk["version"] == 7
    np.testing.assert_array_equal(chunk["action"], np.ones(30, dtype=chunk["action"].dtype))
    # the learner's own network (which the actor's copy must not act with) prefers action 0
    assert (agent.policy.learner.model(torch.tensor(chunk["state"])).argmax(1) == 0).any()
