"""What the tests of the DQN family's one-liners share: each learner's small settings, and a
fixture that runs a test with one torch thread (as the recipes do)."""

from __future__ import annotations

import pytest
import torch

#: the DQN family's one-liners (``rk.NAME.agent``) and each one's own small settings
ONE_LINERS = {
    "DQN": {},
    "QRDQN": {"n_quantiles": 10},
    "PrioritizedDQN": {},
    "C51": {},
    "IQN": {"n_tau": 8, "n_tau_target": 8, "n_cos": 8, "n_acting": 8},
    "Rainbow": {},
}


@pytest.fixture
def one_torch_thread():
    """One torch thread for the test, the former count restored after it."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
