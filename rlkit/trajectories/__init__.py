"""rlkit.trajectories."""
