"""Model-based deep RL: MBPO and PETS on a learned ``rk.EnsembleDynamicsModel``."""
