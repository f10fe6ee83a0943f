"""Offline learners: what each learns from one batch of a fixed dataset, one file each (its
losses and its ``update(policy, batch)``): CQL (on SAC), IQL and TD3+BC for continuous actions."""
