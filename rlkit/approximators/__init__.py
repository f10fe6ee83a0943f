"""rlkit.approximators."""
