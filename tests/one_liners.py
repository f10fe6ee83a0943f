"""What the tests of the DQN family's one-liners share: each learner's small settings."""

from __future__ import annotations

#: the DQN family's one-liners (``rk.NAME.agent``) and each one's own small settings
ONE_LINERS = {
    "DQN": {},
    "QRDQN": {"n_quantiles": 10},
    "PrioritizedDQN": {},
    "C51": {},
    "IQN": {"n_tau": 8, "n_tau_target": 8, "n_cos": 8, "n_acting": 8},
    "Rainbow": {},
}

