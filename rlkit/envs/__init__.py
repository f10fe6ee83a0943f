"""Environments: the interface, the gymnasium adapter and the bundled toy environments."""

from . import toy  # noqa: F401 - registers "rlkit/..." ids with gymnasium
