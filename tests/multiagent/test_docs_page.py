"""The examples of docs/how-to/multi-agent.md run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "multi-agent.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example{i}" for i in range(len(BLOCKS))])
def test_the_page_examples_run(block, capsys):
    exec(compile(block, str(PAGE), "exec"), {})
    assert capsys.readouterr().out.strip()
