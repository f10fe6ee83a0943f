"""The error of a file that is not a usable inference artifact."""

from __future__ import annotations

__all__ = ["ArtifactError"]


class ArtifactError(ValueError):
    """A file that is not a readable rlkit inference artifact (corrupt, truncated, from a newer
    rlkit, holding a pickle or something else): the message names the file and the reason.
    Nothing in such a file is executed.

    Example:
        >>> import rlkit as rk
        >>> try:
        ...     rk.load("no-such-policy.rlkit")
        ... except FileNotFoundError as error:
        ...     print(type(error).__name__)
        FileNotFoundError
    """
