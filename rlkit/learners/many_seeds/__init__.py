"""Many seeds in one process (docs/how-to/speed.md): ``N`` independent copies of a learner
trained together, their parameters stacked (``torch.func.stack_module_state``), their losses
``vmap``-ed (``torch.func.functional_call``), each seed with its own generators and its own
block of a :class:`~rlkit.envs.seed_blocks.SeedBlocksEnv`. Covers PPO (:class:`ManySeedsPPO`)."""

from .ppo import ManySeedsPPO
from .stacked import StackedModel

__all__ = ["ManySeedsPPO", "StackedModel"]
