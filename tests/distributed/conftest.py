"""Shared fixtures of the actor-learner tests."""

import pytest


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray")  # installed in CI (the test extra): never skipped there
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()
