"""Offline RL algorithms (docs/how-to/offline-rl.md), one file each (its losses and its
``update(policy, batch)``): BC, DiscreteCQL, and for continuous actions CQL (on SAC), IQL and
TD3+BC (on the off-policy actor-critic base); they learn through the offline driver
(``rlkit/learners/drivers/offline.py``)."""

from ..drivers import offline as _offline  # noqa: F401 - registers the offline driver
