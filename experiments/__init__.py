"""Bundled experiment recipes, one module per family (installed as ``rlkit.experiments``).

Importing this package registers every recipe with ``@rk.experiment``. The registry finds them
through the ``rlkit.experiments`` entry points in pyproject.toml, one per module: a new module
of recipes needs its entry point there too (then ``pip install -e .`` again).
"""

from . import (  # noqa: F401 - registration happens at import
    continuous,
    distributed,
    distributional,
    dqn,
    games,
    her,
    images,
    masks,
    model_based,
    multiagent,
    offline,
    optimizers,
    policy_gradient,
    recurrent,
    tabular,
)
