"""The one Gymnasium env of every game: it samples the game model's transitions."""

from __future__ import annotations

import operator
from bisect import bisect_right
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dice_envs.envs.rendering import HumanWindow, render_scene
from dice_envs.games.base import State, Transition, build_model, cumulative

_as_index = operator.index

# Transition tables are cached per (state, action); a long game clears the cache at this size.
_CACHE_LIMIT = 1_000_000
# What the agent is shown of a state (observation and mask) is cached per state; a game with
# more states than this clears the cache when full (about 300 bytes an entry).
_VIEW_CACHE_LIMIT = 200_000
# Uniforms are drawn from `np_random` this many at a time: one scalar draw costs about five
# times a list pop. The values and their order are those of scalar draws.
_UNIFORM_BLOCK = 256


class UniformBlockEnv(gym.Env):
    """A `gym.Env` that takes its uniforms from `np_random` in blocks of 256 (`_uniform`): the
    same values in the same order as one draw at a time, and reading `np_random` gives back
    the part of the block not used yet. Subclasses call `_drop_block()` when `reset` is
    seeded."""

    _uniforms: list[float]
    _block_start: dict

    @property
    def np_random(self) -> np.random.Generator:
        """The env's generator (seeded on first use, as in `gym.Env`), at the state just after
        the uniforms the env has used: the part of a block drawn ahead is given back first, so
        saving and restoring `np_random.bit_generator.state` resumes the env exactly."""
        if self._uniforms:
            generator = self._np_random
            generator.bit_generator.state = self._block_start
            generator.random(_UNIFORM_BLOCK - len(self._uniforms))
            self._uniforms.clear()
        return gym.Env.np_random.fget(self)

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        gym.Env.np_random.fset(self, value)
        self._uniforms.clear()

    def _uniform(self) -> float:
        """The next uniform on [0, 1) of `np_random`, taken from a block drawn at once."""
        uniforms = self._uniforms
        if not uniforms:
            # `_np_random` is set once reset() ran (draws come after it); the property would check.
            generator = self._np_random
            self._block_start = generator.bit_generator.state
            uniforms.extend(generator.random(_UNIFORM_BLOCK)[::-1].tolist())
        return uniforms.pop()

    def _drop_block(self) -> None:
        self._uniforms.clear()


class GameEnv(UniformBlockEnv):
    """What the envs of every game share: the render modes and their check, the checks of
    `reset`'s options and of when `step` may be called, `render` (the subclass's `_text` for
    "ansi", `_picture` for "rgb_array") and `action_masks` (the subclass's `_mask` of the
    current state). Subclasses keep `state` (None before the first reset) and `done`."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 4}
    state: Any
    done: bool
    _window: HumanWindow | None = None

    def _check_render_mode(self, render_mode: str | None) -> None:
        """Refuse an unknown render mode; for "human", open pygame (or refuse at `gym.make`
        with the extra to install)."""
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        if render_mode == "human":
            self._window = HumanWindow()

    def _begin_reset(self, seed: int | None, options: dict[str, Any] | None) -> Any:
        """Check `reset`'s options and seed the env; the start state asked for
        (``options["state"]``), or None for a start drawn by the rules."""
        if options is not None and (not isinstance(options, dict) or set(options) - {"state"}):
            raise ValueError(f"reset options may only hold the key 'state', got {options!r}")
        super().reset(seed=seed)
        if seed is not None:
            self._drop_block()
        if self._np_random is None:
            self.np_random  # noqa: B018  (the property seeds `_np_random` if no seed came yet)
        return options.get("state") if options else None

    def _check_steppable(self) -> None:
        if self.done:
            if self.state is None:
                raise RuntimeError("step() called before reset()")
            raise RuntimeError("step() called after the episode ended; call reset() first")

    def _mask(self, state: Any) -> np.ndarray:
        raise NotImplementedError

    def _text(self) -> str:
        raise NotImplementedError

    def _picture(self) -> np.ndarray:
        raise NotImplementedError

    def action_masks(self) -> np.ndarray:
        """The legal actions of the current state as booleans (all False once the game ended)."""
        if self.state is None or self.done:
            return np.zeros(self.action_space.n, dtype=bool)
        return self._mask(self.state).astype(bool)

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode= to make()")
            return None
        if self.state is None:
            raise RuntimeError("render() called before reset()")
        if self.render_mode == "ansi":
            return self._text()
        if self.render_mode == "human":
            self._window.show(self._picture(), self.metadata["render_fps"])
            return None
        return self._picture()

    def close(self) -> None:
        if self._window is not None:
            self._window.close()
        super().close()


def game_model(model: Any, kwargs: dict[str, Any]) -> Any:
    """The game model an env is given: built from the game's keyword arguments `kwargs` when
    `model` is a callable or the import path "module:name" of one, else `model` itself (a
    ready-made model takes no arguments)."""
    if isinstance(model, str) or callable(model):
        return build_model(model, kwargs)
    if kwargs:
        raise ValueError(f"arguments {sorted(kwargs)} given with a ready-made model")
    return model


class DiceEnv(GameEnv):
    """A thin `gym.Env` over a `GameModel`, the same class for every game.

    `model` is the game model, or a callable (a model class, or the import path
    "module:name" of one) that builds it from the remaining keyword arguments; registration
    passes the latter, so `gym.make(env_id, **kwargs)` builds the model from the user's
    arguments. The env shows the game's docstring as its own (`env.unwrapped.__doc__`).

    `step` looks up the model's outcomes of (state, action), cached with their cumulative
    probabilities, and draws one with `self.np_random`; a model with `sample_step` samples
    its own way (die by die, say), and a test holds it to `transitions`. Uniforms are taken
    from `np_random` in blocks of 256: the same values in the same order as one draw at a
    time, and reading `env.np_random` gives back the part of the block not used yet, so its
    state is always that of the draws used (a generator object kept from an earlier read may
    be ahead of them). Seeding through `reset` or assigning `np_random` discards the block.

    Rules of play, the same for every game: an action outside the action space raises
    ValueError; `step` before `reset` or after the episode ended raises RuntimeError; in both
    cases nothing changes. `reset(options={"state": s})` starts from any valid model state `s`
    (exploring starts, tests). `info["action_mask"]` (int8, 1 = legal) comes with every
    observation (all zeros once the episode ended), and `action_masks()` returns it as booleans
    for sb3-contrib's MaskablePPO.
    """

    def __init__(self, model: Any, render_mode: str | None = None, **kwargs: Any) -> None:
        self._check_render_mode(render_mode)
        model = game_model(model, kwargs)
        self.model = model
        self.__doc__ = model.__doc__ or DiceEnv.__doc__
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(model.num_actions)
        self._num_actions = model.num_actions
        nvec = model.observation_nvec
        self._scalar_obs = len(nvec) == 1
        self.observation_space = (
            spaces.Discrete(nvec[0]) if self._scalar_obs else spaces.MultiDiscrete(nvec)
        )
        self._start = self._cumulative(model.initial_states())
        self._sample_step = getattr(model, "sample_step", None)
        self._sample_start = getattr(model, "sample_start", None)
        self._picture_size = getattr(model, "picture_size", (1, 3))
        self._outcomes: dict[tuple[State, int], tuple[list[float], list[Transition]]] = {}
        self._masks: dict[tuple[int, ...], np.ndarray] = {}
        self._views: dict[State, tuple[Any, np.ndarray]] = {}
        self._no_actions = np.zeros(model.num_actions, dtype=np.int8)
        self.state: State | None = None
        self.done = True
        self.episode_return = 0.0
        self.last_action: int | None = None
        self.previous_state: State | None = None
        self.last_info: dict = {}
        self._uniforms: list[float] = []
        self._block_start: dict = {}

    @staticmethod
    def _cumulative(pairs):
        return cumulative([pair[0] for pair in pairs]), list(pairs)

    def _draw(self, table):
        bounds, items = table
        return items[bisect_right(bounds, self._uniform())]

    def _view(self, state: State, terminal: bool = False) -> tuple[Any, np.ndarray | None]:
        """The observation and the action mask of `state` (None until a step needs it: a
        state met only at the end has no legal actions to ask for), looked up once per state.
        The env hands out copies, so the cached arrays never change."""
        view = self._views.get(state)
        if view is None or (view[1] is None and not terminal):
            if len(self._views) >= _VIEW_CACHE_LIMIT:
                self._views.clear()
            obs = self.model.observation(state) if view is None else view[0]
            if view is None and not self._scalar_obs:
                obs = np.array(obs, dtype=np.int64)
            view = self._views[state] = (obs, None if terminal else self._legal_mask(state))
        return view

    def _observe(self, state: State):
        obs = self._view(state, terminal=True)[0]
        return obs if self._scalar_obs else obs.copy()

    def _legal_mask(self, state: State) -> np.ndarray:
        legal = self.model.legal_actions(state)
        mask = self._masks.get(legal)
        if mask is None:
            mask = np.zeros(self.model.num_actions, dtype=np.int8)
            mask[list(legal)] = 1
            self._masks[legal] = mask
        return mask

    def _mask(self, state: State) -> np.ndarray:
        return self._view(state)[1].copy()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        requested = self._begin_reset(seed, options)
        info: dict = {}
        if requested is not None:
            state = self.model.validate_state(requested)
            info = getattr(self.model, "no_events", dict)()
        elif self._sample_start is not None:
            state, info = self._sample_start(self._uniform)
        else:
            state = self._draw(self._start)[1]
        self.state, self.done = state, False
        self.episode_return, self.last_action, self.previous_state = 0.0, None, None
        self.last_info = info
        obs, mask = self._view(state)
        if self.render_mode == "human":  # as Gymnasium's envs do: a frame per reset and step
            self.render()
        return (obs if self._scalar_obs else obs.copy()), {**info, "action_mask": mask.copy()}

    def step(self, action):
        self._check_steppable()
        try:
            index = _as_index(action)
        except TypeError:
            index = -1
        if not 0 <= index < self._num_actions:
            action_index(action, self._num_actions)  # raises the ValueError
        action = index
        if self._sample_step is not None:
            state, reward, terminal, info = self._sample_step(self.state, action, self._uniform)
        else:
            key = (self.state, action)
            table = self._outcomes.get(key)
            if table is None:
                if len(self._outcomes) >= _CACHE_LIMIT:
                    self._outcomes.clear()
                table = self._outcomes[key] = self._cumulative(self.model.transitions(*key))
            _prob, state, reward, terminal = self._draw(table)
            info = {}
        self.previous_state, self.last_action, self.last_info = self.state, action, info
        self.state, self.done = state, terminal
        self.episode_return += reward
        obs, mask = self._views.get(state) or self._view(state, terminal)
        if terminal:
            info["action_mask"] = self._no_actions.copy()
        else:
            if mask is None:  # the state was met at an episode's end before
                mask = self._view(state)[1]
            info["action_mask"] = mask.copy()
        if self.render_mode == "human":
            self.render()
        return (obs if self._scalar_obs else obs.copy()), reward, terminal, False, info

    def _text(self) -> str:
        parts = [self.model.render_text(self.state)]
        if self.last_action is not None:
            parts.append(f"last action {self.model.action_names[self.last_action]}")
        for key, values in self.last_info.items():
            if isinstance(values, list) and values:
                parts.append(f"{key.replace('_', ' ')} " + " ".join(map(str, values)))
        parts.append(f"return {self.episode_return:g}" + (" (game over)" if self.done else ""))
        return " | ".join(parts)

    def _picture(self) -> np.ndarray:
        """The model's `picture` (dice and lines of text), drawn in a frame of one size."""
        max_dice, max_lines = self._picture_size
        context = {
            **self.last_info,
            "previous_state": self.previous_state,
            "last_action": self.last_action,
            "done": self.done,
            "episode_return": self.episode_return,
        }
        picture = getattr(self.model, "picture", None)
        if picture is None:
            dice, lines = [], [self.model.render_text(self.state)]
        else:
            dice, lines = picture(self.state, context)
        sides = getattr(self.model, "sides", 6)
        return render_scene(dice, lines, max_dice=max_dice, max_lines=max_lines, pips=sides <= 6)


def action_index(action: Any, num_actions: int, also: str = "") -> int:
    """`action` as an int in 0..num_actions - 1, else a ValueError saying what is allowed
    (`also`: what else the caller takes). Ints, numpy integers and 0-d integer arrays; faster
    than Discrete.contains."""
    try:
        index = operator.index(action)
    except TypeError:
        index = -1
    if not 0 <= index < num_actions:
        raise ValueError(f"action must be an integer in 0..{num_actions - 1}{also}, got {action!r}")
    return index
