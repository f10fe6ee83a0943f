"""Many seeds in one process (docs/how-to/speed.md): ``N`` independent copies of a learner
trained together, their parameters stacked (``torch.func.stack_module_state``), their losses
``vmap``-ed (``torch.func.functional_call``), each seed with its own generators and its own
block of a :class:`~rlkit.envs.seed_blocks.SeedBlocksEnv`. Covers PPO (:class:`ManySeedsPPO`)
and DQN (:class:`ManySeedsDQN`, each seed's replay in a :class:`SeedBlocksReplay`; a seed whose
single run steps one ``rk.GymEnv`` is a block through :class:`OneEnvVector`)."""

from .dqn import ManySeedsDQN
from .one_env import OneEnvVector
from .ppo import ManySeedsPPO
from .replay import SeedBlocksReplay
from .stacked import StackedModel

__all__ = ["ManySeedsDQN", "ManySeedsPPO", "OneEnvVector", "SeedBlocksReplay", "StackedModel"]
