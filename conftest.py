"""Suite-wide settings."""

import os

# One torch thread: on the 2-core CI machine torch's default thread pool competes with the
# environment loop and makes small-network training many times slower. Set before torch loads.
os.environ.setdefault("OMP_NUM_THREADS", "1")
