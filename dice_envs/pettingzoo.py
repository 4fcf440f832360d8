"""PettingZoo views of the two-player games: one AEC env class for every two-player model,
one parallel env class for every simultaneous-move model.

    from dice_envs.pettingzoo import env
    game = env("pig", goal=30)
    game.reset(seed=0)
    for agent in game.agent_iter():
        observation, reward, termination, truncation, info = game.last()
        action = None if termination or truncation else my_policy(observation)
        game.step(action)

As in PettingZoo's classic games, `raw_env(name, ...)` is the bare AEC env and `env(name, ...)`
is it wrapped in PettingZoo's `AssertOutOfBoundsWrapper` and `OrderEnforcingWrapper` (clear
errors for an action outside the space and for `step`, `observe` or `render` before `reset`).
`parallel_env(name, ...)` is the parallel env of a simultaneous-move game.

The envs sample the same two-player model that `dice_envs/Pig-v0` folds against a fixed
opponent; no rule is written again. `names()` and `parallel_names()` list the games; each takes
its model's keyword arguments (`goal`, `sides`, `die_probs`, `max_dice`, ...), checked as
`gym.make` checks them. PettingZoo is an optional dependency: `pip install
dice-envs[pettingzoo]`.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import re
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding

from dice_envs.envs.base import action_index
from dice_envs.envs.rendering import render_scene
from dice_envs.games.base import build_model, cumulative, draw, sample_transition
from dice_envs.registration import GAMES

try:
    import pettingzoo as pettingzoo_package
    from pettingzoo import AECEnv, ParallelEnv
    from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper
except ImportError as error:  # pragma: no cover - the message is the point
    raise ImportError(
        "dice_envs.pettingzoo needs PettingZoo: pip install 'dice-envs[pettingzoo]'"
    ) from error

AGENTS = ("player_0", "player_1")
FIRST_PLAYERS = ("player_0", "player_1", None)


def _simultaneous_games() -> dict[str, tuple[type, str]]:
    """name -> (simultaneous-move model class, env id of its fold)."""
    return _games(simultaneous=True)


def _two_player_models() -> dict[str, type]:
    """name -> two-player model class, for every registered id that folds one ("pig" for
    `dice_envs/Pig-v0`); a game registered later is found as well."""
    return {name: model for name, (model, _) in _two_player_games().items()}


def _two_player_games() -> dict[str, tuple[type, str]]:
    """name -> (two-player model class, env id of its fold), alternating moves."""
    return _games(simultaneous=False)


def _games(simultaneous: bool) -> dict[str, tuple[type, str]]:
    found: dict[str, tuple[type, str]] = {}
    for env_id, game in GAMES.items():
        entry = game.model
        if isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            entry = getattr(importlib.import_module(module), attribute)
        model_class = getattr(entry, "model_class", None)
        if model_class is not None and getattr(model_class, "simultaneous", False) == simultaneous:
            name = re.sub(r"(?<!^)(?=[A-Z])", "_", model_class.__name__).lower()
            found[name] = (model_class, env_id)
    return found


def names() -> tuple[str, ...]:
    """The two-player games with alternating moves (AEC envs, `env(name)`)."""
    return tuple(_two_player_models())


def parallel_names() -> tuple[str, ...]:
    """The simultaneous-move games (parallel envs, `parallel_env(name)`)."""
    return tuple(_simultaneous_games())


class _Seats:
    """What the AEC and the parallel env share: the model, both agents' spaces, the seeded
    generator, and the checks of `reset`'s options and of the render mode."""

    metadata: dict[str, Any]
    kind: str  # "AEC" or "parallel"
    _own_arguments: tuple[str, ...]  # the env's arguments beside the model's

    def _set_up(
        self, name: str, model_class: type, kwargs: dict[str, Any], render_mode: str | None
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        own = ", ".join(repr(key) for key in self._own_arguments)
        try:  # the check gym.make runs: unknown names are a ValueError listing the allowed ones
            model = build_model(model_class, kwargs)
        except ValueError as error:
            if not str(error).startswith("unknown argument"):
                raise
            raise ValueError(f"{error}; the {self.kind} env also takes {own}") from None
        self.model, self.name, self.render_mode = model, name, render_mode
        self.metadata = {**self.metadata, "name": f"dice_envs_{name}_v0"}
        summary = (type(model).__doc__ or name).strip().splitlines()[0]
        # This env's own description, not the model's (whose rewards are the fold's 1 / 0).
        described = inspect.cleandoc(type(self).__doc__ or "")
        self.__doc__ = f"{name} as a PettingZoo {self.kind} env. {summary}\n\n{described}"
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self._num_actions = model.num_actions
        nvec = tuple(int(n) for n in model.observation_nvec)
        self._scalar = len(nvec) == 1
        observation = spaces.Discrete(nvec[0]) if self._scalar else spaces.MultiDiscrete(nvec)
        self._observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": observation,
                    "action_mask": spaces.Box(0, 1, (model.num_actions,), np.int8),
                }
            )
            for agent in AGENTS
        }
        self._action_spaces = {agent: spaces.Discrete(model.num_actions) for agent in AGENTS}
        self._start = model.initial_states()
        self._start_bounds = cumulative([p for p, _ in self._start])
        self._events = tuple(getattr(model, "event_keys", ()))
        self._np_random: np.random.Generator | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    @property
    def np_random(self) -> np.random.Generator:
        if self._np_random is None:
            self._np_random, _ = seeding.np_random()
        return self._np_random

    def _reset_options(self, seed: int | None, options: dict[str, Any] | None):
        """Seed the generator; the model state `options` asks to start from, or None.

        Other keys are ignored, as PettingZoo expects (its api_test resets with a made-up
        key), except a near miss of "state" (a typo), which is refused."""
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"reset options must be a dict (key 'state'), got {options!r}")
        for key in options or {}:
            typo = key != "state" and difflib.get_close_matches(str(key).lower(), ["state"])
            if typo:
                raise ValueError(f"reset options: unknown key {key!r}; did you mean 'state'?")
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        if options and options.get("state") is not None:
            return self.model.validate_state(options["state"])
        return None

    def _frame(self, state, info: dict) -> np.ndarray:
        """The rgb_array frame of `state` from player_0's side."""
        picture = getattr(self.model, "picture", None)
        max_dice, max_lines = getattr(self.model, "picture_size", (1, 3))
        if picture is None:
            dice, lines = [], [self.model.render_text(state, 0)]
        else:
            dice, lines = picture(state, 0, info)
        sides = getattr(self.model, "sides", 6)
        return render_scene(dice, lines, max_dice=max_dice, max_lines=max_lines, pips=sides <= 6)


class DiceAECEnv(_Seats, AECEnv):
    """A two-player dice game as a PettingZoo AEC env (`raw_env(name)`; `env(name)` wraps it).

    ## Description
    Two agents, `player_0` (seat 0) and `player_1` (seat 1), take turns as the game's rules say
    (its rules: the model's docstring, `help(env.unwrapped.model)`); a Pig turn is many steps of
    one agent, a Hog turn one step. Only the agent to move acts; chance is drawn from the env's
    seeded generator. `position` holds the model state (a tuple), `state()` the same as an
    array.

    ## Action Space
    `Discrete(num_actions)` for both agents, the model's actions (Pig: 0 hold, 1 roll; Hog:
    action a throws a + 1 dice). An in-space action the rules forbid plays as the model says
    (Pig's hold at turn total 0 rolls), as in the single-agent env. An action outside the space
    fails `env`'s `AssertOutOfBoundsWrapper`, or raises a ValueError in `raw_env`. An agent
    whose game has ended steps `None`.

    ## Observation Space
    `Dict(observation=..., action_mask=Box(0, 1, (num_actions,), int8))` for both agents.
    `observation` is what the single-agent env of the game shows, from the observing agent's
    side, in the same space and encoding (Pig: own score, opponent score, turn total of the
    player to move). `action_mask` marks the legal actions of the agent to move and is all
    zeros for the other agent and once the game is over.

    ## Rewards
    Zero-sum, at the end only: +1 to the winner, -1 to the loser, 0 on every other step. An
    agent's expected return is 2 p - 1, where p is its win probability. (The single-agent envs,
    such as `dice_envs/Pig-v0`, pay 1 for a win and 0 for a loss, so their expected return is p
    itself.)

    ## Starting State
    The model's start (scores 0). `first_player` says who moves first: "player_0" (default),
    "player_1", or None for a fair coin per game, as `agent_starts=None` in the single-agent
    env. `reset(options={"state": state})` starts from a model state instead (a tuple of the
    model's, e.g. Pig's (player to move, score 0, score 1, turn total)); other option keys are
    ignored, as PettingZoo expects, save a misspelt "state", which is refused.

    ## Episode End
    Termination for both agents when a player reaches the goal; each then steps `None` once
    and leaves `agents`. No truncation: the games end with probability 1 (wrap with
    PettingZoo's wrappers for a step limit).

    ## Info
    `info["<event>"]` for the model's events (Pig: `info["rolls"]`, the dice the agent threw on
    its last step; empty for the other agent).

    ## Arguments
    - `name`: one of `names()` ("pig", "two_dice_pig", "hog").
    - the model's keyword arguments (`goal`, `sides`, `die_probs`, `max_dice`, ...), checked
      as `gym.make` checks them: an unknown name is a ValueError listing the allowed ones.
    - `first_player="player_0"`.
    - `render_mode=None`: "ansi" (a line of text from player_0's side) or "rgb_array" (the dice
      thrown in the last turns and the scores, from player_0's side).

    ## Version History
    - v0: initial version.
    """

    metadata = {
        "name": "dice_envs_v0",
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 4,
        "is_parallelizable": False,
    }
    kind = "AEC"
    _own_arguments = ("first_player", "render_mode")

    def __init__(
        self,
        name: str,
        first_player: str | None = "player_0",
        render_mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        models = _two_player_models()
        if name not in models:
            raise ValueError(f"name must be one of {', '.join(models)}; got {name!r}")
        if first_player not in FIRST_PLAYERS:
            raise ValueError(
                f"first_player must be 'player_0', 'player_1' or None (a coin flip); "
                f"got {first_player!r}"
            )
        self._set_up(name, models[name], kwargs, render_mode)
        model, self.first_player = self.model, first_player
        self._sampler = getattr(model, "sample_step", None)
        if first_player != "player_0" and not hasattr(model, "swap_seats"):
            raise ValueError(f"first_player={first_player!r} needs a symmetric game")
        self.position: Any = None
        self.thrown: list[list[Any]] = [[], []]  # each seat's dice in its last turn
        self._last_mover: int | None = None

    def __repr__(self) -> str:
        return f"DiceAECEnv({self.model!r}, first_player={self.first_player!r})"

    # -- the game --------------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        state = self._reset_options(seed, options)
        uniform = self.np_random.random
        if state is None:
            state = self._start[draw(self._start_bounds, uniform)][1]
            first = self.first_player
            if first is None:
                first = AGENTS[int(uniform() < 0.5)]
            if first == "player_1":
                state = self.model.swap_seats(state)
        self.position = state
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {agent: self._no_events() for agent in AGENTS}
        self.thrown, self._last_mover = [[], []], None
        self._return = 0.0  # player 0's reward from the model (1 for a win)
        self.agent_selection = AGENTS[self.model.to_move(state)]

    def _no_events(self) -> dict[str, list]:
        return {key: [] for key in self._events}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = AGENTS.index(agent)
        obs = self.model.observation(self.position, seat)
        mask = np.zeros(self._num_actions, dtype=np.int8)
        if agent == self.agent_selection and not self.terminations[agent]:
            mask[list(self.model.legal_actions(self.position))] = 1
        return {
            "observation": np.int64(obs) if self._scalar else np.array(obs, dtype=np.int64),
            "action_mask": mask,
        }

    def action_masks(self) -> np.ndarray:
        """The legal actions of the agent to move, as booleans (for masked learners)."""
        return self.observe(self.agent_selection)["action_mask"].astype(bool)

    def state(self) -> np.ndarray:
        """The global state (PettingZoo's `state()`): the model state `position` as an array
        (Pig: player to move, player_0's score, player_1's, turn total)."""
        if self.position is None:
            raise RuntimeError("state() called before reset()")
        return np.array(self.position, dtype=np.int64)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        index = action_index(action, self._num_actions, " (or None for an agent whose game ended)")
        seat = AGENTS.index(agent)
        self._cumulative_rewards[agent] = 0.0
        uniform = self.np_random.random
        if self._sampler is not None:
            state, reward, terminal, info = self._sampler(self.position, index, uniform)
        else:
            _p, state, reward, terminal = sample_transition(
                self.model.transitions(self.position, index), uniform
            )
            info = {}
        if self._last_mover != seat:  # a new turn: the picture shows this turn's dice
            self.thrown[seat] = []
        self._last_mover = seat
        events = {key: list(info.get(key, [])) for key in self._events}
        for key in self._events:
            self.thrown[seat].extend(events[key])
        self.position = state
        self._return += reward
        self.infos = {a: (events if a == agent else self._no_events()) for a in AGENTS}
        if terminal:
            # The model pays player 0 one point for a win: +1 / -1 here.
            outcome = 2.0 * self._return - 1.0
            self.rewards = {"player_0": outcome, "player_1": -outcome}
            self.terminations = dict.fromkeys(AGENTS, True)
        else:
            self.rewards = dict.fromkeys(AGENTS, 0.0)
            self.agent_selection = AGENTS[self.model.to_move(state)]
        self._accumulate_rewards()

    # -- rendering -------------------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        if self.position is None:
            raise RuntimeError("render() called before reset()")
        if self.render_mode == "ansi":
            text = self.model.render_text(self.position, 0)
            over = " (game over)" if self.terminations["player_0"] else ""
            mover = AGENTS[self.model.to_move(self.position)]
            return f"player_0's view: {text} | {mover} to move{over}"
        info = {}
        for key in self._events:
            info[key] = self.thrown[0]
            info["opponent_" + key] = self.thrown[1]
        return self._frame(self.position, info)

    def close(self) -> None:
        pass


class DiceParallelEnv(_Seats, ParallelEnv):
    """A simultaneous-move dice game as a PettingZoo parallel env.

    ## Description
    The game of the simultaneous-move model (its rules: the model's docstring,
    `help(env.model)`; Simultaneous Hog is Tijms and van der Wal's television game). Both
    agents act in every step, neither seeing the other's action; chance is drawn from the env's
    seeded generator. `player_0` sits in seat 0 and `player_1` in seat 1.

    ## Action Space
    The model's `Discrete(num_actions)` for both agents (Simultaneous Hog: action a throws
    a + 1 dice).

    ## Observation Space
    `Dict(observation=..., action_mask=Box(0, 1, (num_actions,), int8))`: `observation` is
    what the single-agent env shows, from the observing agent's side (own score, opponent
    score); `action_mask` its legal actions (all zeros once the game is over).

    ## Rewards
    Zero-sum, at the end only: +1 to the winner, -1 to the loser (a tie's coin included). An
    agent's expected return is 2 p - 1, where p is its win probability, the expected return of
    the single-agent env.

    ## Starting State
    The model's start (scores 0), or `reset(options={"state": state})` (a model state, e.g.
    (score of player_0, score of player_1)); other option keys are ignored, as PettingZoo
    expects, save a misspelt "state", which is refused. `step`, `state` and `render` before
    the first `reset` raise a RuntimeError saying so (a parallel env has no
    `OrderEnforcingWrapper`).

    ## Episode End
    Termination for both agents when a move takes a player to the goal; `agents` is then
    empty. No truncation: the game ends with probability 1.

    ## Info
    `info["rolls"]`: the dice the agent threw this step; `info["opponent_rolls"]`: the other's.

    ## Arguments
    - `name`: one of `parallel_names()` ("simultaneous_hog").
    - the model's keyword arguments (`goal`, `max_dice`, `sides`), checked as `gym.make`
      checks them: an unknown name is a ValueError listing the allowed ones.
    - `render_mode=None`: "ansi" or "rgb_array" (from player_0's side).

    ## Version History
    - v0: initial version.
    """

    metadata = {
        "name": "dice_envs_parallel_v0",
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 4,
        "is_parallelizable": True,
    }
    kind = "parallel"
    _own_arguments = ("render_mode",)

    def __init__(self, name: str, render_mode: str | None = None, **kwargs: Any) -> None:
        games = _simultaneous_games()
        if name not in games:
            raise ValueError(f"name must be one of {', '.join(games)}; got {name!r}")
        self._set_up(name, games[name][0], kwargs, render_mode)
        self.observation_spaces, self.action_spaces = self._observation_spaces, self._action_spaces
        self.state_space = self._observation_spaces["player_0"]["observation"]
        self.position: Any = None  # the model state
        self.over = False
        self.thrown: dict[str, tuple[list, list]] = {}  # each seat's events of the last step

    def __repr__(self) -> str:
        return f"DiceParallelEnv({self.model!r})"

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        self.position = self._reset_options(seed, options)
        if self.position is None:
            self.position = self._start[draw(self._start_bounds, self.np_random.random)][1]
        self.agents, self.over = list(AGENTS), False
        self.thrown = {key: ([], []) for key in self._events}
        infos = {agent: self._info(seat) for seat, agent in enumerate(AGENTS)}
        return self._observations(), infos

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        observations = {}
        for seat, agent in enumerate(AGENTS):
            mask = np.zeros(self._num_actions, dtype=np.int8)
            if not self.over:
                mask[list(self.model.legal_actions(self.position, seat))] = 1
            observations[agent] = {
                "observation": np.array(
                    self.model.observation(self.position, seat), dtype=np.int64
                ),
                "action_mask": mask,
            }
        return observations

    def _info(self, seat: int) -> dict[str, list]:
        info = {}
        for key, both in self.thrown.items():
            info[key], info["opponent_" + key] = list(both[seat]), list(both[1 - seat])
        return info

    def action_masks(self, agent: str) -> np.ndarray:
        """The legal actions of `agent`, as booleans (for masked learners)."""
        return self._observations()[agent]["action_mask"].astype(bool)

    def step(self, actions: dict[str, Any]):
        if self.position is None:
            raise RuntimeError("step() called before reset()")
        if self.over:
            raise RuntimeError("the game is over: call reset()")
        if not isinstance(actions, dict) or set(actions) != set(AGENTS):
            raise ValueError(f"actions must be a dict with an action for each of {AGENTS}")
        joint = tuple(action_index(actions[agent], self._num_actions) for agent in AGENTS)
        state, reward, terminal, info = self.model.sample_joint(
            self.position, joint, self.np_random.random
        )
        self.position, self.over = state, bool(terminal)
        self.thrown = {key: (list(info[key][0]), list(info[key][1])) for key in self._events}
        # The model pays player 0 one point for a win: +1 / -1 here.
        outcome = 2.0 * reward - 1.0 if terminal else 0.0
        rewards = {"player_0": outcome, "player_1": -outcome if terminal else 0.0}
        terminations = dict.fromkeys(AGENTS, self.over)
        truncations = dict.fromkeys(AGENTS, False)
        observations = self._observations()
        infos = {agent: self._info(seat) for seat, agent in enumerate(AGENTS)}
        if self.over:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """The global state (PettingZoo's `state()`): the model state as an array (Simultaneous
        Hog: player_0's score, player_1's). `position` holds it as the model's tuple."""
        if self.position is None:
            raise RuntimeError("state() called before reset()")
        return np.array(self.position, dtype=np.int64)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            return None
        if self.position is None:
            raise RuntimeError("render() called before reset()")
        if self.render_mode == "ansi":
            over = " (game over)" if self.over else ""
            return f"player_0's view: {self.model.render_text(self.position, 0)}{over}"
        return self._frame(self.position, self._info(0))

    def close(self) -> None:
        pass


def parallel_env(name: str, **kwargs: Any) -> DiceParallelEnv:
    """The parallel env of the simultaneous-move game `name` (see `parallel_names()`), with the
    model's keyword arguments and `render_mode`."""
    return DiceParallelEnv(name, **kwargs)


def raw_env(name: str, **kwargs: Any) -> DiceAECEnv:
    """The bare AEC env of the two-player game `name` (see `names()`), with the model's keyword
    arguments, `first_player` and `render_mode`; `help(DiceAECEnv)` describes it. No wrapper:
    `env(name, ...)` is the one to play with, this one is for wrapping yourself."""
    return DiceAECEnv(name, **kwargs)


def env(name: str, **kwargs: Any) -> AECEnv:
    """The AEC env of the two-player game `name` (see `names()`), wrapped as PettingZoo's classic
    games are: `AssertOutOfBoundsWrapper` (an action outside the action space fails its
    assertion) and `OrderEnforcingWrapper` (`step`, `observe`, `render` or `agent_iter` before
    `reset` raise PettingZoo's "reset() needs to be called before ..." errors). Arguments as in
    `raw_env`; `.unwrapped` is the `DiceAECEnv`."""
    return OrderEnforcingWrapper(AssertOutOfBoundsWrapper(raw_env(name, **kwargs)))


def register_all() -> None:
    """Put every two-player game in PettingZoo's own registry (PettingZoo 1.27 and later),
    under the id of its single-agent env: `pettingzoo.make("aec", "dice_envs/Pig-v0",
    goal=30)`. Done when this module is imported."""
    register = getattr(pettingzoo_package, "register", None)
    registry = getattr(pettingzoo_package, "aec_registry", None)
    if register is None or registry is None:
        return  # an older PettingZoo: dice_envs.pettingzoo.env(name) only
    for name, (_, env_id) in _two_player_games().items():
        if env_id not in registry:
            register("aec", env_id, entry_point=env, kwargs={"name": name})
    parallel_registry = getattr(pettingzoo_package, "parallel_registry", None)
    for name, (_, env_id) in _simultaneous_games().items():
        if parallel_registry is not None and env_id not in parallel_registry:
            register("parallel", env_id, entry_point=parallel_env, kwargs={"name": name})


register_all()

__all__ = [
    "AGENTS",
    "DiceAECEnv",
    "DiceParallelEnv",
    "env",
    "names",
    "parallel_env",
    "parallel_names",
    "raw_env",
]
