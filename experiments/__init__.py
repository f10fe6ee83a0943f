"""Bundled experiment recipes, one module per family (installed as ``rlkit.experiments``).

Importing this package registers every recipe with ``@rk.experiment``.
"""

from . import (  # noqa: F401 - registration happens at import
    continuous,
    dqn,
    optimizers,
    policy_gradient,
    tabular,
)
