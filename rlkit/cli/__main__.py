"""``python -m rlkit.cli``: the ``rlkit`` command line."""

from . import main

if __name__ == "__main__":
    raise SystemExit(main())
