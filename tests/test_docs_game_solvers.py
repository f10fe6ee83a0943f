"""docs/how-to/game-solvers.md: its examples, run in order in one namespace, print what the text
says."""

import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "how-to" / "game-solvers.md"


def test_the_game_solvers_page_runs_and_prints_what_it_says(capsys):
    namespace: dict = {}
    outputs = []
    for block in re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S):
        exec(compile(block, str(PAGE), "exec"), namespace)
        outputs.append(capsys.readouterr().out.strip().splitlines())
    curve, game, uniform, solver_curve, minimax = outputs
    first, last = float(curve[0].split()[1]), float(curve[-1].split()[1])
    assert curve[0].startswith("200 ") and 0.002 < first < 0.004  # "about 0.003 after 200"
    assert curve[-1].startswith("1000 ") and last < 0.001  # "under 0.001 after 1,000"
    assert game == ["player_0 [0 1 1]"]
    assert abs(float(uniform[0]) - 11 / 12) < 1e-12
    points = eval(solver_curve[0])  # [(100, e), (200, e), (300, e)]
    assert [i for i, _ in points] == [100, 200, 300] and points[2][1] < points[0][1]
    assert minimax == ["0.0"]
