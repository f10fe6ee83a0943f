"""Hooks: what observes a run (recorders, callbacks, loggers, progress, evaluation,
checkpoints). Importing this package registers hook composition (``a + b``) and
``rk.run(..., resume_from=...)``."""

from . import basic, checkpoint  # noqa: F401 - registers compose and restore methods
