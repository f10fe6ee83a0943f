"""The version of rlkit (the one place it is written; pyproject.toml reads it)."""

__version__ = "0.1.0"
"""rlkit's version (``rk.__version__``; ``rlkit --version`` prints it too).

Example:
    >>> import rlkit as rk
    >>> rk.__version__.count(".")
    2
"""
