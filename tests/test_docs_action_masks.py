"""docs/how-to/action-masks.md: its example runs and prints what the page shows."""

from __future__ import annotations

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "how-to" / "action-masks.md"


def test_the_action_masks_example_prints_what_the_page_shows(capsys):
    text = PAGE.read_text()
    (example,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    exec(compile(example, str(PAGE), "exec"), {})
    shown = re.search(r"prints\n\n```text\n(.*?)```", text, flags=re.S).group(1)
    assert capsys.readouterr().out.strip().splitlines() == shown.strip().splitlines()
