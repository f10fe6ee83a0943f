"""Artifacts of the distributional learners (``C51Learner``, ``RainbowLearner``,
``IQNLearner``): a ``q_network`` artifact (:mod:`rlkit.deploy.q_network`) whose network
outputs what the learner acts on, so a loaded or exported policy acts as the trained one's
greedy form.

* C51 and Rainbow: the categorical network with its noisy layers at their means
  (:func:`~rlkit.approximators.distributional.mean_network`), followed by a
  :class:`~rlkit.approximators.distributional.CategoricalExpectation` (the expected value per
  action);
* IQN: the :class:`~rlkit.approximators.distributional.IQNNetwork`, whose outputs are the
  quantiles at its fixed acting fractions, averaged per action (``n_quantiles``).

The module types these networks hold are described here for :mod:`rlkit.deploy.networks`.

Example:
    >>> import torch
    >>> from rlkit.approximators.distributional import CategoricalExpectation
    >>> from rlkit.deploy.networks import module_from_json, module_to_json
    >>> module_from_json(module_to_json(CategoricalExpectation(5, -1.0, 1.0)))
    CategoricalExpectation(n_atoms=5, v_min=-1.0, v_max=1.0)
"""

from __future__ import annotations

from torch import nn

from ..approximators.distributional import (
    CategoricalDuelingHead,
    CategoricalExpectation,
    EncodedIQNNetwork,
    IQNNetwork,
    mean_network,
)
from ..learners.value_based.c51 import C51Base
from ..learners.value_based.iqn import IQNBase
from ..learners.value_based.rainbow import NoiseFreeLearner
from ..policies.q_based import QBasedPolicy
from .networks import module_from_json, module_to_json, register_module
from .q_based import learner_artifact
from .q_network import network_artifact

__all__: list[str] = []


def _iqn_to_json(m: IQNNetwork) -> dict:
    return {
        "in": m.in_features, "n_actions": m.n_actions, "hidden": list(m.hidden),
        "n_cos": m.n_cos, "n_acting": m.n_acting,
    }  # fmt: skip


register_module(
    "CategoricalExpectation",
    CategoricalExpectation,
    lambda m: {"n_atoms": m.n_atoms, "v_min": m.v_min, "v_max": m.v_max},
    lambda a: CategoricalExpectation(int(a["n_atoms"]), float(a["v_min"]), float(a["v_max"])),
)
register_module(
    "CategoricalDuelingHead",
    CategoricalDuelingHead,
    lambda m: {
        "in": m.value.in_features, "n_actions": m.n_actions, "n_atoms": m.n_atoms,
    },  # fmt: skip
    lambda a: CategoricalDuelingHead(int(a["in"]), int(a["n_actions"]), int(a["n_atoms"])),
)
register_module(
    "IQNNetwork",
    IQNNetwork,
    _iqn_to_json,
    lambda a: IQNNetwork(
        int(a["in"]), int(a["n_actions"]), [int(h) for h in a["hidden"]],
        n_cos=int(a["n_cos"]), n_acting=int(a["n_acting"]),
    ),  # fmt: skip
)
# IQN on images (a CNN body) or on Dict, Tuple, Discrete, ... observations (their encoder)
register_module(
    "EncodedIQNNetwork",
    EncodedIQNNetwork,
    lambda m: {**_iqn_to_json(m), "encoder": module_to_json(m.encoder, "the IQN's encoder")},
    lambda a: EncodedIQNNetwork(
        module_from_json(a["encoder"]), int(a["n_actions"]), [int(h) for h in a["hidden"]],
        n_cos=int(a["n_cos"]), n_acting=int(a["n_acting"]),
    ),  # fmt: skip
)


@learner_artifact.register
def _(learner: C51Base, policy: QBasedPolicy) -> tuple[str, dict, dict]:
    network = nn.Sequential(
        mean_network(learner.model),
        CategoricalExpectation(learner.n_atoms, learner.v_min, learner.v_max),
    )
    return network_artifact(network, None, learner)


@learner_artifact.register
def _(learner: IQNBase, policy: QBasedPolicy) -> tuple[str, dict, dict]:
    return network_artifact(learner.model, learner.model.n_acting, learner)


@learner_artifact.register
def _(learner: NoiseFreeLearner, policy: QBasedPolicy) -> tuple[str, dict, dict]:
    return learner_artifact(learner.learner, policy)  # the same network: noise is off in both
