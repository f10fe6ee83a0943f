"""Checkpoints: save everything a run needs to continue exactly, and resume from it.

A checkpoint is one file holding the state (:mod:`rlkit.core.state`) of the policy (parameters,
optimizer and scheduler state, target networks, replay contents with priorities, explorer
schedule, every generator inside), of the environment, of the stop condition and of every hook
of the run, the torch global generator (when torch is loaded), and the step and episode counters.

Split along its seams: :mod:`.format` (state <-> bytes, never unpickling), :mod:`.files` (atomic
writes, names, the newest checkpoint), :mod:`.run_state` (what a run's checkpoint holds, saving
and loading it) and :mod:`.hook` (``CheckpointHook``, and ``rk.run(..., resume_from=...)``).
"""

from .files import latest_checkpoint, list_checkpoints
from .format import FORMAT, VERSION, CheckpointError, decode_state, encode_state, read_checkpoint
from .hook import CheckpointHook
from .run_state import CheckpointInfo, load_checkpoint, save_checkpoint

__all__ = [
    "CheckpointError",
    "CheckpointHook",
    "CheckpointInfo",
    "save_checkpoint",
    "load_checkpoint",
    "read_checkpoint",
    "latest_checkpoint",
    "list_checkpoints",
    "encode_state",
    "decode_state",
    "FORMAT",
    "VERSION",
]
