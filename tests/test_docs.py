"""The pages of docs/ (architecture, concepts, how-to guides): their code examples run and print
what the text says."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

DOCS = Path(__file__).resolve().parents[1] / "docs"
DOC = DOCS / "architecture.md"


def _blocks() -> list[tuple[Path, str]]:
    return [(page, block) for page in sorted(DOCS.rglob("*.md"))
            for block in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)]


def _example(marker: str) -> tuple[Path, str]:
    (found,) = [(page, b) for page, b in _blocks() if marker in b]
    return found


def _run(found: tuple[Path, str], capsys) -> list[str]:
    page, example = found
    exec(compile(example, str(page), "exec"), {})
    return capsys.readouterr().out.strip().splitlines()


def test_the_explain_example_prints_the_plan_shown(capsys):
    out = _run(_example("experiment.hook, experiment.stop_condition)"), capsys)
    text = DOC.read_text()
    shown = re.search(r"prints\n\n```text\n(.*?)```", text, flags=re.S).group(1).splitlines()
    assert [line.split("  [")[0] for line in out] == [line.split("  [")[0] for line in shown]
    assert "update(QLearningLearner, VectorSARTTrajectory, GymEnv, PostActStage)" in out[7]
    assert "rlkit/learners/tabular/td.py" in out[7]


def test_the_learner_example_learns_the_random_walk_values(capsys):
    out = _run(_example("class EveryVisitTD0"), capsys)
    values = np.array([float(x) for x in out[-1].strip("[]").split()])
    assert np.abs(values - np.arange(1, 6) / 6).max() < 0.15  # 200 episodes, step size 0.1


def test_the_hook_example_prints_true(capsys):
    assert _run(_example("class LongestEpisode"), capsys)[-1] == "True"


def test_the_recipe_example_registers_and_runs(capsys):
    import rlkit as rk

    assert _run(_example("@rk.experiment"), capsys)[-1] == "50"
    assert "ExpectedSARSA_FrozenLakeDemo" in rk.list_experiments()


def test_the_deep_algorithm_example_learns_and_shows_its_update(capsys):
    out = _run(_example("clipped_double_q_loss"), capsys)
    assert out[-1] == "100"
    post_act = "\n".join(out[out.index("PostAct:") :])
    assert "rlkit/learners/drivers/off_policy.py" in post_act
    assert "update(ClippedDoubleDQN, Batch)" in post_act
    assert "clipped_double_q_loss" in post_act


def test_the_dispatch_example_picks_the_more_specific_method(capsys):
    out = _run(_example("class StepCounter"), capsys)
    assert out[-1] == "50 50 {'steps': 50.0}"
    assert any(line.startswith("  update(StepCounter, VectorSARTTrajectory, GymEnv, PostActStage)")
               for line in out)


def test_the_resume_example_continues_the_run_exactly(capsys):
    assert _run(_example("resume_from=folder"), capsys)[-1] == "True"


def test_the_offline_dataset_example_prints_what_the_page_shows(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the example writes cartpole-random.npz
    page = DOCS / "how-to" / "offline-datasets.md"
    shown = re.search(r"prints\n\n```\n(.*?)```", page.read_text(), flags=re.S).group(1)
    example = _example('rk.DatasetRecorder("cartpole-random.npz"')
    assert _run(example, capsys) == shown.strip().splitlines()


def test_the_model_based_example_prints_what_the_page_shows(capsys):
    page, example = _example("rk.EnsembleDynamicsModel(env.state_space")
    out = _run((page, example), capsys)
    shown = re.search(r"prints\n\n```\n(.*?)```", page.read_text(), flags=re.S).group(1)
    assert out == shown.strip().splitlines()


def test_the_images_example_prints_what_the_page_shows(capsys):
    import pytest

    pytest.importorskip("minatar")
    pytest.importorskip("ale_py")
    marker = "DQN_MinAtarBreakout\", seed=0"
    out = _run(_example(marker), capsys)
    assert out == _shown_after(DOCS / "how-to" / "images.md", marker)


def test_the_one_line_image_agents_example_prints_what_the_page_shows(capsys):
    import pytest

    pytest.importorskip("minatar")
    marker = "rk.Rainbow.agent(env, seed=0, buffer_size=1000"
    out = _run(_example(marker), capsys)
    assert out == _shown_after(DOCS / "how-to" / "images.md", marker)


def _shown_after(page: Path, marker: str) -> list[str]:
    """The lines of the first ``prints`` block after ``marker`` on ``page``."""
    text = page.read_text()
    after = text[text.index(marker):]
    shown = re.search(r"prints\n\n```text\n(.*?)```", after, flags=re.S).group(1)
    return shown.strip().splitlines()
