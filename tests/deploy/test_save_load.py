"""rk.save / rk.load: every bundled deep recipe and a tabular one, trained briefly, saved, and
loaded in a fresh process give the trained policy's actions on 1,000 observations; the
trained policy's predict is its greedy action; rk.load of a run directory."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from deploy_helpers import TABULAR, deep_recipes

import rlkit as rk
from rlkit.policies.q_based import ObservationView

ROOT = Path(__file__).resolve().parents[2]
NAMES = [*deep_recipes(), TABULAR]

LOADER = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import rlkit as rk
    jobs = json.loads(sys.argv[1])
    out = {}
    for name, (path, obs_path) in jobs.items():
        policy = rk.load(path)
        out[name] = policy.predict(np.load(obs_path))
        out[name + ":type"] = np.array(type(policy).__name__)
    np.savez(sys.argv[2], **out)
    """
)


@pytest.fixture(scope="module")
def fresh_process(trained, tmp_path_factory):
    """Every artifact loaded and predicted in one new Python process (nothing shared)."""
    folder = tmp_path_factory.mktemp("fresh")
    jobs = {}
    for name, (_, path, obs, _, _) in trained.items():
        np.save(folder / f"{name}.npy", obs)
        jobs[name] = (str(path), str(folder / f"{name}.npy"))
    result = folder / "predicted.npz"
    subprocess.run(
        [sys.executable, "-c", LOADER, json.dumps(jobs), str(result)],
        cwd=ROOT, check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return dict(np.load(result))


def test_every_deep_recipe_and_a_tabular_one_is_covered():
    assert {"PPO_CartPole", "DQN_CartPole", "SAC_Pendulum", "QRDQN_CartPole"} <= set(NAMES)
    assert TABULAR in NAMES and len(NAMES) >= 20


@pytest.mark.parametrize("name", NAMES)
def test_loaded_in_a_fresh_process_predicts_the_trained_actions(name, trained, fresh_process):
    policy, _, obs, actions, learned = trained[name]
    assert learned > 0, f"{name} did not learn in its brief budget"
    assert len(obs) == 1000
    loaded = fresh_process[name]
    assert loaded.shape == actions.shape
    np.testing.assert_array_equal(loaded, actions)


@pytest.mark.parametrize("name", NAMES)
def test_predict_is_the_trained_policys_greedy_action(name, trained):
    """predict(obs) of the trained policy = what rk.greedy(policy) does in those states
    (tabular: where the maximal action is unique, greedy breaks ties at random)."""
    policy, _, obs, actions, learned = trained[name]
    player = rk.greedy(policy)
    acted = np.stack([np.asarray(player.act(ObservationView(o))) for o in obs[:200]])
    if name == TABULAR:
        table = policy.learner.approximator.table[obs[:200]]
        unique = (table == table.max(axis=1, keepdims=True)).sum(axis=1) == 1
        assert unique.sum() > 20
        np.testing.assert_array_equal(acted[unique], actions[:200][unique])
    else:
        np.testing.assert_allclose(acted, actions[:200], rtol=0, atol=1e-6)


def test_loaded_policy_kinds_and_metadata(trained, fresh_process):
    kinds = {name: str(fresh_process[name + ":type"]) for name in NAMES}
    assert kinds["PPO_CartPole"] == "StochasticPolicy"
    assert kinds["SAC_Pendulum"] == "LoadedActorPolicy"
    assert kinds["DQN_CartPole"] == kinds[TABULAR] == "QBasedPolicy"
    loaded = rk.load(trained["SAC_Pendulum"][1])
    assert loaded.algorithm == "SAC" and loaded.action_space.shape == (1,)


def test_a_loaded_policy_acts_in_rk_run_and_saves_again(trained, tmp_path):
    _, path, obs, actions, _ = trained["PPO_CartPole"]
    loaded = rk.load(path, env=rk.GymEnv("CartPole-v1"))
    hook = rk.run(rk.greedy(loaded), rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNEpisodes(2),
                  rk.TotalRewardPerEpisode())  # fmt: skip
    assert len(hook.rewards) == 2
    rk.save(loaded, tmp_path / "again.rlkit")
    np.testing.assert_array_equal(rk.load(tmp_path / "again.rlkit").predict(obs), actions)


def test_a_loaded_q_policy_acts_in_rk_run_and_saves_again(trained, tmp_path):
    _, path, obs, actions, _ = trained["QRDQN_CartPole"]
    loaded = rk.load(path)
    hook = rk.run(loaded, rk.GymEnv("CartPole-v1", seed=0), rk.StopAfterNEpisodes(1),
                  rk.TotalRewardPerEpisode())  # fmt: skip
    assert len(hook.rewards) == 1
    rk.save(loaded, tmp_path / "again.rlkit")
    np.testing.assert_array_equal(rk.load(tmp_path / "again.rlkit").predict(obs), actions)


def test_the_artifact_holds_json_and_safetensors_only(trained):
    import zipfile

    with zipfile.ZipFile(trained["DQN_CartPole"][1]) as zf:
        assert sorted(zf.namelist()) == ["policy.json", "policy.safetensors"]
        meta = json.loads(zf.read("policy.json"))
    assert meta["format"] == "rlkit-policy" and meta["format_version"] == 1
    assert meta["kind"] == "q_network" and meta["algorithm"] == "DQNLearner"
    assert meta["network"]["type"] == "Sequential"
    assert meta["observation_space"]["type"] == "Box" and meta["action_space"]["n"] == 2
    assert {"rlkit", "torch", "gymnasium", "numpy"} <= set(meta["versions"])


def test_rlkit_run_writes_the_policy_and_rk_load_reads_the_run_directory(tmp_path):
    run_dir = tmp_path / "ppo"
    done = subprocess.run(
        [sys.executable, "-m", "rlkit.cli", "run", "PPO_CartPole", "--steps", "256",
         "--logdir", str(run_dir)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "trained policy written to" in done.stdout
    assert (run_dir / "policy.rlkit").is_file()
    policy = rk.load(run_dir)
    assert policy.algorithm == "PPO"
    assert policy.predict(np.zeros(4, np.float32)).shape == ()


def test_rk_load_of_a_run_directory_without_a_policy_says_why(tmp_path):
    with pytest.raises(FileNotFoundError, match="has no policy.rlkit.*rlkit resume"):
        rk.load(tmp_path)


def test_rlkit_run_of_a_policy_without_artifacts_says_so_and_succeeds(tmp_path):
    run_dir = tmp_path / "td0"
    done = subprocess.run(
        [sys.executable, "-m", "rlkit.cli", "run", "TD0_RandomWalk1D", "--set", "episodes=3",
         "--logdir", str(run_dir)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "no policy.rlkit for this policy: rk.save: a VBasedPolicy acts with its mapper" in (
        done.stdout
    )
    assert not (run_dir / "policy.rlkit").exists() and (run_dir / "episodes.csv").is_file()


def test_tabular_policies_save_and_load_without_torch(trained):
    _, path, obs, actions, _ = trained[TABULAR]
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["torch"] = None  # torch cannot be imported
        import numpy as np, rlkit as rk
        policy = rk.load({str(path)!r})
        rk.save(policy, {str(path.with_name("again.rlkit"))!r})
        print(rk.load({str(path.with_name("again.rlkit"))!r}).predict(np.arange(48)).tolist())
        """
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == rk.load(path).predict(np.arange(48)).tolist()
