"""Offline recipes (experiments/offline.py): registration, every hyperparameter of the algorithm
as a parameter, the dataset made when missing (cached, recorded with its seed and recipe,
progress shown) and reused, bad settings refused before any data is made, ``rlkit run`` and
``--help``, and learning from the recipes' own datasets within Tianshou's budgets."""

from __future__ import annotations

import math
import re
import subprocess
import sys

import pytest
import torch
from rlkit.experiments import offline

import rlkit as rk
from rlkit.core.experiment import _recipe, recipe_parameters
from rlkit.learners.offline.bc import BC_DEFAULTS
from rlkit.learners.offline.cql import CQL_DEFAULTS
from rlkit.learners.offline.iql import IQL_DEFAULTS
from rlkit.learners.offline.td3bc import TD3BC_DEFAULTS

RECIPES = {
    "BC_CartPoleExpert": BC_DEFAULTS,
    "BC_PendulumMedium": BC_DEFAULTS,
    "IQL_HalfCheetahMedium": IQL_DEFAULTS,
    "CQL_PendulumMedium": CQL_DEFAULTS,
    "CQL_PendulumRandom": CQL_DEFAULTS,
    "IQL_PendulumMedium": IQL_DEFAULTS,
    "IQL_PendulumMediumReplay": IQL_DEFAULTS,
    "TD3BC_PendulumMedium": TD3BC_DEFAULTS,
}
#: where a recipe departs from its algorithm's defaults (experiments/offline.py says why)
RECIPE_DEFAULTS = {("CQL_PendulumMedium", "critic_layer_norm"): True}
#: settings of an online run that an offline one has no use for
ONLINE_ONLY = {"buffer_size", "learning_starts", "train_freq", "gradient_steps", "action_noise"}

#: small datasets for the fast tests (a random policy's: no training)
TINY = {"dataset": "random", "dataset_size": 400, "eval_every": 10, "eval_episodes": 1}


def cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rlkit.cli", *args], capture_output=True, text=True, **kwargs
    )


def test_recipes_are_registered():
    names = rk.list_experiments()
    for name in [*RECIPES, "DiscreteCQL_CartPoleReplay", "SAC_PendulumRandom"]:
        assert name in names


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_every_hyperparameter_of_the_algorithm_is_a_parameter(name):
    params = recipe_parameters(name)
    for key, default in RECIPES[name].items():
        if key in ONLINE_ONLY:
            assert key not in params
            continue
        assert key in params, key
        if key not in ("batch_size",):
            default = RECIPE_DEFAULTS.get((name, key), default)
            assert params[key].default == default, (key, params[key].default, default)
    for key in ("lr", "hidden", "total_steps", "device", "batch_size", "dataset_size"):
        assert key in params


def test_cql_pendulum_medium_normalises_its_critics_unless_told_not_to(tmp_path):
    def norms(**override) -> int:
        exp = rk.make_experiment("CQL_PendulumMedium", 0, data_dir=str(tmp_path), **TINY,
                                 **override)  # fmt: skip
        critic = exp.policy.model.critic
        return sum(isinstance(m, torch.nn.LayerNorm) for m in critic.modules())

    assert norms() == 4  # two hidden layers in each of the two critics
    assert norms(critic_layer_norm=False) == 0
    random = rk.make_experiment("CQL_PendulumRandom", 0, data_dir=str(tmp_path), **TINY)
    assert random.params["critic_layer_norm"] is False  # the other CQL recipe: d3rlpy's network


def test_discrete_cql_parameters_reach_the_learner(tmp_path):
    exp = rk.make_experiment(
        "DiscreteCQL_CartPoleReplay", 0, data_dir=str(tmp_path), alpha=0.5, gamma=0.9,
        target_update_interval=7, lr=1e-2, **TINY,
    )  # fmt: skip
    learner = exp.policy.learner
    assert (learner.alpha, learner.gamma, learner.target.sync_every) == (0.5, 0.9, 7)
    optimizer = learner.approximator.optimizer
    assert optimizer.param_groups[0]["lr"] == 1e-2


def test_the_dataset_is_made_once_cached_and_records_its_recipe(tmp_path, capsys):
    exp = rk.make_experiment("CQL_PendulumRandom", 3, data_dir=str(tmp_path), **TINY)
    made = capsys.readouterr().err
    path = tmp_path / "Pendulum-v1-random-RandomPolicy-n400-seed0.npz"
    assert f"making the dataset {path}" in made and "400/400" in made  # progress shown
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # written atomically: no leftover
    dataset = rk.Dataset.load(path)
    assert len(dataset) == 400 and dataset.seed == 0
    assert "uniformly random actions" in dataset.policy_description
    assert exp.env.dataset.observations.tobytes() == dataset.observations.tobytes()
    assert exp.params["dataset_seed"] == 0
    before = path.stat().st_mtime_ns
    rk.make_experiment("SAC_PendulumRandom", 1, data_dir=str(tmp_path), **TINY)
    assert "making the dataset" not in capsys.readouterr().err
    assert path.stat().st_mtime_ns == before
    rk.make_experiment("CQL_PendulumRandom", 3, data_dir=str(tmp_path), dataset_seed=1, **TINY)
    assert (tmp_path / "Pendulum-v1-random-RandomPolicy-n400-seed1.npz").exists()


def test_a_pendulum_medium_dataset_samples_the_sac_policy_and_is_reproducible(tmp_path):
    """D4RL's way: the snapshot's sampled actions, not its greedy ones (a greedy dataset has
    one action per state); the same dataset_seed makes the same file, bit for bit."""
    tiny = {"source_steps": 120, "dataset_size": 400, "total_steps": 1, "eval_every": 1,
            "eval_episodes": 1}  # fmt: skip
    exp = rk.make_experiment("BC_PendulumMedium", 0, data_dir=str(tmp_path / "a"), **tiny)
    path = tmp_path / "a" / "Pendulum-v1-medium-SAC_Pendulum-120-sampled-n400-seed0.npz"
    assert path.exists()
    dataset = exp.env.dataset
    assert "sampling its actions" in dataset.policy_description
    again = rk.make_experiment("TD3BC_PendulumMedium", 5, data_dir=str(tmp_path / "b"), **tiny)
    assert again.env.dataset.actions.tobytes() == dataset.actions.tobytes()
    assert again.env.dataset.observations.tobytes() == dataset.observations.tobytes()
    # SAC_Pendulum acts uniformly before learning_starts: the snapshot at step 120 is a
    # squashed Gaussian of the untrained actor, whose samples spread (greedy ones would not)
    assert dataset.actions.std() > 0.5


def test_the_half_cheetah_recipe_runs_end_to_end_on_a_small_dataset(tmp_path, monkeypatch):
    """IQL_HalfCheetahMedium's whole path at a small scale: SAC_HalfCheetah trained a few
    steps, its medium snapshot recorded sampling its actions (one 1,000-step episode, cut by
    the time limit), IQL trained on it and evaluated greedily in HalfCheetah-v5 (the recipe's
    own scale: benchmarks/results_offline_learning.txt). mujoco is in the test extra."""
    small = {"source_steps": 12, "dataset_size": 1_000, "total_steps": 4, "eval_every": 2,
             "eval_episodes": 1}  # fmt: skip
    # the module the registered recipe runs in (a test elsewhere may have imported the recipes
    # anew, so it need not be the one imported at the top of this file)
    recipe_module = _recipe("IQL_HalfCheetahMedium").__globals__
    monkeypatch.setitem(recipe_module, "SOURCE_EVALUATIONS", 2)  # 2 snapshots of 1 episode each
    monkeypatch.setitem(recipe_module, "SOURCE_EVAL_EPISODES", 1)
    exp = rk.make_experiment("IQL_HalfCheetahMedium", 0, data_dir=str(tmp_path), **small)
    path = tmp_path / "HalfCheetah-v5-medium-SAC_HalfCheetah-12-sampled-n1000-seed0.npz"
    assert [p.name for p in tmp_path.iterdir()] == [path.name]
    dataset = exp.env.dataset
    assert dataset.observations.shape == (1_000, 17) and dataset.actions.shape == (1_000, 6)
    assert "SAC_HalfCheetah trained 12 steps" in dataset.policy_description
    assert re.search(r"its policy at step (6|12) \(greedy evaluation", dataset.policy_description)
    assert "sampling its actions" in dataset.policy_description
    assert len(dataset.episode_returns()) == 1
    rk.run(exp)
    assert [r.step for r in exp.hook.results] == [2, 4]
    assert all(math.isfinite(r.mean) for r in exp.hook.results)


def test_the_data_dir_defaults_to_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("RLKIT_DATA_DIR", str(tmp_path / "data"))
    params = offline.CQLParams(total_steps=1, dataset="random", dataset_size=400)
    assert offline.data_dir(params) == tmp_path / "data"
    monkeypatch.delenv("RLKIT_DATA_DIR")
    assert offline.data_dir(params) == offline.Path.home() / ".cache" / "rlkit" / "datasets"


def test_a_medium_dataset_comes_from_the_snapshot_half_way_to_the_best():
    shots = [(100, -1500.0, "a"), (200, -1100.0, "b"), (300, -700.0, "c"), (400, -150.0, "d")]
    assert offline.choose_snapshot(shots, "expert", -1214.0)[2] == "d"
    # half-way between -1214 and -150 is -682: the snapshot at step 300
    assert offline.choose_snapshot(shots, "medium", -1214.0)[2] == "c"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"dataset": "good"}, "dataset must be one of 'expert', 'medium', 'replay', 'random'"),
        ({"dataset_size": 0}, "dataset_size must be a positive integer, got 0"),
        ({"conservative_weight": float("nan")}, "conservative_weight"),
    ],
)
def test_bad_settings_are_refused_before_any_data_is_made(tmp_path, override, message):
    with pytest.raises(ValueError, match="CQL_PendulumMedium") as error:
        rk.make_experiment("CQL_PendulumMedium", 0, data_dir=str(tmp_path), **override)
    assert message in str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_rlkit_run_help_says_total_steps_counts_gradient_steps():
    result = cli("run", "CQL_PendulumMedium", "--help")
    assert result.returncode == 0, result.stderr
    assert "--steps sets total_steps, counted in gradient steps" in result.stdout
    assert "conservative_weight: float" in result.stdout


def test_rlkit_run_trains_offline_and_evaluates_in_the_real_env(tmp_path):
    result = cli(
        "run", "TD3BC_PendulumMedium", "--steps", "20",
        "--set", "dataset=random", "--set", "dataset_size=400", "--set", f"data_dir={tmp_path}",
        "--set", "eval_every=10", "--set", "eval_episodes=1", "--out", str(tmp_path / "runs"),
        timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "making the dataset" in result.stderr
    assert "done: 20 of 20 steps" in result.stdout
    assert "greedy evaluation (1 episodes, 2 times)" in result.stdout


# ---- learning (Tianshou's offline CI budgets) ----


@pytest.fixture(scope="module")
def pendulum_data(tmp_path_factory) -> str:
    """A folder where the Pendulum recipes' medium dataset (SAC_Pendulum trained 3,000 steps,
    the snapshot half-way between a random policy's return and the best, 10,000 transitions)
    is made once for the module."""
    return str(tmp_path_factory.mktemp("pendulum-data"))


def test_iql_pendulum_recipes_train_two_time_constants_of_the_value_backup():
    """The Pendulum IQL recipes' budget is 2 / (tau * (1 - gamma)) updates at their own tau
    and gamma (docs/how-to/offline-rl.md, "How long to train IQL")."""
    for name in ("IQL_PendulumMedium", "IQL_PendulumMediumReplay"):
        p = {k: v.default for k, v in recipe_parameters(name).items()}
        assert p["total_steps"] == round(2 / (p["tau"] * (1 - p["gamma"]))) == 40_000, name


PENDULUM = {"total_steps": 2_500, "eval_every": 2_500}  # as benchmarks/offline_learning.py


def final_and_behaviour(exp: rk.Experiment) -> tuple[float, float]:
    rk.run(exp)
    return exp.hook.results[-1].mean, float(exp.env.dataset.episode_returns().mean())


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, overrides",
    [("TD3BC_PendulumMedium", {}), ("IQL_PendulumMedium", {"eval_episodes": 30})],
)
def test_pendulum_medium_reaches_minus_1200_within_2500_updates(pendulum_data, name, overrides):
    """The recipe as it is, after 2,500 updates: at or above Tianshou's offline floor for
    Pendulum (-1200).

    CQL's recipe is not trained here: its 2,500 updates take about 250 s of CPU (30 sampled
    actions per state through two 256-256 critics), the largest item of the suite. Tianshou's
    floor for CQL is tested at Tianshou's own 64-unit width
    (tests/learners/offline/test_continuous_offline_learning.py), and the recipe at 2,500
    updates is measured on seeds 0-4 by benchmarks/offline_learning.py (-855.8, -493.9, -382.2,
    -544.8, -939.9: benchmarks/results_offline_learning.txt).

    IQL being above the data's mean return is its claim at its recipe's 40,000 updates (5 of 5
    seeds on two machines' datasets, benchmarks/results_offline_learning.txt: about 300-430 s
    of CPU a seed, too long for the suite). At 2,500 updates that depends on the dataset, which
    depends on the machine's floating point: above on one machine's (-776.8 against -799.9),
    below on another's (-870.6 against -843.0)."""
    exp = rk.make_experiment(name, 0, data_dir=pendulum_data, **PENDULUM, **overrides)
    final, behaviour = final_and_behaviour(exp)
    assert final >= -1200, (final, behaviour)


@pytest.mark.slow
def test_bc_matches_the_medium_datasets_mean_return_within_ten_percent(pendulum_data):
    """Seed 0 of benchmarks/offline_learning.py's study: BC's greedy policy (the Gaussian's
    mean) after 2,500 updates, over 30 episodes (measured: -876.0 against -799.9)."""
    exp = rk.make_experiment(
        "BC_PendulumMedium", 0, data_dir=pendulum_data, eval_episodes=30, **PENDULUM
    )
    final, behaviour = final_and_behaviour(exp)
    assert abs(final - behaviour) <= 0.1 * abs(behaviour), (final, behaviour)


def _q_and_return(policy, n: int) -> tuple[float, float]:
    """The critics' ``min_i Q_i(s_0, pi(s_0))`` and the discounted return really got from
    ``s_0``, each averaged over ``n`` greedy episodes of Pendulum-v1."""
    env, actor = rk.GymEnv("Pendulum-v1", seed=7), rk.greedy(policy, 7)
    estimates, returns = [], []
    for _ in range(n):
        env.reset()
        obs = torch.as_tensor(env.state[None], dtype=torch.float32)
        with torch.no_grad():
            estimates.append(float(torch.stack(policy.model.critic(obs, policy.model(obs))).min()))
        total, discount = 0.0, 1.0
        while not env.done:
            env.act(actor(env))
            total, discount = total + discount * env.reward, discount * policy.config["gamma"]
        returns.append(total)
    return sum(estimates) / n, sum(returns) / n


@pytest.mark.slow
def test_plain_sac_offline_over_estimates_unseen_actions_and_fails(pendulum_data):
    """The point of the conservative terms: plain SAC trained on the medium dataset (its
    actions near one policy's) pushes its actor to actions the data never shows, whose Q it
    over-estimates; its greedy return falls below Tianshou's floor of -1200, which CQL passes
    on the same data and budget on seeds 0-4 (benchmarks/results_offline_learning.txt; the
    docstring of test_td3bc_pendulum_medium_reaches_minus_1200_within_2500_updates)."""
    exp = rk.make_experiment(
        "SAC_PendulumRandom", 0, data_dir=pendulum_data, dataset="medium", eval_episodes=30,
        **PENDULUM,
    )  # fmt: skip
    final, behaviour = final_and_behaviour(exp)
    estimate, real = _q_and_return(exp.policy, 10)
    assert final < -1200 < behaviour, (final, behaviour)
    assert estimate > real + 300, (estimate, real)  # measured: -45.6 vs -696.6 (20 episodes)


@pytest.mark.slow
def test_bc_matches_its_expert_dataset_within_ten_percent(tmp_path):
    """The recipe's own expert dataset (DQN_CartPole's best policy of 50,000 steps, acting
    epsilon-greedily: its training is most of this test's minutes), BC's greedy policy over 100
    episodes, as many as the dataset holds. Measured on seeds 0-4 (dataset mean 463.0): 500.0,
    465.7, 491.4, 487.1, 397.3 (benchmarks/results_offline_learning.txt)."""
    exp = rk.make_experiment(
        "BC_CartPoleExpert", 0, data_dir=str(tmp_path), eval_every=5_000, eval_episodes=100
    )
    final, behaviour = final_and_behaviour(exp)
    assert abs(final - behaviour) <= 0.1 * behaviour, (final, behaviour)


@pytest.mark.slow
def test_discrete_cql_reaches_170_within_5000_updates(tmp_path):
    """Tianshou's offline CI criterion (test/offline/test_discrete_cql.py): 100 test episodes
    every 1,000 updates, and the run reaches 170 when one of them does, within 5 epochs of
    1,000. Measured on seeds 0-2 (evaluations at 1,000 ... 5,000 updates; the dataset's mean
    66.7): 44.2 111.4 379.6 194.3 164.5; 242.2 245.7 225.7 209.0 178.8; 20.0 150.3 260.1
    207.5 160.4."""
    exp = rk.make_experiment(
        "DiscreteCQL_CartPoleReplay", 0, data_dir=str(tmp_path), total_steps=5_000,
        eval_every=1_000, eval_episodes=100,
    )  # fmt: skip
    _, behaviour = final_and_behaviour(exp)
    best = max(result.mean for result in exp.hook.results)
    assert len(exp.hook.results) == 5
    assert behaviour < 170 <= best, ([r.mean for r in exp.hook.results], behaviour)
