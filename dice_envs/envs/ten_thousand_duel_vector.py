"""The native vector env of `dice_envs/TenThousandDuel-v0` at any goal: every copy stepped at
once with the race model's batch rules, the opponent asked in batches (no tables)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from dice_envs.envs.base import game_model
from dice_envs.envs.vector import DiceVectorEnv, NativeVectorEnv
from dice_envs.games.base import SIZE_LIMIT
from dice_envs.games.fold import Fold
from dice_envs.games.seat_policy import Policy, mover_legal
from dice_envs.games.ten_thousand import ROLL
from dice_envs.games.ten_thousand_duel import TenThousandDuel
from dice_envs.games.two_player import AGENT, OPPONENT

RACE = "dice_envs.games.ten_thousand_duel:TenThousandDuelVersus"
# A batched opponent that reads a few observation components is tabulated on their grid up
# to this many cells (the race's turn at the full goal: 200 x 45 x 6).
READS_GRID_LIMIT = 1_000_000
# The env's own options; every other keyword argument is the game's.
OPTIONS = ("autoreset_mode", "max_episode_steps", "render_mode")


def race_vector_env(model: Any = RACE, num_envs: int = 1, **kwargs: Any):
    """The id's `vector_entry_point`: the generic `DiceVectorEnv` over the game's tables where
    they fit (as the registry allows them: the race's `table_size()` within `SIZE_LIMIT`
    rows, goals up to about 1,500 points; or `tables=` given, as the sampled gap gives them),
    else `TenThousandDuelVectorEnv`, which needs none."""
    if "tables" in kwargs:
        return DiceVectorEnv(model, num_envs, **kwargs)
    options = {name: kwargs.pop(name) for name in OPTIONS if name in kwargs}
    fold = game_model(model, kwargs)
    race = getattr(fold, "model", None)
    if isinstance(race, TenThousandDuel) and race.table_size().rows > SIZE_LIMIT:
        return TenThousandDuelVectorEnv(fold, num_envs, **options)
    return DiceVectorEnv(fold, num_envs, **options)


class _Opponent:
    """The fold's opponent asked on a batch of its observations: its table where it has one,
    else its batched form in one call (a form asked once per observation through its
    cache); mixed answers are drawn with one uniform a row."""

    def __init__(self, policy: Policy, race: TenThousandDuel) -> None:
        self.policy, self.race = policy, race
        self.actions: np.ndarray | None = None  # a deterministic table as actions
        self.reads = tuple(range(len(race.observation_nvec)))  # the components it indexes
        table = policy.table
        if table is None:
            table = self._table_of_reads()
        if table is not None:
            flat = table.reshape(-1, table.shape[-1])
            best = flat.argmax(axis=1)
            if (flat[np.arange(len(flat)), best] == 1.0).all():
                self.actions = best.astype(np.int64)
        self.nvec = tuple(int(race.observation_nvec[i]) for i in self.reads)

    def _table_of_reads(self) -> np.ndarray | None:
        """A deterministic batched policy that reads a few components (a `Rule`'s `reads`:
        the turn, for crocce-mordecki and stop-at-K) asked once on their grid, the others 0;
        None where it reads all, mixes, or that grid is large."""
        asked, nvec = self.policy.asked, self.race.observation_nvec
        reads = None if asked is None or asked.per_observation else asked.reads
        if reads is None or np.prod([nvec[i] for i in reads]) > READS_GRID_LIMIT:
            return None
        grid = np.indices([nvec[i] for i in reads]).reshape(len(reads), -1).T
        observations = np.zeros((len(grid), len(nvec)), dtype=np.int64)
        observations[:, list(reads)] = grid
        legal = mover_legal(self.race, observations) if asked.needs_legal else None
        answer = asked.answer(observations, legal)
        if answer.ndim != 1:  # a mixed policy is asked round by round
            return None
        self.reads = tuple(reads)
        return np.eye(self.race.num_actions)[answer]

    def actions_at(self, states: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The opponent's actions at `states` (the opponent to move in each)."""
        observations = self.race.batch_observation(states, OPPONENT)
        if self.actions is not None:
            index = np.ravel_multi_index(tuple(observations[:, self.reads].T), self.nvec)
            return self.actions[index]
        policy = self.policy
        if policy.table is not None or policy.asked.per_observation:
            answer = policy.batch_probs(observations)
        else:
            asked = policy.asked
            legal = mover_legal(self.race, observations) if asked.needs_legal else None
            try:
                answer = asked.answer(observations, legal)
            except ValueError as error:
                raise ValueError(f"opponent: {error}") from None
        if answer.ndim == 1:
            return answer
        bounds = np.cumsum(answer, axis=1)
        drawn = rng.random(len(states)) * bounds[:, -1]
        chosen = (bounds <= drawn[:, None]).sum(axis=1)
        return np.minimum(chosen, answer.shape[1] - 1)


class TenThousandDuelVectorEnv(NativeVectorEnv):
    """`num_envs` copies of the Ten Thousand race against a fixed opponent, stepped together
    with the model's batch rules (`TenThousandDuel.batch_sample_step`, `batch_legal`,
    `batch_observation`): no tables, so any goal (10,000 points by default).

    A step plays every copy's action; then, while some copies have the opponent to move, all
    of them at once: the opponent is asked on their observations in one batch (none asked
    where only a roll is legal: any action plays as a roll there) and their dice thrown,
    until each copy is back at the agent's turn or its game ended. A deterministic opponent
    that reads only a few components (crocce-mordecki, stop-at-K: the turn), or a table, plays
    those rounds in one compiled loop (`TenThousandDuel.batch_sample_turns`), the same draws.

    The same interface as the other native vector envs (`DiceVectorEnv`, `YahtzeeVectorEnv`):
    arguments `model` (the fold, or a factory of it with the game's keyword arguments `goal`,
    `allowed_moves`, `opponent`, `agent_starts`), `num_envs`, `autoreset_mode`
    ("NextStep", the default, "SameStep" or "Disabled"), `max_episode_steps`, `render_mode`
    (None or "ansi"). Observations (n, 5) int64 as the single env's, rewards (n,) float64 (1
    when the agent wins), infos with ``action_mask`` (n, 15) int8 and ``_action_mask`` (in
    next-step mode, every action for a copy the next step resets); same-step mode adds
    ``final_obs`` and ``final_info``. `reset(options=)` takes ``"reset_mask"`` and ``"state"``
    (one state with the agent to move, or its observation, as the single env takes it).

    Randomness: one `np_random` for the batch; each step draws one uniform per copy for the
    agent's dice, then per round of the opponent's turns one per copy asked for its dice (and
    one for its action where the opponent mixes); a reset draws one per copy for who starts
    when `agent_starts` is None. So ``reset(seed=s)`` fixes every trajectory.
    """

    def __init__(
        self,
        model: Any = RACE,
        num_envs: int = 1,
        *,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        self._set_options(num_envs, autoreset_mode, max_episode_steps, render_mode)
        fold = game_model(model, kwargs)
        if not (isinstance(fold, Fold) and isinstance(fold.model, TenThousandDuel)):
            raise ValueError(f"model must be the Ten Thousand race's fold, got {fold!r}")
        self.model, self.race = fold, fold.model
        self.__doc__ = TenThousandDuelVectorEnv.__doc__
        self._opponent = _Opponent(fold.opponent_policy, self.race)
        starts = self.race.initial_states()
        if len(starts) != 1:
            raise ValueError(f"{self.race!r} has more than one start state")
        self._start_state = np.array(starts[0][1], dtype=np.int64)
        self._swapped_start = np.array(self.race.swap_seats(starts[0][1]), dtype=np.int64)
        self.single_observation_space = spaces.MultiDiscrete(fold.observation_nvec)
        self.single_action_space = spaces.Discrete(fold.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        n = self.num_envs
        self._started = False
        self._states = np.zeros((n, len(self._start_state)), dtype=np.int64)
        # Copies whose opponent won in its first turn, before the agent moved: the agent's
        # one step there ends the game (as the single env's fold does).
        self._over = np.zeros(n, dtype=bool)
        self._done = np.zeros(n, dtype=bool)
        self._elapsed = np.zeros(n, dtype=np.int64)

    # -- the rules, over arrays -----------------------------------------------------------

    # A deterministic opponent's turns played in one compiled loop (`batch_sample_turns`);
    # False plays them round by round in numpy, the same draws (the test's oracle).
    compiled_turns = True

    def _opponent_turns(self, states: np.ndarray, ended: np.ndarray) -> None:
        """Play the opponent wherever it is to move in `states` (in place), marking the games
        that end (it wins them: the agent's reward stays 0)."""
        rng, race, opponent = self.np_random, self.race, self._opponent
        if opponent.actions is not None and self.compiled_turns:
            race.batch_sample_turns(states, ended, OPPONENT, opponent.actions, opponent.reads, rng)
            return
        waiting = np.flatnonzero(~ended & (states[:, 0] == OPPONENT))
        at = states[waiting]
        while len(waiting):
            deciding = at[:, 3] > 0  # at a turn's start only a roll is legal
            if deciding.all():
                actions = opponent.actions_at(at, rng)
            else:
                actions = np.full(len(waiting), ROLL, dtype=np.int64)
                if deciding.any():
                    actions[deciding] = opponent.actions_at(at[deciding], rng)
            at, _, terminal = race.batch_sample_step(at, actions, rng.random(len(at)))
            going = ~terminal & (at[:, 0] == OPPONENT)
            if not going.all():
                stopped = ~going
                states[waiting[stopped]] = at[stopped]
                ended[waiting[stopped]] = terminal[stopped]
                waiting, at = waiting[going], at[going]

    def _fresh(self, count: int) -> np.ndarray:
        """`count` race starts, the opponent to move where it starts (its turn not played)."""
        starts = np.tile(self._start_state, (count, 1))
        agent_starts = self.model.agent_starts
        if agent_starts is None:
            theirs = self.np_random.random(count) >= 0.5
        else:
            theirs = np.full(count, not agent_starts)
        starts[theirs] = self._swapped_start
        return starts

    def _start(self, which: np.ndarray, state: tuple | None) -> None:
        """Start the games of the copies `which`: at `state`, or at the race's start with the
        opponent's first turn played where it starts."""
        if state is not None:
            self._states[which] = state
            self._over[which] = self.race.batch_to_move(np.array([state]))[0] != AGENT
        else:
            starts = self._fresh(int(which.sum()))
            ended = np.zeros(len(starts), dtype=bool)
            self._opponent_turns(starts, ended)
            self._states[which] = starts
            self._over[which] = ended
        self._done[which] = False
        self._elapsed[which] = 0

    def _observe(self) -> np.ndarray:
        return self.race.batch_observation(self._states, AGENT)

    def _masks(self) -> np.ndarray:
        """(n, 15) int8: the legal actions of each copy, every action where its opponent won
        before it moved, none where its game ended."""
        mask = self.race.batch_legal(self._states).view(np.int8)
        mask[self._states[:, 5] == 0] = 0
        mask[self._over] = 1
        return mask

    # -- the VectorEnv API ----------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        which, state = self._begin_reset(seed, options, started=self._started)
        if state is not None:
            state = self.model.validate_state(state)
        self._start(which, state)
        self._started = True
        mask = self._masks()
        if which is not self._all:
            mask[~which] = 0
        return self._observe(), {"action_mask": mask, "_action_mask": which.copy()}

    def step(self, actions):
        if not self._started:
            raise RuntimeError("step() called before reset()")
        actions = self._checked_actions(actions, self.model.num_actions)
        mode = self.autoreset_mode
        resetting = self._done.copy()
        self._refuse_ended(resetting)
        rewards, terminated = self._play(actions, resetting)
        self._elapsed += 1
        self._elapsed[resetting] = 0
        if self.max_episode_steps is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            truncated = self._elapsed >= self.max_episode_steps
        ended = terminated | truncated
        infos: dict[str, Any] = {}
        if mode == AutoresetMode.SAME_STEP and ended.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i, obs in zip(np.flatnonzero(ended), self._observe()[ended], strict=True):
                final_obs[i] = obs
            final_mask = self._masks()
            final_mask[~ended] = 0
            infos["final_obs"], infos["_final_obs"] = final_obs, ended.copy()
            infos["final_info"] = {"action_mask": final_mask, "_action_mask": ended.copy()}
            infos["_final_info"] = ended.copy()
            self._start(ended, None)
        else:
            self._done = ended
        infos["action_mask"] = self._open_where_resetting(self._masks())
        infos["_action_mask"] = self._all.copy()
        return self._observe(), rewards, terminated, truncated, infos

    def _play(self, actions: np.ndarray, resetting: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every copy plays its action, then the opponent its turns: rewards and which games
        ended. In next-step mode the copies `resetting` start anew instead (their opponents'
        first turns played with the others' turns)."""
        states, rewards, ended = self.race.batch_sample_step(
            self._states, actions, self.np_random.random(self.num_envs)
        )
        over = self._over
        if over.any():  # the game already ended: it stays as it was, paying nothing
            states[over], rewards[over], ended[over] = self._states[over], 0.0, True
        self._over = np.zeros(self.num_envs, dtype=bool)
        restarting = self.autoreset_mode == AutoresetMode.NEXT_STEP and resetting.any()
        if restarting:
            states[resetting] = self._fresh(int(resetting.sum()))
            ended[resetting] = False
        self._opponent_turns(states, ended)
        if restarting:
            self._over[resetting] = ended[resetting]
            rewards[resetting], ended[resetting] = 0.0, False
            self._done[resetting] = False
        self._states = states
        return rewards, ended

    def action_masks(self) -> np.ndarray:
        """(num_envs, 15) booleans: each copy's legal actions; every action for a copy the next
        step resets (next-step mode), none for one whose game ended (disabled mode)."""
        if not self._started:
            return np.zeros((self.num_envs, self.model.num_actions), dtype=bool)
        return self._open_where_resetting(self._masks()).astype(bool)

    @property
    def states(self) -> list[tuple[int, ...]]:
        """Each copy's race state, the agent in seat 0 (the final one where a game ended)."""
        if not self._started:
            raise RuntimeError("states read before reset()")
        return [tuple(row) for row in self._states.tolist()]

    def snapshot(self) -> dict[str, Any]:
        """Everything that decides the batch's future; `restore` continues bit for bit."""
        names = ("_states", "_over", "_done", "_elapsed")
        return {
            "arrays": {name: getattr(self, name).copy() for name in names},
            "started": self._started,
            "rng": self.np_random.bit_generator.state,
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        arrays = snapshot["arrays"]
        if any(len(a) != self.num_envs for a in arrays.values()):
            raise ValueError("snapshot holds arrays of another batch size")
        for name, array in arrays.items():
            setattr(self, name, np.array(array, copy=True))
        self._started = snapshot["started"]
        self.np_random.bit_generator.state = snapshot["rng"]

    def render(self) -> tuple[str, ...] | None:
        if self.render_mode is None:
            return None
        return tuple(self.model.render_text(state) for state in self.states)


__all__ = ["TenThousandDuelVectorEnv", "race_vector_env"]
