"""Exact tools for small games (docs/how-to/game-solvers.md): ``rk.CFR`` (counterfactual regret
minimisation, vanilla and CFR+), ``rk.exploitability`` / ``rk.nash_conv`` and ``rk.Minimax``.

A layer beside ``rlkit.learners`` (docs/architecture.md): it builds on policies and envs."""
