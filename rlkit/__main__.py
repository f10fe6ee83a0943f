"""``python -m rlkit``: the ``rlkit`` command line."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
