"""Off-policy actor-critics for continuous actions, built with ``rk.build_policy``: DDPG, TD3
and SAC (one file of pure functions and stage methods each; what they share in ``common``)."""
