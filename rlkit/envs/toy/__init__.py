"""Bundled toy environments, registered with gymnasium under ``rlkit/...``.

Registration only records entry points; the environment modules load on ``gymnasium.make``.
"""

from gymnasium.envs.registration import register, registry

_ENVS = {
    "rlkit/RandomWalk1D-v0": "rlkit.envs.toy.random_walk:RandomWalk1DEnv",
    "rlkit/MultiArmBandits-v0": "rlkit.envs.toy.bandits:MultiArmBanditsEnv",
    "rlkit/WindyGridWorld-v0": "rlkit.envs.toy.windy_grid_world:WindyGridWorldEnv",
    "rlkit/MaximizationBias-v0": "rlkit.envs.toy.maximization_bias:MaximizationBiasEnv",
    "rlkit/GridWorld-v0": "rlkit.envs.toy.grid_world:GridWorldEnv",
    "rlkit/GamblersProblem-v0": "rlkit.envs.toy.gamblers_problem:GamblersProblemEnv",
    "rlkit/RandomWalk1000-v0": "rlkit.envs.toy.random_walk_1000:RandomWalk1000Env",
    "rlkit/ShortCorridor-v0": "rlkit.envs.toy.short_corridor:ShortCorridorEnv",
    # goal-conditioned (hindsight experience replay, rk.HER); truncated after n_bits steps
    "rlkit/BitFlipping-v0": "rlkit.envs.toy.bit_flipping:BitFlippingEnv",
}
# registered with a time limit (an episode that wastes its steps ends)
if "rlkit/InvalidActionGrid-v0" not in registry:
    register(
        id="rlkit/InvalidActionGrid-v0",
        entry_point="rlkit.envs.toy.invalid_action_grid:InvalidActionGridEnv",
        max_episode_steps=100,
    )

for _id, _entry_point in _ENVS.items():
    if _id not in registry:
        register(id=_id, entry_point=_entry_point)

# one environment class, three layouts (Sutton & Barto chapter 8)
_MAZES = {
    "rlkit/DynaMaze-v0": "dyna",
    "rlkit/BlockingMaze-v0": "blocking",
    "rlkit/ShortcutMaze-v0": "shortcut",
}
for _id, _layout in _MAZES.items():
    if _id not in registry:
        register(id=_id, entry_point="rlkit.envs.toy.maze:MazeEnv", kwargs={"layout": _layout})

# partially observed classic control (rl-baselines3-zoo's NoVel tasks, for recurrent policies)
_NO_VELOCITY = {
    "rlkit/CartPoleNoVel-v1": ("cartpole_no_velocity", 500, 475.0),
    "rlkit/PendulumNoVel-v1": ("pendulum_no_velocity", 200, None),
}
for _id, (_fn, _steps, _threshold) in _NO_VELOCITY.items():
    if _id not in registry:
        register(
            id=_id,
            entry_point=f"rlkit.envs.toy.no_velocity:{_fn}",
            max_episode_steps=_steps,
            reward_threshold=_threshold,
        )
