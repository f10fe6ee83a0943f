"""rlkit.policies."""
