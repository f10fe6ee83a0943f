"""Suite-wide settings."""

import os

# One torch thread: on the 2-core CI machine torch's default thread pool competes with the
# environment loop and makes small-network training many times slower. Set before torch loads.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# The test directories' conftest.py files hold fixtures, not doctests; collecting them as doctest
# modules (--doctest-modules) imports two modules named "conftest" when several test directories
# are given on the command line (pytest tests/core tests/envs).
collect_ignore_glob = ["tests/conftest.py", "tests/*/conftest.py", "tests/*/*/conftest.py"]
