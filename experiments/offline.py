"""Offline recipes: BC, DiscreteCQL, CQL, IQL and TD3+BC (rlkit/learners/offline) trained on
a dataset that the recipe makes with a bundled online recipe when it is missing.

* ``BC_CartPoleExpert``: BC on 50,000 transitions of a well-trained ``DQN_CartPole`` policy
  (epsilon-greedy with the recipe's final epsilon, as it acted at the end of its training).
* ``BC_PendulumMedium``: BC on the medium Pendulum dataset below (the baseline).
* ``DiscreteCQL_CartPoleReplay``: DiscreteCQL on the whole 10,000-step training run of
  ``DQN_CartPole`` (its replay buffer, the kind of data Tianshou's offline CI uses).
* ``CQL_PendulumMedium``, ``TD3BC_PendulumMedium``, ``IQL_PendulumMedium``: a briefly trained
  ``SAC_Pendulum`` policy ("medium": about half-way from a random policy's return to the
  expert's), sampling its actions as D4RL's datasets do (:class:`DatasetSource`).
* ``IQL_PendulumMediumReplay``: the whole training run of that ``SAC_Pendulum`` recorded (its
  replay buffer: random actions first, then the learning policy's).
* ``IQL_HalfCheetahMedium``: IQL on MuJoCo ``HalfCheetah-v5`` from a ``SAC_HalfCheetah`` policy
  trained 50,000 steps (a benchmark; making its dataset trains SAC for 50,000 steps, about ten
  minutes on an idle CPU core by ``SAC_HalfCheetah``'s 152 s per 20,000 steps).
* ``SAC_PendulumRandom`` and ``CQL_PendulumRandom``: plain SAC and CQL trained offline on a
  uniformly random policy's transitions, to see what the conservative term fixes.

(A recipe's name is ``Method_Environment``, one underscore: the dataset's kind is written into
the environment's part.) Budgets count gradient steps: ``total_steps`` (``rlkit run NAME
--steps N``) is the number of updates, each on ``batch_size`` transitions drawn from the
dataset. Every hyperparameter of the algorithm is a field of the recipe's dataclass
(:class:`BCParams`, :class:`DiscreteCQLParams`, :class:`CQLParams`, :class:`IQLParams`,
:class:`TD3BCParams`, all :class:`OfflineParams`), with the algorithm's defaults (d3rlpy's, see
docs/how-to/offline-rl.md; one exception, ``CQL_PendulumMedium`` normalises its critics' layers:
``critic_layer_norm=True``, :data:`CQL_PENDULUM_MEDIUM`), so ``rlkit run CQL_PendulumMedium
--set conservative_weight=1.0`` works, and ``config.json`` records them. ``lr``, ``hidden`` and
``device`` are named as in the other recipes.

The dataset is described by the recipe's ``dataset`` (its kind: ``expert``, ``medium``,
``replay`` or ``random``), ``dataset_size`` (transitions; a ``replay`` dataset is the source's
whole training run, ``source_steps`` transitions), ``source_steps`` (the environment steps the
source recipe trains) and ``dataset_seed`` (the dataset's own seed, apart from the recipe's
``seed``, so the seeds of a study learn from one dataset). It is cached as an ``.npz`` file in
``data_dir``, else ``$RLKIT_DATA_DIR``, else ``~/.cache/rlkit/datasets``, under a name made of
all four (``Pendulum-v1-medium-SAC_Pendulum-3000-n10000-seed0.npz``), written atomically by
``rk.DatasetRecorder``; the file keeps how it was made (``policy_description``) and its seed.
Making it trains the source recipe with a progress bar on standard error; later runs load it.

Each run evaluates the greedy policy in the real environment every ``eval_every`` updates
(``rk.EvaluationHook``, ``eval_episodes`` episodes).

Example:
    >>> p = CQL_PENDULUM_MEDIUM
    >>> p.total_steps, p.conservative_weight, p.dataset, sorted(p.algorithm_config())[:3]
    (10000, 5.0, 'medium', ['actor_lr', 'alpha_lr', 'conservative_weight'])
"""

from __future__ import annotations

import copy
import dataclasses
import os
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import rlkit as rk
from rlkit.core import checks
from rlkit.core.seeding import int_seed, spawn_seeds

from .continuous import require_mujoco
from .params import check_device, check_hidden

__all__ = [
    "OfflineParams",
    "BCParams",
    "DiscreteCQLParams",
    "CQLParams",
    "IQLParams",
    "TD3BCParams",
    "DatasetSource",
    "SOURCES",
    "DATASET_KINDS",
    "data_dir",
    "dataset_path",
    "ensure_dataset",
    "offline_experiment",
]

#: what a dataset's ``kind`` records
DATASET_KINDS = ("expert", "medium", "replay", "random")

#: the environment variable naming the datasets' folder
DATA_DIR_VARIABLE = "RLKIT_DATA_DIR"


@dataclass(frozen=True)
class DatasetSource:
    """The online recipe whose policy makes an environment's datasets, and how long it trains
    for each kind (``expert``: well trained; ``medium``: briefly; ``replay``: its training
    run recorded; ``random``: untrained, uniform actions). ``sampled``: an ``expert`` or
    ``medium`` dataset records the policy as it acted at the end of its training, instead of
    greedily: a SAC policy's sampled actions, as D4RL records its SAC policies; a DQN policy
    epsilon-greedy with its recipe's final epsilon. A greedy policy gives one action per
    state, so an offline learner has nothing to compare its actions with, and its states are
    one narrow band: a cloned policy that errs a little leaves the band and has never seen how
    to come back (a DQN_CartPole expert that drifts to the track's edge and holds the pole
    there is cloned into a policy that falls at that edge; DART, Laskey et al. 2017).

    Example:
        >>> SOURCES["Pendulum-v1"].sampled, SOURCES["CartPole-v1"].sampled
        (True, True)
    """

    env_id: str
    recipe: str
    source_steps: dict[str, int]
    sampled: bool = False


SOURCES = {
    "CartPole-v1": DatasetSource(
        "CartPole-v1",
        "DQN_CartPole",
        {"expert": 50_000, "medium": 20_000, "replay": 10_000},
        sampled=True,
    ),
    "Pendulum-v1": DatasetSource(
        "Pendulum-v1",
        "SAC_Pendulum",
        {"expert": 5_000, "medium": 3_000, "replay": 5_000},
        sampled=True,
    ),
    "HalfCheetah-v5": DatasetSource(
        "HalfCheetah-v5",
        "SAC_HalfCheetah",
        {"expert": 1_000_000, "medium": 50_000, "replay": 50_000},
        sampled=True,
    ),
}


@dataclass(frozen=True)
class OfflineParams:
    """Parameters every offline recipe shares. ``total_steps`` counts GRADIENT STEPS (updates
    on a batch of ``batch_size`` dataset transitions), not environment steps; ``lr``,
    ``hidden`` and ``device`` as in the other recipes. The dataset: ``dataset`` (its kind,
    one of :data:`DATASET_KINDS`), ``dataset_size`` transitions (a ``replay`` dataset holds
    the ``source_steps`` of the source's training run), ``source_steps`` environment steps of
    training of the source recipe (0: the source's default for the kind), ``dataset_seed``,
    ``data_dir`` (None: ``$RLKIT_DATA_DIR`` or ``~/.cache/rlkit/datasets``). The evaluation:
    every ``eval_every`` updates, ``eval_episodes`` episodes of the greedy policy.

    Example:
        >>> OfflineParams(total_steps=0).check("CQL_PendulumMedium")
        Traceback (most recent call last):
        ...
        ValueError: CQL_PendulumMedium: total_steps must be a positive integer, got 0
    """

    total_steps: int
    batch_size: int = 256
    lr: float = 3e-4
    hidden: tuple[int, ...] = (256, 256)
    device: str = "cpu"
    dataset: str = "medium"
    dataset_size: int = 10_000
    source_steps: int = 0
    dataset_seed: int = 0
    eval_every: int = 1_000
    eval_episodes: int = 10
    data_dir: str | None = None

    #: what ``total_steps`` counts (``rlkit run NAME --help`` says it)
    STEPS_UNIT: ClassVar[str] = "gradient steps (updates on dataset batches), not env steps"

    #: fields that are not the algorithm's hyperparameters
    run_fields: ClassVar[tuple[str, ...]] = (
        "total_steps", "batch_size", "device", "dataset", "dataset_size", "source_steps",
        "dataset_seed", "eval_every", "eval_episodes", "data_dir",
    )  # fmt: skip

    def algorithm_config(self) -> dict[str, Any]:
        """The hyperparameters as the algorithm's constructor takes them."""
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name not in self.run_fields
        }

    def check(self, owner: str) -> None:
        """Refuse values no run can use, naming ``owner`` (the recipe) and the parameter."""
        for name in ("total_steps", "batch_size", "dataset_size", "eval_every", "eval_episodes"):
            checks.positive_int(owner, name, getattr(self, name))
        checks.non_negative_int(owner, "source_steps", self.source_steps)
        checks.non_negative_int(owner, "dataset_seed", self.dataset_seed)
        checks.finite_float(owner, "lr", self.lr, low=0.0, low_open=True)
        check_hidden(owner, self.hidden)
        check_device(owner, self.device)
        if self.dataset not in DATASET_KINDS:
            raise ValueError(
                f"{owner}: dataset must be one of {', '.join(map(repr, DATASET_KINDS))}, "
                f"got {self.dataset!r}"
            )
        if self.data_dir is not None:
            checks.instance_of(owner, "data_dir", self.data_dir, str, "a folder path or None")


@dataclass(frozen=True)
class BCParams(OfflineParams):
    """``rk.BC``'s hyperparameters (rlkit/learners/offline/bc.py's defaults; ``batch_size``
    100 as d3rlpy's BC)."""

    batch_size: int = 100
    lr: float = 1e-3
    activation: str = "relu"
    log_std_init: float = 0.0
    beta: float = 0.5
    max_grad_norm: float | None = None


@dataclass(frozen=True)
class DiscreteCQLParams(OfflineParams):
    """``rk.DiscreteCQL``'s hyperparameters: ``alpha``, ``gamma``, ``double``, ``loss`` and
    the target network's ``target_update_interval`` (gradient steps), with a Q-network of
    ``hidden`` widths trained by Adam at ``lr``. The recipe's values are those Tianshou's
    offline CI uses on CartPole (lr 1e-3, 64-64, batch 64, target every 500 updates)."""

    batch_size: int = 64
    lr: float = 1e-3
    hidden: tuple[int, ...] = (64, 64)
    alpha: float = 1.0
    gamma: float = 0.99
    double: bool = True
    loss: str = "huber"
    target_update_interval: int = 500

    def check(self, owner: str) -> None:
        super().check(owner)
        checks.positive_int(owner, "target_update_interval", self.target_update_interval)


@dataclass(frozen=True)
class _ActorCriticParams(OfflineParams):
    tau: float = 0.005
    gamma: float = 0.99
    n_critics: int = 2


@dataclass(frozen=True)
class CQLParams(_ActorCriticParams):
    """``rk.CQL``'s hyperparameters, d3rlpy's defaults (rlkit/learners/offline/cql.py)."""

    actor_lr: float = 1e-4
    alpha_lr: float = 1e-4
    conservative_weight: float = 5.0
    n_action_samples: int = 10
    cql_alpha: float = 1.0
    target_action_gap: float | None = None
    soft_q_backup: bool = False
    critic_layer_norm: bool = False
    ent_coef: str | float = "auto"
    target_entropy: str | float = "auto"
    target_update_interval: int = 1


@dataclass(frozen=True)
class SACParams(_ActorCriticParams):
    """``rk.SAC``'s hyperparameters, trained offline (no conservative term)."""

    ent_coef: str | float = "auto"
    target_entropy: str | float = "auto"
    target_update_interval: int = 1


@dataclass(frozen=True)
class IQLParams(_ActorCriticParams):
    """``rk.IQL``'s hyperparameters, d3rlpy's defaults (rlkit/learners/offline/iql.py)."""

    actor_lr: float = 3e-4
    expectile: float = 0.7
    beta: float = 3.0
    max_weight: float = 100.0
    reward_scale: float = 1.0


@dataclass(frozen=True)
class TD3BCParams(_ActorCriticParams):
    """``rk.TD3BC``'s hyperparameters, the paper's defaults (rlkit/learners/offline/td3bc.py)."""

    alpha: float = 2.5
    normalize_observations: bool = True
    policy_delay: int = 2
    target_policy_noise: float = 0.2
    target_noise_clip: float = 0.5


# ---- datasets ----


def data_dir(params: OfflineParams) -> Path:
    """The datasets' folder: ``params.data_dir``, else ``$RLKIT_DATA_DIR``, else
    ``~/.cache/rlkit/datasets``."""
    if params.data_dir is not None:
        return Path(params.data_dir).expanduser()
    if os.environ.get(DATA_DIR_VARIABLE):
        return Path(os.environ[DATA_DIR_VARIABLE]).expanduser()
    return Path.home() / ".cache" / "rlkit" / "datasets"


def _source_steps(source: DatasetSource, params: OfflineParams) -> int:
    if params.dataset == "random":
        return 0
    return params.source_steps or source.source_steps[params.dataset]


def _size(params: OfflineParams, steps: int) -> int:
    return steps if params.dataset == "replay" else params.dataset_size


def dataset_path(env_id: str, params: OfflineParams) -> Path:
    """Where the dataset ``params`` describe for ``env_id`` is cached.

    Example:
        >>> dataset_path("Pendulum-v1", CQLParams(total_steps=1, data_dir="d")).name
        'Pendulum-v1-medium-SAC_Pendulum-3000-sampled-n10000-seed0.npz'
    """
    source = SOURCES[env_id]
    steps = _source_steps(source, params)
    size = _size(params, steps)
    maker = "RandomPolicy" if params.dataset == "random" else f"{source.recipe}-{steps}"
    if source.sampled and params.dataset in ("expert", "medium"):
        maker += "-sampled"
    name = f"{env_id}-{params.dataset}-{maker}-n{size}-seed{params.dataset_seed}"
    return data_dir(params) / f"{name}.npz"


def ensure_dataset(env_id: str, params: OfflineParams, *, owner: str) -> rk.Dataset:
    """The dataset ``params`` describe for ``env_id``: loaded from :func:`dataset_path`, or made
    (with a progress bar on standard error) and written there atomically first."""
    path = dataset_path(env_id, params)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _make_dataset(env_id, params, path, owner)
    return rk.Dataset.load(path)


#: mean return of a uniformly random policy (measured: 200 episodes; HalfCheetah: D4RL's random
#: reference score), the low end of "medium"
RANDOM_RETURN = {"CartPole-v1": 23.0, "Pendulum-v1": -1214.0, "HalfCheetah-v5": -280.2}

#: evaluations of the source policy during its training (each of ``SOURCE_EVAL_EPISODES``)
SOURCE_EVALUATIONS = 12
SOURCE_EVAL_EPISODES = 5


class _Snapshots(rk.AbstractHook):
    """Keeps the policy's parameters at each evaluation of ``evaluation`` (an
    ``rk.EvaluationHook`` called before this hook): ``snapshots`` lists ``(step, mean, state)``."""

    def __init__(self, evaluation: rk.EvaluationHook) -> None:
        self.evaluation = evaluation
        self.snapshots: list[tuple[int, float, Any]] = []

    def post_act(self, policy: Any, env: Any) -> None:
        results = self.evaluation.results
        if len(results) > len(self.snapshots):
            state = copy.deepcopy(_inner(policy).state_dict())
            self.snapshots.append((results[-1].step, results[-1].mean, state))


def choose_snapshot(
    snapshots: list[tuple[int, float, Any]], kind: str, random_return: float
) -> tuple[int, float, Any]:
    """The snapshot an ``expert`` dataset is made with (the best evaluated one; the later on a
    tie) or a ``medium`` one (the one whose return is the closest to half-way between
    ``random_return`` and the best).

    Example:
        >>> shots = [(1, -1400.0, "a"), (2, -800.0, "b"), (3, -200.0, "c")]
        >>> [choose_snapshot(shots, kind, -1200.0)[0] for kind in ("expert", "medium")]
        [3, 2]
    """
    best = max(snapshots, key=lambda shot: (shot[1], shot[0]))
    if kind == "expert":
        return best
    target = (random_return + best[1]) / 2
    return min(snapshots, key=lambda shot: (abs(shot[1] - target), -shot[0]))


def _make_dataset(env_id: str, params: OfflineParams, path: Path, owner: str) -> None:
    source = SOURCES[env_id]
    steps = _source_steps(source, params)
    train_seed, collect_seed, eval_seed = spawn_seeds(params.dataset_seed, 3)
    print(f"{owner}: making the dataset {path}", file=sys.stderr, flush=True)
    if params.dataset == "random":
        what = f"uniformly random actions (seed {params.dataset_seed}), rlkit.experiments.offline"
        policy: Any = rk.RandomPolicy(seed=int_seed(collect_seed))
        _record(policy, env_id, params.dataset_size, path, params, what, collect_seed)
        return
    experiment = rk.make_experiment(
        source.recipe, int_seed(train_seed), total_steps=steps, device=params.device
    )
    trained = f"{source.recipe} trained {steps} steps (seed {int_seed(train_seed)})"
    evaluation = rk.EvaluationHook(
        rk.GymEnv(env_id, seed=int_seed(eval_seed)),
        every_n_steps=max(1, steps // SOURCE_EVALUATIONS),
        n_episodes=SOURCE_EVAL_EPISODES,
        seed=int_seed(eval_seed),
    )
    snapshots = _Snapshots(evaluation)
    hook: Any = evaluation + snapshots
    hook = hook + rk.ProgressBar(experiment.stop_condition, desc=f"training {trained}")
    if params.dataset == "replay":
        what = f"{trained}: its whole training run (replay), rlkit.experiments.offline"
        hook = rk.DatasetRecorder(path, seed=params.dataset_seed, policy_description=what) + hook
    rk.run(experiment.policy, experiment.env, experiment.stop_condition, hook)
    if params.dataset == "replay":
        return
    step, mean, state = choose_snapshot(snapshots.snapshots, params.dataset, RANDOM_RETURN[env_id])
    inner = _inner(experiment.policy)
    inner.load_state_dict(state)
    behaviour, acting = _behaviour(inner, source, experiment.params, int_seed(collect_seed))
    what = (
        f"{trained}, its policy at step {step} (greedy evaluation {mean:.1f}; "
        f"{params.dataset}), {acting}, rlkit.experiments.offline"
    )
    with warnings.catch_warnings():  # rk.run's "nothing will be learned": as intended
        warnings.simplefilter("ignore", UserWarning)
        _record(behaviour, env_id, params.dataset_size, path, params, what, collect_seed)


def _behaviour(inner: Any, source: DatasetSource, recipe: dict, seed: int) -> tuple[Any, str]:
    """The policy an ``expert`` or ``medium`` dataset records, and how it acts: greedily, or
    (``source.sampled``) as it acted at the end of its training: a SAC policy sampling its
    actions, a DQN policy epsilon-greedy with its recipe's final epsilon."""
    if not source.sampled:
        return rk.greedy(inner, seed), "acting greedily"
    if isinstance(inner, rk.QBasedPolicy):
        epsilon = recipe["exploration_final_eps"]
        explorer = rk.EpsilonGreedyExplorer(epsilon, seed=seed)
        return rk.QBasedPolicy(inner.learner, explorer), f"epsilon-greedy (epsilon {epsilon})"
    inner.generator.manual_seed(seed)  # the policy outside its agent: it samples, learns nothing
    return inner, "sampling its actions"


def _inner(policy: Any) -> Any:
    return policy.policy if isinstance(policy, rk.Agent) else policy


def _record(
    policy: Any, env_id: str, size: int, path: Path, params: OfflineParams, what: str, seed: Any
) -> None:
    stop = rk.StopAfterNSteps(size)
    recorder = rk.DatasetRecorder(path, seed=params.dataset_seed, policy_description=what)
    bar = rk.ProgressBar(stop, desc=f"recording {size} transitions")
    rk.run(policy, rk.GymEnv(env_id, seed=int_seed(seed)), stop, recorder + bar)


# ---- experiments ----


def _evaluation(env_id: str, params: OfflineParams, seed: Any) -> rk.EvaluationHook:
    return rk.EvaluationHook(
        rk.GymEnv(env_id, seed=int_seed(seed)),
        every_n_steps=params.eval_every,
        n_episodes=params.eval_episodes,
        seed=int_seed(seed),
    )


def offline_experiment(
    algorithm: str, env_id: str, p: OfflineParams, *, seed: int, owner: str, description: str
) -> rk.Experiment:
    """``algorithm`` (``"BC"``, ``"DiscreteCQL"``, ``"CQL"``, ``"SAC"``, ``"IQL"`` or
    ``"TD3BC"``) trained on the dataset ``p`` describes for ``env_id`` for ``p.total_steps``
    gradient steps, evaluated in ``env_id`` every ``p.eval_every`` steps."""
    p.check(owner)
    data_seed, policy_seed, eval_seed = spawn_seeds(seed, 3)
    real = rk.GymEnv(env_id, seed=0)
    try:  # bad settings are refused before any data is made
        policy = _policy(algorithm, real, p, int_seed(policy_seed))
    except (TypeError, ValueError) as error:
        raise type(error)(f"{owner}: {error}") from None
    dataset = ensure_dataset(env_id, p, owner=owner)
    env = rk.OfflineEnv(dataset, batch_size=p.batch_size, seed=int_seed(data_seed))
    return rk.Experiment(
        policy=policy,
        env=env,
        stop_condition=rk.StopAfterNSteps(p.total_steps),
        hook=_evaluation(env_id, p, eval_seed),
        description=description,
    )


def _policy(algorithm: str, real: rk.GymEnv, p: OfflineParams, seed: int) -> Any:
    if algorithm == "DiscreteCQL":
        return _discrete_cql(real, p, seed)  # type: ignore[arg-type]
    cls = {"BC": rk.BC, "CQL": rk.CQL, "SAC": rk.SAC, "IQL": rk.IQL, "TD3BC": rk.TD3BC}[algorithm]
    config = p.algorithm_config()
    if algorithm != "BC":
        config["batch_size"] = p.batch_size
    if algorithm == "SAC":
        config["learning_starts"] = 0  # offline: act with the actor from the start
    return cls(
        state_space=real.state_space,
        action_space=real.action_space,
        seed=seed,
        device=p.device,
        **config,
    )


def _discrete_cql(real: rk.GymEnv, p: DiscreteCQLParams, seed: int) -> rk.QBasedPolicy:
    import torch

    from rlkit.approximators.neural import q_network

    approx = rk.NeuralNetworkApproximator(
        q_network(real.state_space, real.action_space, p.hidden, seed=seed),
        lambda params: torch.optim.Adam(params, lr=p.lr),
        device=p.device,
    )
    learner = rk.DiscreteCQL(
        approx,
        alpha=p.alpha,
        gamma=p.gamma,
        double=p.double,
        loss=p.loss,
        target=rk.TargetNetwork(approx, sync_every=p.target_update_interval),
    )
    return rk.QBasedPolicy(learner, rk.GreedyExplorer(seed=seed))


def _doc(fn: Any) -> str:
    return " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split())


def _recipe(algorithm: str, env_id: str, p: OfflineParams, seed: int, fn: Any) -> rk.Experiment:
    return offline_experiment(
        algorithm, env_id, p, seed=seed, owner=fn.__name__, description=_doc(fn)
    )


# ---- recipes ----

BC_CARTPOLE_EXPERT = BCParams(
    total_steps=5_000, dataset="expert", dataset_size=50_000, eval_every=1_000
)
BC_PENDULUM_MEDIUM = BCParams(total_steps=10_000)
DISCRETE_CQL_CARTPOLE_REPLAY = DiscreteCQLParams(
    total_steps=5_000, dataset="replay", eval_every=1_000
)
#: CQL_PendulumMedium's one change from d3rlpy's defaults: the critics' layer normalisation. With
#: d3rlpy's network CQL was above its data at 10,000 updates on 6 of 12 seeds over three Pendulum
#: medium datasets, its critics' TD loss climbing from 5,000 updates on; with it, on 13 of 13
#: (docs/how-to/offline-rl.md, "CQL and the critics' layer normalisation").
CQL_PENDULUM_MEDIUM = CQLParams(total_steps=10_000, critic_layer_norm=True)
SAC_PENDULUM_RANDOM = SACParams(total_steps=10_000, dataset="random")
CQL_PENDULUM_RANDOM = CQLParams(total_steps=10_000, dataset="random")
#: IQL's value backup (the critics regress on V(s'), V on the target critics that follow them at
#: rate tau) settles in about two time constants, 2 / (tau * (1 - gamma)) updates: 40,000 at
#: d3rlpy's tau 0.005 and gamma 0.99. Before it settles, the advantages Q - V grow with the
#: values and the actor's weights saturate (docs/how-to/offline-rl.md, "How long to train IQL").
IQL_PENDULUM_STEPS = 40_000
IQL_PENDULUM_MEDIUM = IQLParams(total_steps=IQL_PENDULUM_STEPS)
IQL_PENDULUM_MEDIUM_REPLAY = IQLParams(total_steps=IQL_PENDULUM_STEPS, dataset="replay")
TD3BC_PENDULUM_MEDIUM = TD3BCParams(total_steps=10_000)
IQL_HALF_CHEETAH_MEDIUM = IQLParams(
    total_steps=100_000, dataset_size=100_000, eval_every=10_000, eval_episodes=10
)


@rk.experiment
def BC_CartPoleExpert(seed: int = 0, p: BCParams = BC_CARTPOLE_EXPERT) -> rk.Experiment:
    """BC on CartPole-v1 from 50,000 transitions of a well-trained DQN_CartPole policy acting
    epsilon-greedily (5,000 gradient steps)."""
    return _recipe("BC", "CartPole-v1", p, seed, BC_CartPoleExpert)


@rk.experiment
def BC_PendulumMedium(seed: int = 0, p: BCParams = BC_PENDULUM_MEDIUM) -> rk.Experiment:
    """BC on Pendulum-v1 from a briefly trained SAC_Pendulum policy's 10,000 transitions
    (10,000 gradient steps): the baseline the offline algorithms are compared with."""
    return _recipe("BC", "Pendulum-v1", p, seed, BC_PendulumMedium)


@rk.experiment
def DiscreteCQL_CartPoleReplay(
    seed: int = 0, p: DiscreteCQLParams = DISCRETE_CQL_CARTPOLE_REPLAY
) -> rk.Experiment:
    """DiscreteCQL on CartPole-v1 from the whole 10,000-step training run of DQN_CartPole (its
    replay buffer, as Tianshou's offline CI data; 5,000 gradient steps)."""
    return _recipe("DiscreteCQL", "CartPole-v1", p, seed, DiscreteCQL_CartPoleReplay)


@rk.experiment
def CQL_PendulumMedium(seed: int = 0, p: CQLParams = CQL_PENDULUM_MEDIUM) -> rk.Experiment:
    """CQL on Pendulum-v1 from a briefly trained SAC_Pendulum policy's 10,000 transitions
    (10,000 gradient steps), the critics' hidden layers normalised (``critic_layer_norm``)."""
    return _recipe("CQL", "Pendulum-v1", p, seed, CQL_PendulumMedium)


@rk.experiment
def CQL_PendulumRandom(seed: int = 0, p: CQLParams = CQL_PENDULUM_RANDOM) -> rk.Experiment:
    """CQL on Pendulum-v1 from 10,000 transitions of uniformly random actions (10,000
    gradient steps)."""
    return _recipe("CQL", "Pendulum-v1", p, seed, CQL_PendulumRandom)


@rk.experiment
def SAC_PendulumRandom(seed: int = 0, p: SACParams = SAC_PENDULUM_RANDOM) -> rk.Experiment:
    """Plain SAC trained offline on Pendulum-v1 from 10,000 transitions of uniformly random
    actions (10,000 gradient steps): compare with CQL_PendulumRandom."""
    return _recipe("SAC", "Pendulum-v1", p, seed, SAC_PendulumRandom)


@rk.experiment
def IQL_PendulumMedium(seed: int = 0, p: IQLParams = IQL_PENDULUM_MEDIUM) -> rk.Experiment:
    """IQL on Pendulum-v1 from a briefly trained SAC_Pendulum policy's 10,000 transitions
    (40,000 gradient steps: its value backup's settling time, ``IQL_PENDULUM_STEPS``)."""
    return _recipe("IQL", "Pendulum-v1", p, seed, IQL_PendulumMedium)


@rk.experiment
def IQL_PendulumMediumReplay(
    seed: int = 0, p: IQLParams = IQL_PENDULUM_MEDIUM_REPLAY
) -> rk.Experiment:
    """IQL on Pendulum-v1 from the whole training run of a briefly trained SAC_Pendulum (its
    replay buffer; 40,000 gradient steps, as ``IQL_PendulumMedium``)."""
    return _recipe("IQL", "Pendulum-v1", p, seed, IQL_PendulumMediumReplay)


@rk.experiment
def TD3BC_PendulumMedium(seed: int = 0, p: TD3BCParams = TD3BC_PENDULUM_MEDIUM) -> rk.Experiment:
    """TD3+BC on Pendulum-v1 from a briefly trained SAC_Pendulum policy's 10,000 transitions
    (10,000 gradient steps)."""
    return _recipe("TD3BC", "Pendulum-v1", p, seed, TD3BC_PendulumMedium)


@rk.experiment
def IQL_HalfCheetahMedium(seed: int = 0, p: IQLParams = IQL_HALF_CHEETAH_MEDIUM) -> rk.Experiment:
    """IQL on MuJoCo HalfCheetah-v5 from 100,000 transitions of SAC_HalfCheetah trained 50,000
    steps (its snapshot half-way to its best, sampling its actions; 100,000 gradient steps; a
    benchmark, not a test: making the dataset trains SAC for 50,000 steps; needs pip install
    mujoco)."""
    require_mujoco("IQL_HalfCheetahMedium")
    return _recipe("IQL", "HalfCheetah-v5", p, seed, IQL_HalfCheetahMedium)
