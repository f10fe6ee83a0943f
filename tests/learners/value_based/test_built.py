"""The DQN family written with ``rk.build_policy``: each pure loss function on a hand-computed
tiny batch, ``with_updates`` on a DQN learner, ``rk.explain`` naming the loss_fn, the builder's
errors for a value-based base, and the target network stepped by ``Synchronization`` (its step
count in checkpoints)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
from torch import nn

import rlkit as rk
from rlkit.approximators.neural import q_network
from rlkit.learners.batch import Batch
from rlkit.learners.builder import build_policy
from rlkit.learners.value_based.basic_dqn import basic_dqn_loss
from rlkit.learners.value_based.dqn import DQNBase, dqn_loss, dqn_q_and_target
from rlkit.learners.value_based.prioritized import prioritized_dqn_loss
from rlkit.learners.value_based.qr_dqn import qr_dqn_loss


def linear(weights: list[float]) -> nn.Linear:
    """out[i] = weights[i] * s for a one-dimensional state s."""
    net = nn.Linear(1, len(weights), bias=False)
    with torch.no_grad():
        net.weight.copy_(torch.tensor(weights).view(-1, 1))
    return net


def one_sample(action=0, reward=1.0, terminal=0.0, discount=0.5) -> Batch:
    """One transition from s = 1 to s' = 1."""
    return Batch(
        state=torch.ones(1, 1),
        action=torch.tensor([action]),
        reward=torch.tensor([reward]),
        terminal=torch.tensor([terminal]),
        next_state=torch.ones(1, 1),
        discount=discount,
    )


def dqn_policy(double: bool, loss: str = "mse", **kw) -> rk.DQNLearner:
    """A real DQNLearner: online Q(s) = [1, 2] * s, target Q(s) = [3, 0.5] * s."""
    approx = rk.NeuralNetworkApproximator(linear([1.0, 2.0]), lambda p: torch.optim.SGD(p, lr=0))
    learner = rk.DQNLearner(
        approx,
        sampler=rk.BatchSampler(1, seed=0),
        controller=rk.InsertSampleRatioController(1, 1, 1),
        gamma=0.5,
        target=rk.TargetNetwork(approx, sync_every=10),
        double=double,
        loss=loss,
        **kw,
    )
    with torch.no_grad():
        learner.target.model.weight.copy_(torch.tensor([[3.0], [0.5]]))
    return learner


# ---- the loss functions on a hand-computed batch ----


@pytest.mark.parametrize(
    ("double", "loss", "target", "expected"),
    [
        # y = 1 + 0.5 * max(3, 0.5) = 2.5; Q(s, 0) = 1
        (False, "mse", 2.5, 1.5**2),
        (False, "huber", 2.5, 1.5 - 0.5),
        # the online network picks action 1 at s' (2 > 1): y = 1 + 0.5 * 0.5 = 1.25
        (True, "mse", 1.25, 0.25**2),
        (True, "huber", 1.25, 0.5 * 0.25**2),
    ],
)
def test_dqn_loss_by_hand(double, loss, target, expected):
    learner = dqn_policy(double, loss)
    value, info = dqn_loss(learner, learner.model, None, one_sample())
    assert value.item() == pytest.approx(expected)
    assert info["q"].tolist() == [1.0] and info["target"].tolist() == [target]
    assert value.requires_grad and not info["target"].requires_grad
    value.backward()  # the gradient flows through Q(s, a) only: d/dw0 of loss(w0 * 1, y)
    dq = 2 * (1.0 - target) if loss == "mse" else max(-1.0, min(1.0, 1.0 - target))
    assert learner.model.weight.grad.view(-1).tolist() == pytest.approx([dq, 0.0])


def test_dqn_loss_does_not_bootstrap_after_termination():
    learner = dqn_policy(False)
    _, info = dqn_loss(learner, learner.model, None, one_sample(terminal=1.0))
    assert info["target"].tolist() == [1.0]


def test_basic_dqn_loss_by_hand():
    net = linear([1.0, 2.0])
    policy = SimpleNamespace(residual=False, loss_kind="mse")
    value, info = basic_dqn_loss(policy, net, None, one_sample(action=1, reward=0.0))
    # Q(s, 1) = 2, y = 0 + 0.5 * max(1, 2) = 1
    assert value.item() == pytest.approx(1.0)
    assert info["q"].tolist() == [2.0] and info["target"].tolist() == [1.0]
    value.backward()
    assert net.weight.grad.view(-1).tolist() == pytest.approx([0.0, 2.0])  # y is a constant
    net.weight.grad = None
    residual = SimpleNamespace(residual=True, loss_kind="mse")
    basic_dqn_loss(residual, net, None, one_sample(action=1, reward=0.0))[0].backward()
    # through y too: d/dw1 (w1 - 0.5 w1)^2 = 2 * 0.5 * 0.5 * w1 = 1
    assert net.weight.grad.view(-1).tolist() == pytest.approx([0.0, 1.0])


def test_prioritized_dqn_loss_weights_each_sample():
    learner = dqn_policy(False)
    weights = torch.tensor([0.5, 2.0])
    batch = Batch(
        state=torch.ones(2, 1),
        action=torch.tensor([0, 1]),
        reward=torch.tensor([1.0, 1.0]),
        terminal=torch.tensor([0.0, 1.0]),
        next_state=torch.ones(2, 1),
        discount=0.5,
        weights=weights,
    )
    value, info = prioritized_dqn_loss(learner, learner.model, None, batch)
    # sample 0: Q 1, y 2.5 -> 2.25; sample 1: Q 2, y 1 (terminal) -> 1
    assert value.item() == pytest.approx((0.5 * 2.25 + 2.0 * 1.0) / 2)
    assert info["q"].tolist() == [1.0, 2.0] and info["target"].tolist() == [2.5, 1.0]
    with pytest.raises(TypeError, match="no importance weights"):
        prioritized_dqn_loss(learner, learner.model, None, one_sample())


@pytest.mark.parametrize(
    ("double", "expected", "target_mean"), [(False, 0.28125, 1.0), (True, 0.375, 0.0)]
)
def test_qr_dqn_loss_by_hand(double, expected, target_mean):
    # 2 quantiles x 2 actions, quantile-major: online(s) = [[0, 10], [2, 10]] (rows: quantiles)
    online = linear([0.0, 10.0, 2.0, 10.0])
    target_net = linear([1.0, 0.0, 3.0, 0.0])  # [[1, 0], [3, 0]]: action 0 has the larger mean
    policy = SimpleNamespace(
        n_quantiles=2,
        kappa=1.0,
        double=double,
        fractions=torch.tensor([0.25, 0.75]),
        target=SimpleNamespace(model=target_net),
    )
    value, info = qr_dqn_loss(policy, online, None, one_sample(action=0, reward=0.0))
    # current quantiles [0, 2]. Not double: a* = 0, targets 0.5 * [1, 3] = [0.5, 1.5];
    # pairs (current, target): (0, .5) .25*.125, (0, 1.5) .25*1, (2, .5) .25*1, (2, 1.5) .25*.125
    # -> summed over the 2 current quantiles per target, then averaged: 0.28125.
    # Double: the online network picks a* = 1 (mean 10), targets [0, 0]: only quantile 2 errs,
    # huber(2) = 1.5, weight |0.75 - 1| = 0.25 -> 0.375 per target.
    assert value.item() == pytest.approx(expected)
    assert info["q"].tolist() == [1.0] and info["target"].tolist() == [target_mean]


# ---- with_updates and rk.explain ----

CALLS = []


def mse_dqn_loss(policy, model, dist_class, batch):
    """A user's variant: DQN's target with a plain squared error (counts its calls)."""
    CALLS.append(1)
    q, y = dqn_q_and_target(policy, model, batch)
    return ((q - y) ** 2).mean(), {"q": q.detach(), "target": y}


def cartpole_agent(cls, steps_seed=0):
    env = rk.GymEnv("CartPole-v1", seed=steps_seed)
    approx = rk.NeuralNetworkApproximator(
        q_network(env.state_space, env.action_space, (16,), seed=0),
        lambda p: torch.optim.Adam(p, lr=1e-3),
    )
    learner = cls(
        approx,
        sampler=rk.BatchSampler(16, seed=0),
        controller=rk.InsertSampleRatioController(50, 1, 1),
        target=rk.TargetNetwork(approx, sync_every=20),
    )
    replay = rk.CircularArraySARTTrajectory(500, env.state_space, env.action_space)
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.EpsilonGreedyExplorer(0.1, seed=0)), replay)
    return agent, env, learner


def test_with_updates_makes_a_dqn_variant_that_trains_and_is_explained(capsys):
    Mine = rk.DQNLearner.with_updates(name="MSEDQN", loss_fn=mse_dqn_loss)
    assert issubclass(Mine, rk.DQNLearner) and Mine.name == "MSEDQN"
    assert Mine.loss_fn is mse_dqn_loss and rk.DQNLearner.loss_fn is dqn_loss
    agent, env, learner = cartpole_agent(Mine)
    start = [p.detach().clone() for p in learner.model.parameters()]
    CALLS.clear()
    rk.run(agent, env, rk.StopAfterNSteps(150))
    assert learner.gradient_steps == 100 and len(CALLS) == 100
    assert learner.target.updates == learner.target_sync.steps == 150
    moved = zip(start, learner.model.parameters(), strict=True)
    assert any(not torch.equal(a, b) for a, b in moved)
    assert repr(learner).startswith("MSEDQN(")
    rk.explain(agent, env)
    out = capsys.readouterr().out
    assert f"loss_fn = {__name__}.mse_dqn_loss" in out
    assert "update(MSEDQN, Batch)" in out and "[rlkit/learners/value_based/common.py:" in out
    assert "target (per env_step): Synchronization(every=20" in out
    assert "optimizer: GradientDescent(optimizer='adam', lr=0.001" in out


@pytest.mark.parametrize(
    ("cls", "loss"),
    [
        (rk.DQNLearner, "dqn.dqn_loss"),
        (rk.BasicDQNLearner, "basic_dqn.basic_dqn_loss"),
        (rk.PrioritizedDQNLearner, "prioritized.prioritized_dqn_loss"),
        (rk.QRDQNLearner, "qr_dqn.qr_dqn_loss"),
    ],
)
def test_explain_names_each_learners_loss_fn_at_post_act(cls, loss, capsys):
    env = rk.GymEnv("CartPole-v1", seed=0)
    n_quantiles = 3 if cls is rk.QRDQNLearner else None
    approx = rk.NeuralNetworkApproximator(
        q_network(env.state_space, env.action_space, (8,), n_quantiles=n_quantiles, seed=0),
        lambda p: torch.optim.Adam(p, lr=1e-3),
    )
    kw = {"n_quantiles": 3} if n_quantiles else {}
    learner = cls(
        approx,
        sampler=rk.BatchSampler(8, seed=0),
        controller=rk.InsertSampleRatioController(50, 1, 1),
        **kw,
    )
    if cls is rk.PrioritizedDQNLearner:
        replay = rk.PrioritizedCircularArraySARTTrajectory(
            100, env.state_space, env.action_space, alpha=0.6, beta=0.4, beta_steps=100
        )
    else:
        replay = rk.CircularArraySARTTrajectory(100, env.state_space, env.action_space)
    agent = rk.Agent(rk.QBasedPolicy(learner, rk.GreedyExplorer()), replay)
    rk.explain(agent, env)
    out = capsys.readouterr().out
    post_act = out[out.index("PostAct:") : out.index("PostEpisode:")]
    # the one off-policy driver, then what the learner learns from a batch: the family's rule
    # (common.py), or the learner's own beside its loss (prioritized.py)
    module = "prioritized" if cls is rk.PrioritizedDQNLearner else "common"
    lines = post_act.splitlines()
    driver = [line for line in lines if f"update({cls.__name__}, " in line and "Stage)" in line]
    assert len(driver) == 1 and "[rlkit/learners/drivers/off_policy.py:" in driver[0]
    method = [line for line in lines if f"update({cls.__name__}, Batch)" in line]
    assert len(method) == 1 and f"[rlkit/learners/value_based/{module}.py:" in method[0]
    assert f"loss_fn = rlkit.learners.value_based.{loss}" in post_act
    assert cls.__name__ == cls.name and cls.__doc__.strip().split()[0] != "The"


def test_a_greedy_policy_run_alone_shows_no_learning_step(capsys):
    agent, env, _ = cartpole_agent(rk.DQNLearner)
    rk.explain(rk.greedy(agent.policy), env)
    assert "loss_fn" not in capsys.readouterr().out


def test_the_builder_refuses_what_a_value_based_base_does_not_take():
    with pytest.raises(TypeError, match=r"unknown name\(s\) \['model_fn'\]"):
        rk.DQNLearner.with_updates(model_fn=lambda *a: None)
    with pytest.raises(TypeError, match="approximator given to the constructor"):
        build_policy("X", loss_fn=dqn_loss, model_fn=lambda *a: None, base=DQNBase)
    with pytest.raises(TypeError, match="loss_fn is required"):
        build_policy("X", loss_fn=None, base=DQNBase)
    with pytest.raises(TypeError, match="base must be a BuiltPolicy subclass or a value-based"):
        build_policy("X", loss_fn=dqn_loss, base=int)
    with pytest.raises(TypeError, match="loss_fn must be callable"):
        rk.DQNLearner.with_updates(loss_fn=3)
    base = DQNBase(
        dqn_policy(False).approximator,
        sampler=rk.BatchSampler(1, seed=0),
        controller=rk.InsertSampleRatioController(1, 1, 1),
    )
    with pytest.raises(TypeError, match="DQNBase: no loss_fn; make learners with"):
        base.compute_loss(one_sample())  # a base is not a learner


def test_build_policy_on_the_value_based_base_makes_a_learner():
    Plain = build_policy("PlainDQN", loss_fn=mse_dqn_loss, base=DQNBase)
    agent, env, learner = cartpole_agent(Plain)
    rk.run(agent, env, rk.StopAfterNSteps(60))
    assert learner.gradient_steps == 10 and type(learner).__name__ == "PlainDQN"


# ---- the target network is stepped by Synchronization ----


def test_target_sync_state_is_in_checkpoints():
    agent, env, learner = cartpole_agent(rk.DQNLearner)
    rk.run(agent, env, rk.StopAfterNSteps(75))
    state = learner.state_dict()
    assert state["target_sync"]["own"] == {"steps": 75}
    _, _, other = cartpole_agent(rk.DQNLearner, steps_seed=1)
    other.load_state_dict(state)
    assert other.target_sync.steps == other.target.updates == 75
    # a checkpoint written before target_sync existed: the target's own count is used
    old = {k: v for k, v in state.items() if k != "target_sync"}
    _, _, third = cartpole_agent(rk.DQNLearner, steps_seed=2)
    third.load_state_dict(old)
    assert third.target_sync.steps == 75
    # steps 76..80: the 80th (a multiple of 20) syncs
    for _ in range(5):
        third.update_target()
    assert all(
        torch.equal(a, b)
        for a, b in zip(third.target.model.parameters(), third.model.parameters(), strict=True)
    )
