"""DQN-family recipes on classic-control tasks."""
