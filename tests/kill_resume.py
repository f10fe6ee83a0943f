"""A run killed in a subprocess (no clean-up, no final checkpoint: like SIGKILL) and resumed from
its last checkpoint in another, compared with an uninterrupted run: ``script(body, ...)`` makes
the child script from a test's agent and digest, ``run(script, mode, folder)`` runs it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_TEMPLATE = """
import hashlib, os, sys
import numpy as np, torch
import rlkit as rk
from rlkit.hooks.checkpoint import CheckpointHook

torch.set_num_threads(1)
mode, folder = sys.argv[1], sys.argv[2]
TOTAL = {total}
{agent}
LIMIT = {limit} if mode == "killed" else 10**9  # not an attribute: hooks' attributes are saved

class Kill(rk.AbstractHook):
    def post_act(self, policy, env):
        if policy.policy.transitions >= LIMIT:
            os._exit(3)  # no clean-up, no final checkpoint: like SIGKILL

hook = rk.TotalRewardPerEpisode()
if mode != "straight":
    hook = hook + CheckpointHook(folder, every_n_steps={every}, format="npz") + Kill()
rk.run(agent, env, rk.StopAfterNSteps(TOTAL), hook,
       resume_from=folder if mode == "resume" else None)
digest = hashlib.sha256()
{digest}
"""


def script(agent: str, digest: str, *, total: int, limit: int, every: int) -> str:
    """The child script: ``agent`` defines ``env`` and ``agent`` (it may use ``TOTAL``);
    ``digest`` updates ``digest`` from the trained agent and prints it and its counters."""
    return _TEMPLATE.format(
        total=total, limit=limit, every=every,
        agent=textwrap.dedent(agent).strip(), digest=textwrap.dedent(digest).strip(),
    )  # fmt: skip


def run(child: str, mode: str, folder: Path) -> subprocess.CompletedProcess:
    """``mode``: "straight" (no checkpoints), "killed" (checkpoints, killed at ``limit``) or
    "resume" (from ``folder``'s last checkpoint)."""
    return subprocess.run(
        [sys.executable, "-c", child, mode, str(folder)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def straight_killed_resumed(child: str, tmp_path: Path) -> tuple[str, str]:
    """The stdout of a straight run and of a killed-then-resumed one (each checked to exit as
    it should)."""
    straight = run(child, "straight", tmp_path / "unused")
    assert straight.returncode == 0, straight.stderr
    killed = run(child, "killed", tmp_path / "ckpt")
    assert killed.returncode == 3, killed.stderr
    resumed = run(child, "resume", tmp_path / "ckpt")
    assert resumed.returncode == 0, resumed.stderr
    return straight.stdout, resumed.stdout
