"""Bundled experiment recipes, one module per family (installed as ``rlkit.experiments``).

Importing this package registers every recipe with ``@rk.experiment``.
"""

from . import continuous, dqn, optimizers, tabular  # noqa: F401 - registration happens at import
