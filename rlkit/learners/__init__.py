"""rlkit.learners."""
