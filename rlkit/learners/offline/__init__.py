"""Offline RL algorithms (docs/how-to/offline-rl.md), one file each; they learn through the
offline driver (``rlkit/learners/drivers/offline.py``)."""

from ..drivers import offline as _offline  # noqa: F401 - registers the offline driver
