"""``rlkit tune NAME --trials N``: Optuna trials of a recipe, pruned through its evaluations,
stored in SQLite so that a killed search resumes without repeating finished trials; the
results and ``rlkit run --set-from best.json``; refusals."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna")  # in the test extra: never skipped in CI

from rlkit.cli.search_spaces import SPACES, space_for  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# tiny trials: 2 envs, 1024 steps, 4 evaluations of 3 episodes; pruning after 3 trials
TINY = ["--steps", "1024", "--set", "n_envs=2", "--eval-episodes", "3", "--startup-trials", "3",
        "--sampler", "random"]  # fmt: skip


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "rlkit", *args]


def rlkit(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(command(*args), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def finished(storage: str, name: str) -> list:
    study = optuna.load_study(study_name=name, storage=storage)
    states = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    return study.get_trials(deepcopy=False, states=states)


def count_finished(db: Path) -> int:
    """Finished trials read straight from the study's SQLite file, read-only: the poll creates
    nothing (``optuna.load_study``'s storage creates the schema when it is missing, and so
    raced the search creating it: ``table studies already exists`` killed the search)."""
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1)) as c:
            query = "SELECT COUNT(*) FROM trials WHERE state IN ('COMPLETE', 'PRUNED')"
            return c.execute(query).fetchone()[0]
    except sqlite3.Error:  # not created yet, or the schema is being written
        return 0


@pytest.mark.slow
def test_tune_prunes_and_a_killed_search_resumes_without_repeating_trials(tmp_path):
    run_dir, storage = tmp_path / "tune", f"sqlite:///{tmp_path / 'study.db'}"
    args = ["tune", "PPO_CartPole", "--trials", "8", "--storage", storage, "--logdir",
            str(run_dir), *TINY]  # fmt: skip
    log = (tmp_path / "search.log").open("w")  # a file, not a pipe: a full pipe would stall it
    process = subprocess.Popen(command(*args), cwd=ROOT, stdout=log, stderr=log)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        if count_finished(tmp_path / "study.db") >= 3:
            break
        time.sleep(0.05)
    if process.poll() is not None:  # it ended (or crashed) before the kill: say how
        raise AssertionError(
            f"the search exited with {process.returncode} before it could be "
            f"killed:\n{(tmp_path / 'search.log').read_text()}"
        )
    process.kill()
    process.wait()
    log.close()
    before = finished(storage, "PPO_CartPole")  # a trial may finish between the poll and the kill
    assert 3 <= len(before) < 8, (tmp_path / "search.log").read_text()
    kept = {t.number: (t.state, t.params) for t in before}

    resumed = rlkit(*args)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(before)} of 8 trials finished" in resumed.stdout
    ran = [line for line in resumed.stdout.splitlines() if line.startswith("trial ")]
    numbers = [int(line.split()[1].rstrip(":")) for line in ran]
    assert not set(numbers) & set(kept)  # finished trials are not run again
    after = finished(storage, "PPO_CartPole")
    assert len(after) == 8 and len(ran) == 8 - len(before)
    assert {t.number: (t.state, t.params) for t in after if t.number in kept} == kept
    assert any(t.state == optuna.trial.TrialState.PRUNED for t in after)
    # a pruned trial stopped at an evaluation before the last: fewer intermediate values
    pruned = [t for t in after if t.state == optuna.trial.TrialState.PRUNED]
    assert all(len(t.intermediate_values) < 4 for t in pruned)

    for name in ("best.json", "trials.csv", "trials.md", "importance.png"):
        assert (run_dir / name).is_file(), name
    best = json.loads((run_dir / "best.json").read_text())
    assert set(best) <= {
        "batch_size",
        "n_steps",
        "gamma",
        "lr",
        "ent_coef",
        "clip_range",
        "n_epochs",
        "gae_lambda",
        "max_grad_norm",
        "vf_coef",
        "hidden",
    }
    assert (run_dir / "trials.md").read_text().count("\n") == 2 + len(after) + sum(
        1
        for t in optuna.load_study(study_name="PPO_CartPole", storage=storage).trials
        if t.number not in {a.number for a in after}
    )

    again = rlkit(*args)  # the study is complete: nothing more runs
    assert again.returncode == 0 and "8 of 8 trials finished" in again.stdout
    assert not [line for line in again.stdout.splitlines() if line.startswith("trial ")]

    run = rlkit("run", "PPO_CartPole", "--set-from", str(run_dir / "best.json"), "--steps",
                "256", "--set", "n_envs=2", "--logdir", str(tmp_path / "best"),
                "--quiet")  # fmt: skip
    assert run.returncode == 0, run.stderr
    config = json.loads((tmp_path / "best" / "config.json").read_text())
    assert config["params"]["gamma"] == best["gamma"] and config["params"]["n_envs"] == 2


@pytest.mark.slow
def test_jobs_start_worker_processes_on_one_storage(tmp_path):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    done = rlkit("tune", "PPO_CartPole", "--trials", "4", "--jobs", "2", "--storage", storage,
                 "--logdir", str(tmp_path / "tune"), *TINY)  # fmt: skip
    assert done.returncode == 0, done.stderr
    trials = finished(storage, "PPO_CartPole")
    assert 4 <= len(trials) <= 5  # each worker stops once 4 are finished
    assert (tmp_path / "tune" / "trials.csv").is_file()


OPEN_AT = """
import sys, time
import optuna.storages  # imported before the common start, so that the three race
from rlkit.cli.tune import open_storage
while time.time() < float(sys.argv[2]):
    pass
open_storage(sys.argv[1])
print("opened")
"""


def test_searches_started_together_on_a_new_storage_all_open_it(tmp_path):
    """Several ``rlkit tune`` processes on one new SQLite file all create its tables; Optuna's
    storage alone fails in the slower ones (``table studies already exists``, a unique version
    row): ``open_storage`` retries those."""
    url = f"sqlite:///{tmp_path / 'study.db'}"
    start = str(time.time() + 6)  # after the imports of all three
    processes = [
        subprocess.Popen([sys.executable, "-c", OPEN_AT, url, start], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(3)
    ]  # fmt: skip
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0 and out.strip() == "opened", err
    with closing(sqlite3.connect(tmp_path / "study.db")) as db:  # the schema is whole
        assert db.execute("SELECT COUNT(*) FROM trials").fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM version_info").fetchone() == (1,)


def test_a_study_name_reused_for_another_recipe_is_refused(tmp_path):
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    first = rlkit("tune", "A2C_CartPole", "--trials", "1", "--storage", storage, "--study-name",
                  "search", "--steps", "80", "--n-evaluations", "1", "--eval-episodes", "1",
                  "--logdir", str(tmp_path / "a"))  # fmt: skip
    assert first.returncode == 0, first.stderr
    second = rlkit("tune", "PPO_CartPole", "--trials", "1", "--storage", storage,
                   "--study-name", "search", "--logdir", str(tmp_path / "b"))  # fmt: skip
    assert second.returncode == 2
    assert "the study 'search'" in second.stderr and "searches the recipe 'A2C_CartPole', not "
    assert "'PPO_CartPole'; give another --study-name" in second.stderr


def test_a_recipe_without_a_search_space_is_refused(tmp_path):
    done = rlkit("tune", "SARSA_CliffWalking", "--trials", "2", "--logdir", str(tmp_path))
    assert done.returncode == 2
    assert "no search space for 'SARSA_CliffWalking' (algorithm 'SARSA')" in done.stderr


def test_bad_counts_are_refused(tmp_path):
    done = rlkit("tune", "PPO_CartPole", "--trials", "0", "--logdir", str(tmp_path))
    assert done.returncode == 2 and "--trials must be a positive integer, got 0" in done.stderr


def test_set_from_must_hold_a_json_object(tmp_path):
    bad = tmp_path / "best.json"
    bad.write_text("[1, 2]")
    done = rlkit("run", "PPO_CartPole", "--set-from", str(bad), "--logdir", str(tmp_path / "r"))
    assert done.returncode == 2
    assert "expected a JSON object of NAME: VALUE, got list" in done.stderr


@pytest.mark.parametrize(
    "algorithm, recipe",
    [("PPO", "PPO_CartPole"), ("A2C", "A2C_CartPole"), ("DQN", "DQN_CartPole"),
     ("SAC", "SAC_Pendulum"), ("TD3", "TD3_Pendulum"), ("DQN", "HER_DQN_BitFlipping"),
     ("SAC", "HER_SAC_BitFlipping")],
)  # fmt: skip
def test_search_spaces_sample_parameters_the_recipes_accept(algorithm, recipe):
    from rlkit.core.experiment import recipe_parameters

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    declared = recipe_parameters(recipe)
    for _ in range(5):
        trial = study.ask()
        sampled = space_for(recipe)(trial)
        assert sampled and set(sampled) <= set(declared), set(sampled) - set(declared)
        study.tell(trial, 0.0)
    assert SPACES[algorithm] is space_for(recipe)
