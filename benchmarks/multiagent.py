"""Multi-agent benchmarks (issue 25): the recipes of experiments/multiagent.py on several seeds,
and the speed of the multi-agent loop.

    OMP_NUM_THREADS=1 python benchmarks/multiagent.py --part tictactoe --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/multiagent.py --part dqn --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/multiagent.py --part connect4 --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/multiagent.py --part spread --seeds 3
    OMP_NUM_THREADS=1 python benchmarks/multiagent.py --part speed

Parts (one section each below; the game solvers' part, ``--part cfr`` (CFR against OpenSpiel,
CFR+ on Leduc), lives in benchmarks/multiagent_cfr.py, which takes its own options):

* ``tictactoe``: ``SelfPlayQ_TicTacToe`` per seed: the greedy table's wins / draws / losses in
  1,000 games against a random player and 50 against an exhaustive minimax player (uniform
  among optimal moves), from each seat;
* ``dqn``: ``DQN_TicTacToe`` per seed: the greedy learner's mean reward in 500 games as the
  second player against a random player of the legal moves (Tianshou's test: >= 0.6; 0.7 is
  about optimal);
* ``connect4``: ``SelfPlayDQN_ConnectFour`` per seed: the greedy learner's wins / draws / losses
  in 200 games from each seat against a uniformly random player of the legal moves (the claim:
  >= 95% wins from each seat);
* ``spread``: ``SharedPPO_SimpleSpread`` per seed (``--budget``: its ``total_steps``, every
  agent's moves): the mean episode return (mean over the three agents) of 50 evaluation
  episodes of the trained shared policy (greedy and stochastic, each agent acting on its own
  observation in ``rk.PettingZooParallelEnv``) and of the random policy on the same seeds, and
  the margin;
* ``speed``: simple_spread agent moves per CPU second: a plain PettingZoo loop with random
  actions, ``rk.run`` with a shared ``rk.RandomPolicy``, and ``rk.run`` of the
  ``SharedPPO_SimpleSpread`` recipe (learning included).

benchmarks/results_multiagent.txt holds a measured output.
"""

from __future__ import annotations

import argparse
import runpy
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import rlkit as rk

CFR_PART = Path(__file__).with_name("multiagent_cfr.py")


# ---- marl (issue 25 part 1): PettingZoo loops, self-play, shared PPO ----


def tictactoe(seed: int, episodes: int | None) -> str:
    """The self-play table's results against random and minimax players, from each seat."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from multiagent_games import TicTacToeMinimax, tictactoe_games  # the tests' minimax

    start = time.perf_counter()
    overrides = {} if episodes is None else {"episodes": episodes}
    experiment = rk.make_experiment("SelfPlayQ_TicTacToe", seed, **overrides)
    rk.run(experiment)
    seconds = time.perf_counter() - start
    greedy = rk.greedy(experiment.policy)
    parts = []
    for seat in ("player_1", "player_2"):
        random = tictactoe_games(greedy.policy_of(seat), rk.RandomPolicy(seed=11), seat, 1000, 123)
        perfect = tictactoe_games(greedy.policy_of(seat), TicTacToeMinimax(seed=5), seat, 50, 7)
        parts.append(f"{seat}: vs random {_wdl(random)}, vs minimax {_wdl(perfect)}")
    return f"SelfPlayQ_TicTacToe seed {seed} ({seconds:.0f} s): " + "; ".join(parts)


def _wdl(results: np.ndarray) -> str:
    return f"{(results > 0).sum()}/{(results == 0).sum()}/{(results < 0).sum()} (w/d/l)"


def dqn(seed: int, steps: int | None) -> str:
    """The greedy DQN learner's mean reward as the second player against a random player."""
    from rlkit.experiments.multiagent import tictactoe_env

    start = time.perf_counter()
    overrides = {} if steps is None else {"total_steps": steps}
    experiment = rk.make_experiment("DQN_TicTacToe", seed, **overrides)
    rk.run(experiment)
    seconds = time.perf_counter() - start
    learner = rk.greedy(experiment.policy.policy_of("player_2"))
    policy = rk.MultiAgentPolicy({"player_2": learner, "player_1": rk.RandomPolicy(seed=7)})
    hook = rk.run(policy, tictactoe_env(99, tabular=False), rk.StopAfterNEpisodes(500),
                  rk.TotalRewardPerEpisode())  # fmt: skip
    rewards = np.array([r["player_2"] for r in hook.rewards])
    return (f"DQN_TicTacToe seed {seed} ({seconds:.0f} s): mean reward {rewards.mean():.3f} "
            f"as player_2 vs random, {_wdl(rewards)}")  # fmt: skip


def connect4_games(learner: rk.AbstractPolicy, seat: str, games: int, seed: int) -> np.ndarray:
    """``learner``'s rewards (+1 win, 0 draw, -1 loss) in ``games`` connect four games from
    ``seat`` against a uniformly random player of the legal moves."""
    from rlkit.experiments.multiagent import connect_four_env

    other = "player_1" if seat == "player_0" else "player_0"
    policy = rk.MultiAgentPolicy({seat: learner, other: rk.RandomPolicy(seed=seed)})
    hook = rk.run(policy, connect_four_env(1000 + seed), rk.StopAfterNEpisodes(games),
                  rk.TotalRewardPerEpisode())  # fmt: skip
    return np.array([r[seat] for r in hook.rewards])


def connect4(seed: int, steps: int | None) -> str:
    """The greedy self-play DQN learner against a random player, 200 games from each seat."""
    start = time.perf_counter()
    overrides = {} if steps is None else {"total_steps": steps}
    experiment = rk.make_experiment("SelfPlayDQN_ConnectFour", seed, **overrides)
    rk.run(experiment)
    seconds = time.perf_counter() - start
    learner = rk.greedy(experiment.policy.learner)
    parts = []
    for seat, eval_seed in (("player_0", 7), ("player_1", 8)):
        results = connect4_games(learner, seat, 200, eval_seed)
        parts.append(f"{seat}: {(results > 0).mean():.1%} wins, {_wdl(results)}")
    return f"SelfPlayDQN_ConnectFour seed {seed} ({seconds:.0f} s): vs random " + "; ".join(parts)


def _spread_return(policy: rk.AbstractPolicy, seed: int, episodes: int = 50) -> float:
    from mpe2 import simple_spread_v3

    env = rk.PettingZooParallelEnv(simple_spread_v3.parallel_env(max_cycles=25),
                                   seed=1000 + seed, agent_id=True)  # fmt: skip
    hook = rk.run(policy, env, rk.StopAfterNEpisodes(episodes), rk.TotalRewardPerEpisode())
    return float(np.mean([np.mean(list(r.values())) for r in hook.rewards]))


def spread(seed: int, steps: int | None) -> tuple[str, float]:
    """Shared PPO's evaluation return on simple_spread against the random policy's."""
    start = time.perf_counter()
    overrides = {} if steps is None else {"total_steps": steps}
    experiment = rk.make_experiment("SharedPPO_SimpleSpread", seed, **overrides)
    rk.run(experiment)
    seconds = time.perf_counter() - start
    agents = experiment.env.agents  # the vector env's rows are the agents; evaluated by agent
    trained = experiment.policy.policy  # the shared PPO policy, without its rollout
    greedy = _spread_return(rk.MultiAgentPolicy.shared(rk.greedy(trained), agents), seed)
    with warnings.catch_warnings():  # the trained policy without its Agent: it acts only
        warnings.simplefilter("ignore")
        stochastic = _spread_return(rk.MultiAgentPolicy.shared(trained, agents), seed)
    random = _spread_return(rk.MultiAgentPolicy.shared(rk.RandomPolicy(seed=seed), agents), seed)
    best = max(greedy, stochastic)
    return (f"SharedPPO_SimpleSpread seed {seed} ({seconds:.0f} s): greedy {greedy:.1f}, "
            f"stochastic {stochastic:.1f}, random {random:.1f}, margin "
            f"{best - random:+.1f}"), best - random  # fmt: skip


def speed(moves: int) -> list[str]:
    """simple_spread agent moves per second: plain loop, rk.run random, rk.run shared PPO."""
    from mpe2 import simple_spread_v3

    env = simple_spread_v3.parallel_env(max_cycles=25)
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    done, start = 0, time.process_time()
    while done < moves:  # the plain loop: PettingZoo alone
        if not env.agents:
            env.reset()
        actions = {agent: int(rng.integers(5)) for agent in env.agents}
        env.step(actions)
        done += len(actions)
    plain = moves / (time.process_time() - start)
    wrapped = rk.PettingZooParallelEnv(simple_spread_v3.parallel_env(max_cycles=25), seed=0,
                                       agent_id=True)  # fmt: skip
    random = rk.MultiAgentPolicy.shared(rk.RandomPolicy(seed=0), wrapped.agents)
    start = time.process_time()
    rk.run(random, wrapped, rk.StopAfterNSteps(moves // 3))  # a step: every agent's move
    loop = moves / (time.process_time() - start)
    experiment = rk.make_experiment("SharedPPO_SimpleSpread", 0, total_steps=moves)
    start = time.process_time()
    rk.run(experiment)
    ppo = moves / (time.process_time() - start)
    return [
        f"simple_spread agent moves per CPU second ({moves} moves, one thread; process time,"
        f" so a busy machine does not distort the ratios):",
        f"  plain PettingZoo loop, random actions: {plain:9.0f}",
        f"  rk.run, shared rk.RandomPolicy:        {loop:9.0f}  ({loop / plain:.2f} of plain)",
        f"  rk.run, SharedPPO_SimpleSpread:        {ppo:9.0f}  ({ppo / plain:.2f} of plain)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--part", choices=("tictactoe", "dqn", "connect4", "spread", "speed", "cfr"), required=True
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=None,
                        help="episodes (tictactoe) or total steps (dqn, connect4, spread); "
                        "the recipe's default when left out")  # fmt: skip
    args, rest = parser.parse_known_args()
    if args.part == "cfr":  # the game solvers' part, with its own options
        sys.argv = [str(CFR_PART), "--part", "cfr", *rest]
        runpy.run_path(str(CFR_PART), run_name="__main__")
        return
    if rest:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    import torch

    torch.set_num_threads(1)
    if args.part == "speed":
        print("\n".join(speed(args.budget or 30_000)), flush=True)
        return
    margins = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        if args.part == "tictactoe":
            print(tictactoe(seed, args.budget), flush=True)
        elif args.part == "dqn":
            print(dqn(seed, args.budget), flush=True)
        elif args.part == "connect4":
            print(connect4(seed, args.budget), flush=True)
        else:
            line, margin = spread(seed, args.budget)
            margins.append(margin)
            print(line, flush=True)
    if margins:
        print(f"SharedPPO_SimpleSpread margin over random: mean {np.mean(margins):+.1f}, "
              f"min {np.min(margins):+.1f} over {len(margins)} seeds")  # fmt: skip


if __name__ == "__main__":
    main()
