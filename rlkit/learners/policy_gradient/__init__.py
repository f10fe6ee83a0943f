"""Policy-gradient learners written as pure functions compiled by ``rk.build_policy``:
VPG (REINFORCE with a learned baseline), A2C and PPO."""
