"""``CartPoleBatch``: the ``CartPole-v1`` sub-envs of several in-process vector envs stepped as
one numpy batch, bit for bit as gymnasium steps them one by one (docs/how-to/speed.md, many
seeds in one process).

Stepping a ``gymnasium.vector.SyncVectorEnv`` of CartPoles costs about 20 microseconds of Python
per sub-env and step (the wrapper chain, the action check, the scalar arithmetic), far more than
the physics. ``CartPoleBatch`` computes the step of every sub-env at once with the same numpy
operations, in the same order, as ``gymnasium.envs.classic_control.CartPoleEnv.step`` (so the
same float64 results: numpy's element-wise functions give an element the same value in an
array as alone, which :meth:`CartPoleBatch.of` checks on this machine against
``CartPoleEnv.step`` before batching), then writes each sub-env's new state and step count
back into its own objects (``CartPoleEnv.state``, ``TimeLimit._elapsed_steps``), so the
sub-envs stay the truth: their checkpoints (``state_dict``), a later one-by-one step and their
resets see exactly what stepping them one by one would have left. A sub-env whose episode ends
is reset through its own wrapper chain (its own generator), as ``SyncVectorEnv``'s same-step
autoreset resets it.

Used only where that equality holds by construction: every vector env an in-process
(``"sync"``) ``rk.VectorGymEnv`` with same-step autoreset and no action masks, every sub-env
``gymnasium.make("CartPole-v1")``'s exact wrapper chain (``TimeLimit``, ``OrderEnforcing``,
``PassiveEnvChecker``) around an exact ``CartPoleEnv`` with its default physics (Euler
integration, no rendering, the default reward), and at each step only once gymnasium's
one-time checks have run (each sub-env's first steps go one by one) and every action is 0 or
1; otherwise the sub-envs are stepped one by one as before (:meth:`CartPoleBatch.step` returns
None). gymnasium's own numpy-vectorised ``CartPoleVectorEnv`` is not used: it draws every
sub-env's resets from one generator, so it cannot reproduce a single run's streams.

Example:
    >>> import rlkit as rk
    >>> envs = [rk.VectorGymEnv("CartPole-v1", 2, seed=s) for s in (0, 1)]
    >>> batch = CartPoleBatch.of(envs)
    >>> for env in envs:
    ...     env.reset()
    >>> batch.step([0, 1, 1, 0]) is None  # gymnasium's one-time checks: one by one
    True
    >>> for env in envs:
    ...     env.act([0, 1])
    ...     env.act([1, 0])
    >>> batch.step([0, 1, 1, 0]) is not None, envs[1].steps
    (True, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker, TimeLimit

from .vector import VectorGymEnv
from .vector_group import _Group, _Labelled

__all__ = ["CartPoleBatch", "cartpole_dynamics"]

_CHAIN = (TimeLimit, OrderEnforcing, PassiveEnvChecker, CartPoleEnv)
_PHYSICS = (
    "gravity", "masscart", "masspole", "total_mass", "length", "polemass_length", "force_mag",
    "tau", "theta_threshold_radians", "x_threshold",
)  # fmt: skip


class CartPoleBatch:
    """The sub-envs of the vector envs ``envs`` (in order) stepped as one numpy batch (module
    docstring). Build it with :meth:`of`, which returns None where the batch would not be exact.

    Example:
        >>> import rlkit as rk
        >>> CartPoleBatch.of([rk.VectorGymEnv("Acrobot-v1", 2, seed=0)]) is None
        True
    """

    def __init__(self, envs: Sequence[VectorGymEnv], chains: list[tuple]) -> None:
        self.envs = list(envs)
        self.sizes = [env.n_envs for env in self.envs]
        self.n_envs = sum(self.sizes)
        self.subs = [chain[0] for chain in chains]
        self.limits = [chain[1] for chain in chains]
        self.orders = [chain[2] for chain in chains]
        self.checkers = [chain[3] for chain in chains]
        self.carts = [chain[4] for chain in chains]
        self.links = list(zip(self.checkers, self.orders, self.carts, self.limits, strict=True))
        cart = self.carts[0]
        self.physics = {name: getattr(cart, name) for name in _PHYSICS}
        self.max_steps = np.array([limit._max_episode_steps for limit in self.limits])

    def __repr__(self) -> str:
        return f"CartPoleBatch({self.n_envs} sub-envs in {len(self.envs)} vector envs)"

    @classmethod
    def of(cls, envs: Sequence[Any]) -> CartPoleBatch | None:
        """A batch of the sub-envs of ``envs``, or None when any of them is not a default
        ``CartPole-v1`` of an in-process vector env (module docstring)."""
        chains = []
        physics = None
        for env in envs:
            group = getattr(env, "_group", None)
            if (
                type(env) is not VectorGymEnv
                or type(group) is not _Group
                or not group.in_process
                or not group.same_step
                or type(group.vec) is not gym.vector.SyncVectorEnv
            ):
                return None
            for sub in group.vec.envs:
                chain = _chain(sub)
                if chain is None:
                    return None
                values = tuple(getattr(chain[4], name) for name in _PHYSICS)
                if physics is not None and values != physics:
                    return None
                physics = values
                chains.append(chain)
        if not chains:
            return None
        batch = cls(envs, chains)
        return batch if _agrees(batch.physics) else None

    def ready(self) -> bool:
        """Whether the next step can be batched: gymnasium's one-time checks have run, every
        sub-env is in an episode, no vector env waits for a reset or is closed."""
        for env in self.envs:
            if env.needs_reset or env._closed:
                return False
        for checker, order, cart, limit in self.links:
            if not (
                checker.checked_step
                and getattr(checker, "checked_data_reuse", True)  # gymnasium >= 1.1
                and order._has_reset
                and cart.steps_beyond_terminated is None
                and cart.state is not None
                and limit._elapsed_steps is not None
            ):
                return False
        return True

    def step(self, actions: Any) -> tuple | None:
        """Step every sub-env with its action (one per sub-env, the vector envs' in order) and
        update each vector env as its ``act`` would; returns the concatenated ``(state, reward,
        terminated, truncated, final_state, done)``, or None (nothing stepped) when the step
        cannot be batched exactly: then step the vector envs one by one."""
        actions = np.asarray(actions)
        if (
            actions.shape != (self.n_envs,)
            or actions.dtype.kind not in "iu"
            or not ((actions == 0) | (actions == 1)).all()
            or not self.ready()
        ):
            return None
        final, reward, terminated, truncated = self._physics(actions)
        done = terminated | truncated
        state = final
        if done.any():
            state = final.copy()
            for i in np.flatnonzero(done):  # SyncVectorEnv's same-step autoreset
                state[i] = self.subs[i].reset()[0]
        self._hand_out(state, final, reward, terminated, truncated, done)
        return state, reward, terminated, truncated, final, done

    def _physics(self, actions: np.ndarray) -> tuple:
        """``CartPoleEnv.step`` (Euler, default reward) and ``TimeLimit.step`` for every
        sub-env, the same operations in the same order; the new states and step counts written
        back into the sub-envs."""
        carts, limits = self.carts, self.limits
        states = np.array([c.state for c in carts], np.float64)
        new, terminated = cartpole_dynamics(self.physics, states, actions)
        elapsed = [limit._elapsed_steps + 1 for limit in limits]
        for i, cart in enumerate(carts):
            cart.state = new[i]
            limits[i]._elapsed_steps = elapsed[i]
        for i in np.flatnonzero(terminated):
            carts[i].steps_beyond_terminated = 0  # the pole just fell (reset clears it)
        truncated = np.array(elapsed) >= self.max_steps
        reward = np.ones(self.n_envs)
        return new.astype(np.float32), reward, terminated, truncated

    def _hand_out(self, state, final, reward, terminated, truncated, done) -> None:
        """Each vector env's attributes as its ``act`` sets them (its slice of the batch)."""
        start = 0
        for env, size in zip(self.envs, self.sizes, strict=True):
            part = slice(start, start + size)
            env._take((state[part], reward[part], terminated[part], truncated[part],
                       final[part], None, None, done[part]))  # fmt: skip
            start += size


def cartpole_dynamics(
    p: dict[str, float], states: np.ndarray, actions: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``CartPoleEnv.step``'s Euler step of the float64 ``states`` (``(n, 4)``) under
    ``actions`` (0 or 1) with the physics ``p``, the same numpy operations in the same order:
    the new states and whether each episode terminated.

    Example:
        >>> from gymnasium.envs.classic_control.cartpole import CartPoleEnv
        >>> physics = {name: getattr(CartPoleEnv(), name) for name in _PHYSICS}
        >>> new, done = cartpole_dynamics(physics, np.zeros((2, 4)), np.array([0, 1]))
        >>> new[:, 1].round(4).tolist(), done.tolist()  # pushed left, pushed right
        ([-0.1951, 0.1951], [False, False])
    """
    x, x_dot, theta, theta_dot = states.T
    force = np.where(actions == 1, p["force_mag"], -p["force_mag"])
    costheta = np.cos(theta)
    sintheta = np.sin(theta)
    temp = (force + p["polemass_length"] * np.square(theta_dot) * sintheta) / p["total_mass"]
    thetaacc = (p["gravity"] * sintheta - costheta * temp) / (
        p["length"] * (4.0 / 3.0 - p["masspole"] * np.square(costheta) / p["total_mass"])
    )
    xacc = temp - p["polemass_length"] * thetaacc * costheta / p["total_mass"]
    x = x + p["tau"] * x_dot
    x_dot = x_dot + p["tau"] * xacc
    theta = theta + p["tau"] * theta_dot
    theta_dot = theta_dot + p["tau"] * thetaacc
    terminated = (
        (x < -p["x_threshold"])
        | (x > p["x_threshold"])
        | (theta < -p["theta_threshold_radians"])
        | (theta > p["theta_threshold_radians"])
    )
    return np.stack((x, x_dot, theta, theta_dot), axis=1), terminated


def _agrees(physics: dict[str, float]) -> bool:
    """Whether :func:`cartpole_dynamics` gives, on this machine and with this gymnasium and
    numpy, bit for bit what ``CartPoleEnv.step`` gives one state at a time: checked on 256
    states (some past the thresholds) under both actions."""
    rng = np.random.default_rng(0)
    states = rng.uniform(-1.0, 1.0, (256, 4)) * np.array([2.6, 2.0, 0.25, 2.0])
    actions = np.arange(256) % 2
    new, terminated = cartpole_dynamics(physics, states, actions)
    cart = CartPoleEnv()
    for name, value in physics.items():
        setattr(cart, name, value)
    for i in range(len(states)):
        cart.state, cart.steps_beyond_terminated = states[i].copy(), None
        obs, _, done, _, _ = cart.step(int(actions[i]))
        if not (
            np.array_equal(cart.state, new[i])
            and np.array_equal(obs, new[i].astype(np.float32))
            and done == bool(terminated[i])
        ):
            return False
    return True


def _chain(sub: Any) -> tuple | None:
    """``(sub, time limit, order enforcing, checker, cart)`` of a sub-env made by
    ``gymnasium.make("CartPole-v1")`` with default physics and no action masks; None for any
    other sub-env."""
    if type(sub) is not _Labelled or sub.rlkit_masks is not None:
        return None
    layers = [sub.env]
    while isinstance(layers[-1], gym.Wrapper):
        layers.append(layers[-1].env)
    if tuple(type(layer) for layer in layers) != _CHAIN:
        return None
    cart = layers[-1]
    if (
        cart.kinematics_integrator != "euler"
        or cart.render_mode is not None
        or cart._sutton_barto_reward
        or cart.action_space != gym.spaces.Discrete(2)
        or type(cart).step is not CartPoleEnv.step
        or type(cart).reset is not CartPoleEnv.reset
    ):
        return None
    return (sub, *layers)
