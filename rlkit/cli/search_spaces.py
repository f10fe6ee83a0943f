"""The hyperparameter search spaces of ``rlkit tune`` (docs/how-to/tuning.md), per algorithm,
after rl-baselines3-zoo's ``rl_zoo3/hyperparams_opt.py`` (``sample_ppo_params``,
``sample_a2c_params``, ``sample_dqn_params``, ``sample_sac_params``, ``sample_td3_params``),
in the recipes' parameter names (``lr``, ``hidden``, ...).

A space is a function ``(trial) -> dict`` of recipe overrides; a recipe gets the space of its
algorithm, the part of its name before the underscore (``PPO_CartPole`` -> PPO, ``ApeX_*`` ->
DQN's, ``IMPALA_*`` -> A2C's), and only the parameters it declares. Differences from the zoo:
no ``ortho_init``, ``use_rms_prop``, ``lr_schedule`` or ``activation_fn`` choices where a recipe
has no such parameter; ``net_arch`` is ``hidden``.

Example:
    >>> import optuna
    >>> trial = optuna.trial.FixedTrial({"batch_size": 64, "n_steps": 32, "gamma": 0.99,
    ...     "lr": 1e-3, "ent_coef": 1e-3, "clip_range": 0.2, "n_epochs": 10, "gae_lambda": 0.95,
    ...     "max_grad_norm": 0.5, "vf_coef": 0.5, "net_arch": "small"})
    >>> sample_ppo(trial)["hidden"], sample_ppo(trial)["batch_size"]
    ((64, 64), 32)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["SPACES", "space_for", "sample_ppo", "sample_a2c", "sample_dqn", "sample_sac",
           "sample_td3"]  # fmt: skip

GAMMAS = [0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.9999]
GRAD_NORMS = [0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 2.0, 5.0]
GAE_LAMBDAS = [0.8, 0.9, 0.92, 0.95, 0.98, 0.99, 1.0]
N_STEPS = [8, 16, 32, 64, 128, 256, 512, 1024, 2048]
ON_POLICY_NETS = {"tiny": (64,), "small": (64, 64), "medium": (256, 256)}
DQN_NETS = {"tiny": (64,), "small": (64, 64), "medium": (256, 256)}
OFF_POLICY_NETS = {"small": (64, 64), "medium": (256, 256), "big": (400, 300)}
BATCH_SIZES = [16, 32, 64, 100, 128, 256, 512]


def sample_ppo(trial: Any) -> dict[str, Any]:
    """PPO (zoo's ``sample_ppo_params``): the batch size is cut to ``n_steps`` when larger."""
    batch_size = trial.suggest_categorical("batch_size", [8, 16, 32, 64, 128, 256, 512])
    n_steps = trial.suggest_categorical("n_steps", N_STEPS)
    params = {
        "batch_size": min(batch_size, n_steps),
        "n_steps": n_steps,
        "gamma": trial.suggest_categorical("gamma", GAMMAS),
        "lr": trial.suggest_float("lr", 1e-5, 1.0, log=True),
        "ent_coef": trial.suggest_float("ent_coef", 1e-8, 0.1, log=True),
        "clip_range": trial.suggest_categorical("clip_range", [0.1, 0.2, 0.3, 0.4]),
        "n_epochs": trial.suggest_categorical("n_epochs", [1, 5, 10, 20]),
        "gae_lambda": trial.suggest_categorical("gae_lambda", GAE_LAMBDAS),
        "max_grad_norm": trial.suggest_categorical("max_grad_norm", GRAD_NORMS),
        "vf_coef": trial.suggest_float("vf_coef", 0.0, 1.0),
    }
    params["hidden"] = ON_POLICY_NETS[trial.suggest_categorical("net_arch", list(ON_POLICY_NETS))]
    return params


def sample_a2c(trial: Any) -> dict[str, Any]:
    """A2C (zoo's ``sample_a2c_params``, without the RMSprop/Adam, schedule and init choices)."""
    params = {
        "gamma": trial.suggest_categorical("gamma", GAMMAS),
        "normalize_advantage": trial.suggest_categorical("normalize_advantage", [False, True]),
        "max_grad_norm": trial.suggest_categorical("max_grad_norm", GRAD_NORMS),
        "gae_lambda": trial.suggest_categorical("gae_lambda", GAE_LAMBDAS),
        "n_steps": trial.suggest_categorical("n_steps", N_STEPS),
        "lr": trial.suggest_float("lr", 1e-5, 1.0, log=True),
        "ent_coef": trial.suggest_float("ent_coef", 1e-8, 0.1, log=True),
        "vf_coef": trial.suggest_float("vf_coef", 0.0, 1.0),
    }
    params["hidden"] = ON_POLICY_NETS[trial.suggest_categorical("net_arch", list(ON_POLICY_NETS))]
    return params


def sample_dqn(trial: Any) -> dict[str, Any]:
    """DQN (zoo's ``sample_dqn_params``): ``gradient_steps = max(train_freq // subsample, 1)``."""
    train_freq = trial.suggest_categorical("train_freq", [1, 4, 8, 16, 128, 256, 1000])
    subsample = trial.suggest_categorical("subsample_steps", [1, 2, 4, 8])
    params = {
        "gamma": trial.suggest_categorical("gamma", GAMMAS),
        "lr": trial.suggest_float("lr", 1e-5, 1.0, log=True),
        "batch_size": trial.suggest_categorical("batch_size", BATCH_SIZES),
        "buffer_size": trial.suggest_categorical("buffer_size", [10_000, 50_000, 100_000,
                                                                 1_000_000]),  # fmt: skip
        "exploration_final_eps": trial.suggest_float("exploration_final_eps", 0.0, 0.2),
        "exploration_fraction": trial.suggest_float("exploration_fraction", 0.0, 0.5),
        "target_update_interval": trial.suggest_categorical(
            "target_update_interval", [1, 1000, 5000, 10000, 15000, 20000]
        ),
        "learning_starts": trial.suggest_categorical("learning_starts", [0, 1000, 5000, 10000,
                                                                          20000]),  # fmt: skip
        "train_freq": train_freq,
        "gradient_steps": max(train_freq // subsample, 1),
    }
    params["hidden"] = DQN_NETS[trial.suggest_categorical("net_arch", list(DQN_NETS))]
    return params


def _off_policy(trial: Any) -> dict[str, Any]:
    train_freq = trial.suggest_categorical("train_freq", [1, 4, 8, 16, 32, 64, 128, 256, 512])
    return {
        "gamma": trial.suggest_categorical("gamma", GAMMAS),
        "lr": trial.suggest_float("lr", 1e-5, 1.0, log=True),
        "batch_size": trial.suggest_categorical("batch_size", BATCH_SIZES[:-1] + [256, 512]),
        "buffer_size": trial.suggest_categorical("buffer_size", [10_000, 100_000, 1_000_000]),
        "train_freq": train_freq,
        "gradient_steps": train_freq,
        "hidden": OFF_POLICY_NETS[trial.suggest_categorical("net_arch", list(OFF_POLICY_NETS))],
    }


def sample_sac(trial: Any) -> dict[str, Any]:
    """SAC (zoo's ``sample_sac_params``; ``ent_coef`` stays "auto", as the zoo's)."""
    params = _off_policy(trial)
    params["learning_starts"] = trial.suggest_categorical("learning_starts", [0, 1000, 10000,
                                                                              20000])  # fmt: skip
    params["tau"] = trial.suggest_categorical("tau", [0.001, 0.005, 0.01, 0.02, 0.05, 0.08])
    return params


def sample_td3(trial: Any) -> dict[str, Any]:
    """TD3 (zoo's ``sample_td3_params``): action noise type and scale."""
    params = _off_policy(trial)
    params["noise_type"] = trial.suggest_categorical("noise_type", ["ornstein-uhlenbeck",
                                                                    "normal", None])  # fmt: skip
    params["noise_std"] = trial.suggest_float("noise_std", 0.0, 1.0)
    return params


SPACES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "PPO": sample_ppo,
    "A2C": sample_a2c,
    "IMPALA": sample_a2c,
    "DQN": sample_dqn,
    "PrioritizedDQN": sample_dqn,
    "QRDQN": sample_dqn,
    "BasicDQN": sample_dqn,
    "ApeX": sample_dqn,
    "SAC": sample_sac,
    "TD3": sample_td3,
    "DDPG": sample_td3,
}


def space_for(recipe: str) -> Callable[[Any], dict[str, Any]]:
    """The search space of ``recipe`` (by its algorithm: the part of its name before the last
    ``_``, or that part's last word, as ``DQN`` of ``HER_DQN_BitFlipping``), or
    ``ValueError`` listing the algorithms that have one.

    Example:
        >>> space_for("PPO_CartPole").__name__
        'sample_ppo'
    """
    algorithm = recipe.rsplit("_", 1)[0]
    space = SPACES.get(algorithm) or SPACES.get(algorithm.rsplit("_", 1)[-1])
    if space is None:
        raise ValueError(
            f"rlkit tune: no search space for {recipe!r} (algorithm {algorithm!r}); search "
            f"spaces exist for the recipes of {', '.join(sorted(SPACES))}"
        )
    return space
