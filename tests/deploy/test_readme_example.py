"""The README's "Using a trained policy" example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_example_saves_loads_predicts_and_exports(tmp_path, monkeypatch, capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    (example,) = [b for b in blocks if "rk.export(" in b]
    monkeypatch.chdir(tmp_path)
    exec(compile(example, str(README), "exec"), {})
    out = capsys.readouterr().out.split()
    assert out[0] in ("0", "1") and out[1] == "(8,)"
    assert (tmp_path / "ppo-cartpole.rlkit").is_file()
    assert (tmp_path / "ppo-cartpole.onnx").is_file()
