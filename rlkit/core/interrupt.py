"""Ctrl-C stops ``rk.run`` cleanly: at the next step boundary, with PostExperiment announced.

While a run started in the main thread is going, the first Ctrl-C (SIGINT) asks it to stop
after the current step: the stop checks say "stop" (so hooks that act at the stop, such as
``rk.CheckpointHook``, write their final checkpoint, marked as interrupted so that resuming
continues the run), PostExperiment is announced, and ``rk.run`` returns the hook. A second
Ctrl-C raises ``KeyboardInterrupt`` at once, as usual. Every ``rk.StopSignal`` in the run's stop
condition is set by the first Ctrl-C too, so that whoever watches one (the ``rlkit`` command)
knows the run was interrupted.

The handler is installed only where Python's own SIGINT handler is in place (not when another
one is, e.g. an enclosing run's, or a handler of the application) and put back when the run
ends. See ``docs/architecture.md`` (the run loop).

Example:
    >>> import rlkit as rk
    >>> from rlkit.core.interrupt import CtrlC
    >>> with CtrlC(rk.StopAfterNSteps(10)) as ctrl_c:
    ...     ctrl_c.pressed()
    False
"""

from __future__ import annotations

import signal
import threading
from types import TracebackType
from typing import Any

from .stop_conditions import StopSignal

__all__ = ["CtrlC", "ctrl_c_pressed", "stop_signals"]

_ACTIVE: list[CtrlC] = []  # the runs going in this process, innermost last


def stop_signals(condition: Any) -> list[StopSignal]:
    """The ``StopSignal`` parts of a stop condition (itself, or inside ``|`` and ``&``).

    Example:
        >>> import rlkit as rk
        >>> signal = rk.StopSignal()
        >>> stop_signals(rk.StopAfterNSteps(100) | signal) == [signal]
        True
    """
    if isinstance(condition, StopSignal):
        return [condition]
    return [s for part in getattr(condition, "conditions", ()) for s in stop_signals(part)]


def ctrl_c_pressed() -> bool:
    """Whether Ctrl-C asked a run going in this process to stop (for hooks that act at the
    stop: a stop asked for by Ctrl-C is not the end of the run).

    Example:
        >>> ctrl_c_pressed()  # no run is going
        False
    """
    return any(ctrl_c.pressed() for ctrl_c in _ACTIVE)


class CtrlC:
    """The first Ctrl-C during the ``with`` block asks the run to stop; the second raises
    ``KeyboardInterrupt``. ``rk.run`` uses one around each run.

    Args:
        stop_condition: the run's stop condition; its ``StopSignal`` parts are set by Ctrl-C.

    Attributes:
        installed: whether the SIGINT handler was installed (main thread, Python's own handler
            in place); when not, Ctrl-C behaves as without it.

    Example:
        >>> import rlkit as rk
        >>> stop = rk.StopSignal()
        >>> with CtrlC(rk.StopAfterNSteps(10) | stop) as ctrl_c:
        ...     ctrl_c.signals == [stop], ctrl_c.pressed()
        (True, False)
    """

    def __init__(self, stop_condition: Any = None) -> None:
        self.signals = stop_signals(stop_condition)
        self._event = threading.Event()
        self._previous: Any = None
        self.installed = False

    def pressed(self) -> bool:
        """Whether Ctrl-C asked the run to stop."""
        return self._event.is_set()

    def _handler(self, signum: int, frame: Any) -> None:
        if self._event.is_set():
            raise KeyboardInterrupt
        self._event.set()
        for stop in self.signals:
            stop.set()

    def __enter__(self) -> CtrlC:
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            self._previous = signal.signal(signal.SIGINT, self._handler)
            self.installed = True
        _ACTIVE.append(self)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        _ACTIVE.remove(self)
        if self.installed:
            signal.signal(signal.SIGINT, self._previous)
            self.installed = False
