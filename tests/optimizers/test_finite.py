"""The one finiteness check of the optimizer modules (rlkit/optimizers/finite.py): a step whose
loss or gradient is nan or inf is refused, and nothing changes."""

import math

import pytest
import torch

import rlkit as rk
from rlkit.optimizers import NonFiniteError


def _weights():
    return torch.nn.Parameter(torch.tensor([1.0, -2.0]))


def _nan_gradient(params):
    for p in params:
        p.grad.fill_(math.nan)


def test_a_nan_gradient_with_a_finite_loss_is_refused_and_changes_nothing():
    w = _weights()
    adam = rk.optimizers.GradientDescent("adam", lr=0.1)
    adam.step([w], lambda: (w**2).sum())
    before, state = w.detach().clone(), adam.state_dict()
    with pytest.raises(NonFiniteError, match="GradientDescent refused the step: the gradient "
                       "norm is nan; the parameters are unchanged") as caught:
        adam.step([w], lambda: (w**2).sum(), fn_gradients=_nan_gradient)
    assert isinstance(caught.value, FloatingPointError)
    assert torch.equal(w.detach(), before)
    assert str(adam.state_dict()) == str(state)  # the moments and step count too


def test_an_infinite_gradient_under_gradient_clipping_is_refused():
    w = _weights()
    clipped = rk.optimizers.ClippedStep(
        rk.optimizers.GradientDescent("sgd", lr=0.1), 1.0, on="gradient"
    )

    def inf_gradient(params):
        params[0].grad[0] = math.inf

    before = w.detach().clone()
    with pytest.raises(NonFiniteError, match="gradient norm"):
        clipped.step([w], lambda: (w**2).sum(), fn_gradients=inf_gradient)
    assert torch.equal(w.detach(), before)


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_every_module_that_computes_a_step_refuses_a_non_finite_loss(bad):
    modules = [
        rk.optimizers.GradientDescent("adam", lr=0.1),
        rk.optimizers.NaturalGradient(max_kl=0.01),
        rk.optimizers.OptimizedStep(rk.optimizers.NaturalGradient(max_kl=0.01)),
        rk.optimizers.Evolutionary(learning_rate=0.1, num_samples=2),
        rk.optimizers.MultiStep(rk.optimizers.GradientDescent("sgd", lr=0.1), 3),
    ]
    for module in modules:
        w = _weights()
        old = torch.softmax(w, 0).detach()

        def kl(w=w, old=old):
            return (old * (old.log() - torch.log_softmax(w, 0))).sum()

        before = w.detach().clone()
        with pytest.raises(NonFiniteError, match=f"the loss is {bad}"):
            module.step([w], lambda w=w: (w**2).sum() * bad, fn_kl_divergence=kl)
        assert torch.equal(w.detach(), before), module


def test_natural_gradient_refuses_a_nan_gradient_of_a_finite_loss():
    w = _weights()
    old = torch.softmax(w, 0).detach()
    before = w.detach().clone()

    def nan_grad_loss():  # the value is finite; d sqrt(x)/dx at x = 0 is inf, times 0: nan
        return torch.sqrt(torch.clamp(w, max=0.0) * 0.0).sum() + w.sum()

    with pytest.raises(NonFiniteError, match="NaturalGradient .* gradient norm is nan"):
        rk.optimizers.NaturalGradient(max_kl=0.01).step(
            [w],
            nan_grad_loss,
            fn_kl_divergence=lambda: (old * (old.log() - torch.log_softmax(w, 0))).sum(),
        )
    assert torch.equal(w.detach(), before)


def test_evolutionary_refuses_a_nan_perturbed_loss_and_rewinds_its_generator():
    w = _weights()
    es = rk.optimizers.Evolutionary(learning_rate=0.1, num_samples=3)
    calls = []

    def loss():
        calls.append(1)
        return math.nan if len(calls) == 4 else float((w**2).sum())

    before, generator = w.detach().clone(), es.generator.get_state()
    with pytest.raises(NonFiniteError, match="Evolutionary refused the step: the perturbed "
                       "loss is nan"):
        es.step([w], loss)
    assert torch.equal(w.detach(), before)
    assert torch.equal(es.generator.get_state(), generator)


# ---- issue 21, item 4: rk.optimizers.make refuses settings that destroy parameters ----


def _numeric_settings():
    """(optimizer name, key, a nan version of its default) for every number-valued setting of
    every torch optimizer make builds."""
    import inspect

    from rlkit.optimizers.gradient import torch_optimizer_class, torch_optimizer_names

    cases = []
    for name in torch_optimizer_names():
        cls = torch_optimizer_class("test", name)
        for key, p in inspect.signature(cls).parameters.items():
            default = p.default
            if isinstance(default, bool) or key == "params":
                continue
            if isinstance(default, (int, float)):
                cases.append((name, key, math.nan))
            elif isinstance(default, tuple) and all(
                isinstance(v, (int, float)) or v is None for v in default
            ):
                bad = tuple(math.nan if v is not None else v for v in default)
                cases.append((name, key, bad))
    return cases


@pytest.mark.parametrize(("name", "key", "value"), _numeric_settings())
def test_make_refuses_a_nan_setting_of_every_torch_optimizer_naming_the_key(name, key, value):
    with pytest.raises(ValueError, match=rf"GradientDescent.*\b{key}\b"):
        rk.optimizers.make({"type": name, key: value})


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "sgd", "lr": 0.1, "momentum": math.nan}, r"SGD\): momentum must be .*nan"),
        ({"type": "adam", "weight_decay": math.inf}, r"Adam\): weight_decay must be .*>= 0.*inf"),
        ({"type": "sgd", "lr": 0.1, "momentum": 1.5}, r"SGD\): momentum must be .*<= 1, got 1.5"),
        ({"type": "rmsprop", "alpha": 2.0}, r"RMSprop\): alpha must be .*<= 1, got 2.0"),
        ({"type": "adam", "betas": (0.9, 1.0)}, r"betas"),
        ({"type": "sgd", "lr": 0.1, "dampening": -0.5}, r"SGD\): dampening must be .*-0.5"),
        ({"type": "adagrad", "lr_decay": -1.0}, r"Adagrad.*lr_decay.*-1.0"),
        ({"type": "gradient_descent", "optimizer": "adamw", "weight_decay": -math.inf},
         r"AdamW.*weight_decay.*-inf"),
    ],
)
def test_make_refuses_out_of_range_settings_naming_the_module_and_key(spec, message):
    with pytest.raises(ValueError, match=message):
        rk.optimizers.make(spec)


def test_the_defaults_and_the_recipes_settings_are_accepted():
    from rlkit.optimizers.gradient import torch_optimizer_names

    for name in torch_optimizer_names():
        rk.optimizers.make({"type": name})
    rk.optimizers.make({"type": "adam", "lr": 3e-4, "eps": 1e-5, "betas": (0.9, 0.999)})
    rk.optimizers.make({"type": "rmsprop", "lr": 7e-4, "alpha": 0.99, "eps": 1e-5})
    rk.optimizers.make({"type": "sgd", "lr": 0.1, "momentum": 0.9, "nesterov": True})
