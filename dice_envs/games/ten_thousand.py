"""Solitaire Ten Thousand (one turn), exactly as Crocce and Mordecki model it.

Source: F. Crocce and E. Mordecki, "A finite exact algorithm to solve a dice game", Journal of
Applied Probability (2016). Scores are in
chips (points / 50). Only the combinations of the paper's Table 1 score: each 5 (1 chip), each
1 (2 chips), three 2s, 3s, 4s, 5s, 6s (4, 6, 8, 10, 12 chips) and three 1s (20 chips). A roll
of n dice is described by its configuration [f, o, t]: f fives, o ones, and t the face of
2, 3, 4, 6 shown three or more times (0 if none); then

    s = f + 2o + 14[o >= 3] + 7[f >= 3] + 2t    chips scored,
    d = f + o + 3[t != 0]                        scoring dice,
    c = f + o + [t != 0]                         scoring combinations.

After a roll every scoring die is set aside; a roll with no scoring die ends the turn with 0;
when every rolled die scores, five dice are rolled anew ("hot dice"). Before rolling again the
player may give back some scoring combinations of the last roll (Definition 2.1: the kept
configuration must be a non-empty strict part of the last one; only when c > 1 and fewer than
five dice are in hand) and roll those dice too. Following the paper's Table 2, a give-back is
part of the roll: "give back X and roll" is one action, so moves never chain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from itertools import product
from types import MappingProxyType

import numpy as np

from dice_envs.games.base import TableSize, Transition, check_int
from dice_envs.games.rule import Rule, parse_threshold

Config = tuple[int, int, int]  # (f, o, t)
TTState = tuple[int, int, int]  # (turn score in chips, configuration index, dice in hand)

STOP, ROLL = 0, 1
# The paper's move labels (Table 3) and the dice each gives back, as (fives, ones, triple face).
MOVE_LABELS: dict[str, Config] = {
    "5": (1, 0, 0),
    "1": (0, 1, 0),
    "55": (2, 0, 0),
    "51": (1, 1, 0),
    "11": (0, 2, 0),
    "551": (2, 1, 0),
    "511": (1, 2, 0),
    "t1": (0, 3, 0),
    "t2": (0, 0, 2),
    "t3": (0, 0, 3),
    "t4": (0, 0, 4),
    "t5": (3, 0, 0),
    "t6": (0, 0, 6),
}
ACTION_NAMES = ("stop", "roll") + tuple(f"give back {label}" for label in MOVE_LABELS)
MOVE_ACTION = {label: 2 + i for i, label in enumerate(MOVE_LABELS)}
NO_CONFIG = (0, 0, 0)  # index 0: no scoring configuration (the start, hot dice, or a bust)


def score(config: Config) -> int:
    f, o, t = config
    return f + 2 * o + 14 * (o >= 3) + 7 * (f >= 3) + 2 * t


def scoring_dice(config: Config) -> int:
    f, o, t = config
    return f + o + 3 * (t != 0)


def combinations(config: Config) -> int:
    f, o, t = config
    return f + o + (t != 0)


def classify(dice: Iterable[int]) -> Config:
    """The configuration [f, o, t] of one roll (faces 1..6)."""
    counts = Counter(dice)
    triple = next((face for face in (2, 3, 4, 6) if counts[face] >= 3), 0)
    return counts[5], counts[1], triple


@cache
def roll_frequencies(dice: int) -> dict[Config, int]:
    """How many of the 6**dice ordered rolls give each configuration (the paper's Table 5)."""
    return dict(Counter(classify(roll) for roll in product(range(1, 7), repeat=dice)))


# Every configuration, in the order of the paper's Table 5: no score first, then by scoring dice.
# (Five dice show every configuration.)
CONFIGS: tuple[Config, ...] = (NO_CONFIG,) + tuple(
    sorted(
        (config for config in roll_frequencies(5) if config != NO_CONFIG),
        key=lambda c: (scoring_dice(c), c[2] != 0, -c[0], c[2]),
    )
)
CONFIG_INDEX = {config: i for i, config in enumerate(CONFIGS)}


def give_back(config: Config, label: str) -> Config | None:
    """The configuration kept after giving back `label`'s dice, or None if that is not a move."""
    f, o, t = config
    back_f, back_o, back_t = MOVE_LABELS[label]
    if back_t and back_t != t:
        return None
    kept = (f - back_f, o - back_o, 0 if back_t else t)
    if kept[0] < 0 or kept[1] < 0 or kept == NO_CONFIG:
        return None
    return kept


class TenThousand:
    """One turn of solitaire Ten Thousand (Farkle), scored in chips, as Crocce and Mordecki
    model it.

    ## Description
    Roll five dice. Each 5 scores 1 chip (50 points), each 1 scores 2, three 2s, 3s, 4s, 5s,
    6s score 4, 6, 8, 10, 12 and three 1s score 20 (nothing else scores: no straights, no
    three pairs). After a roll every scoring die is set aside; a roll without one ends the
    turn with nothing; when every rolled die scores, five dice are rolled anew (hot dice).
    Between rolls the player stops and banks the turn score, rolls the dice in hand, or gives
    back scoring combinations of the last roll and rolls those dice too. The optimal expected
    turn score is 5.872019 chips (`baselines.solve("dice_envs/TenThousand-v0")`).

    ## Model
    State: (turn score tau in chips, index of the last roll's configuration in CONFIGS, dice in
    hand n). The start is (0, 0, 5); after hot dice the configuration is 0 (five fresh dice).
    Actions: 0 stop (paid tau), 1 roll the n dice, 2.. "give back <label> and roll" for the
    labels of MOVE_LABELS. Stop is illegal at the start, moves are legal only as Definition 2.1
    allows and `allowed_moves` lists; an illegal action is played as a roll.

    A turn score above `max_turn_score` ends the turn as if the player stopped. For a cap of 55
    or more the optimal value is the uncapped game's: from 56 chips on stopping is optimal
    (the paper's Lemma 4.3; the tests check it). Final states: (tau, 0, 0) after a
    non-scoring roll (paid 0); the state itself after a stop.

    ## Action Space
    `Discrete(15)`: 0 stop, 1 roll, 2..14 give back and roll, in the order of the paper's
    labels "5", "1", "55", "51", "11", "551", "511", "t1", "t2", "t3", "t4", "t5", "t6"
    (one 5; one 1; two 5s; a 5 and a 1; two 1s; two 5s and a 1; a 5 and two 1s; three 1s; the
    triple of 2s, 3s, 4s; three 5s; the triple of 6s). `info["action_mask"]` and
    `action_masks()` give the legal ones: stop not before the first roll; a give-back only of
    combinations the last roll scored, keeping at least one, with fewer than five dice in hand,
    and only for labels in `allowed_moves`. An illegal action is played as a roll.

    ## Observation Space
    `MultiDiscrete([max_turn_score + 25, 45, 6])`: (turn score in chips, index of the last
    roll's configuration [fives, ones, triple face] in `dice_envs.games.ten_thousand.CONFIGS`,
    dice in hand). Configuration 0 means five fresh dice (the start, or after hot dice); dice
    in hand 0 appears only in the final observation after a non-scoring roll.

    ## Rewards
    The turn score in chips on a stop (or when the score passes `max_turn_score`), 0 after a
    non-scoring roll; nothing before the end.

    ## Starting State
    Turn score 0, five dice in hand.

    ## Episode End
    Termination on a stop, a non-scoring roll, or a turn score above `max_turn_score`.

    ## Info
    `info["dice"]`: the faces just rolled (empty on a stop).

    ## Arguments
    - `allowed_moves=None`: the give-back labels allowed (default all); `[]` gives the
      stop-or-roll game of the paper's section 5.1, `["5", "1"]` a restricted game of its
      Table 4.
    - `max_turn_score=100`: a turn score above it (in chips) ends the turn as a stop; any cap
      of 55 or more leaves the optimal value unchanged (stopping is optimal from 56 on, the
      paper's Lemma 4.3). An integer >= 1.
    - `render_mode=None`: `"ansi"`, `"rgb_array"` (the dice, scoring ones bright) or `"human"` (that
      picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    num_actions = len(ACTION_NAMES)
    action_names = ACTION_NAMES
    observation_names = ("turn score", "configuration", "dice to roll")
    picture_size = (5, 3)

    def __init__(
        self, allowed_moves: Iterable[str] | None = None, max_turn_score: int = 100
    ) -> None:
        if allowed_moves is None:
            labels = tuple(MOVE_LABELS)
        elif isinstance(allowed_moves, str):
            raise ValueError(
                f"allowed_moves must be a list of labels such as ['5', '1'], got {allowed_moves!r}"
            )
        else:
            labels = tuple(dict.fromkeys(allowed_moves))
            unknown = [label for label in labels if label not in MOVE_LABELS]
            if unknown:
                raise ValueError(
                    f"allowed_moves has unknown labels {unknown}; allowed: {list(MOVE_LABELS)}"
                )
        self.allowed_moves = labels
        self.max_turn_score = check_int("max_turn_score", max_turn_score, 1)
        # A final observation can show up to the cap plus one roll's best score (24 chips).
        self.observation_nvec = (self.max_turn_score + 25, len(CONFIGS), 6)
        self._moves = {
            (config, n): self._legal_moves(config, n) for config in CONFIGS for n in range(1, 6)
        }
        self._roll_tables = {n: tuple(self._roll_table(n)) for n in range(1, 6)}

    def table_size(self) -> TableSize:
        """About how large the tables are: measured with every move allowed, about 40 states
        per chip of the cap and 118 outcome rows a state (8,938 states and 1.05 million rows
        at max_turn_score=200); fewer moves give fewer."""
        states = (self.max_turn_score + 25) * 40
        return TableSize(states, states * 118, "max_turn_score")

    def moves(self, config: Config, n: int) -> Mapping[int, tuple[int, int]]:
        """The give-back moves allowed after a roll of configuration `config` that left `n`
        dice in hand: action -> (chips given back, dice given back)."""
        return MappingProxyType(self._moves[(config, n)])

    def roll_table(self, n: int) -> tuple[tuple[float, Config], ...]:
        """The configurations a roll of `n` dice shows, with their probabilities."""
        return self._roll_tables[n]

    def __repr__(self) -> str:
        moves = "all" if len(self.allowed_moves) == len(MOVE_LABELS) else list(self.allowed_moves)
        return f"TenThousand(allowed_moves={moves}, max_turn_score={self.max_turn_score})"

    def _legal_moves(self, config: Config, n: int) -> dict[int, tuple[int, int]]:
        """action -> (chips given back, dice given back), for the allowed legal moves."""
        if n == 5 or combinations(config) <= 1:
            return {}
        moves = {}
        for label in self.allowed_moves:
            kept = give_back(config, label)
            if kept is not None:
                moves[MOVE_ACTION[label]] = (
                    score(config) - score(kept),
                    scoring_dice(config) - scoring_dice(kept),
                )
        return moves

    @staticmethod
    def _roll_table(n: int) -> list[tuple[float, Config]]:
        total = 6**n
        return [(count / total, config) for config, count in sorted(roll_frequencies(n).items())]

    def initial_states(self) -> list[tuple[float, TTState]]:
        return [(1.0, (0, 0, 5))]

    def legal_actions(self, state: TTState) -> tuple[int, ...]:
        tau, config_index, n = state
        if tau == 0:
            return (ROLL,)
        return (STOP, ROLL, *self._moves[(CONFIGS[config_index], n)])

    def rolled_from(self, state: TTState, action: int) -> tuple[int, int]:
        """(turn score, dice) that a roll or a give-back action at `state` rolls from (what
        is given back leaves the turn score); an illegal action plays as a roll."""
        tau, config_index, n = state
        move = self._moves[(CONFIGS[config_index], n)].get(action)
        if move is None:
            return tau, n
        return tau - move[0], n + move[1]

    @staticmethod
    def after_roll(tau: int, n: int, config: Config) -> TTState | None:
        """The position after a roll of `n` dice from turn score `tau` shows `config`: its
        scoring dice set aside and scored, five fresh dice when all of them scored (hot dice);
        None when no die scored (the turn is lost)."""
        if config == NO_CONFIG:
            return None
        tau += score(config)
        left = n - scoring_dice(config)
        return (tau, 0, 5) if left == 0 else (tau, CONFIG_INDEX[config], left)

    @staticmethod
    def throw(n: int, uniform: Callable[[], float]) -> tuple[tuple[int, ...], Config]:
        """`n` dice thrown with one `uniform()` (one of the 6**n equally likely ordered rolls)
        and their configuration."""
        return _ROLLS[n][int(uniform() * 6**n)]

    def _after_roll(self, tau: int, n: int, config: Config) -> tuple[TTState, float, bool]:
        state = self.after_roll(tau, n, config)
        if state is None:
            return (tau, 0, 0), 0.0, True
        if state[0] > self.max_turn_score:
            return state, float(state[0]), True
        return state, 0.0, False

    def transitions(self, state: TTState, action: int) -> list[Transition]:
        if action == STOP and state[0] > 0:
            return [Transition(1.0, state, float(state[0]), True)]
        tau, n = self.rolled_from(state, action)
        return [
            Transition(prob, *self._after_roll(tau, n, config))
            for prob, config in self._roll_tables[n]
        ]

    def sample_step(
        self, state: TTState, action: int, uniform: Callable[[], float]
    ) -> tuple[TTState, float, bool, dict]:
        """Throw the dice with `uniform()`: the same law as `transitions` (a test checks)."""
        if action == STOP and state[0] > 0:
            return state, float(state[0]), True, {"dice": []}
        tau, n = self.rolled_from(state, action)
        dice, config = self.throw(n, uniform)
        next_state, reward, terminal = self._after_roll(tau, n, config)
        return next_state, reward, terminal, {"dice": list(dice)}

    def observation(self, state: TTState) -> TTState:
        return state

    def validate_state(self, state: object) -> TTState:
        try:
            tau, config_index, n = state  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ValueError(
                f"state must be (turn score, configuration index, dice), got {state!r}"
            ) from None
        tau = check_int("turn score", tau, 0, self.max_turn_score)
        config_index = check_int("configuration index", config_index, 0, len(CONFIGS) - 1)
        n = check_int("dice in hand", n, 1, 5)
        config = CONFIGS[config_index]
        if n < 5 and (config_index == 0 or scoring_dice(config) + n > 5):
            raise ValueError(f"configuration {list(config)} can not leave {n} dice in hand")
        if tau == 0 and (config_index, n) != (0, 5) or 0 < tau < score(config):
            raise ValueError(f"turn score {tau} is impossible with {list(config)} set aside")
        return tau, config_index, n

    def render_text(self, state: TTState) -> str:
        tau, config_index, n = state
        config = CONFIGS[config_index]
        last = f"last roll [{config[0]},{config[1]},{config[2]}]" if config_index else "fresh dice"
        return f"turn score {tau} chips ({50 * tau} points), {last}, {n} dice in hand"

    policy_names = ("stop-at-K",)
    policy_descriptions = {
        "stop-at-K": "rolls, never giving dice back, until the turn score reaches K chips"
    }

    def named_policy(self, name: str) -> Rule | None:
        """stop-at-K: roll (never giving dice back) until the turn score reaches K chips."""
        threshold = parse_threshold("stop-at-{K}", name)
        if threshold is None:
            return None

        def batch(observations: np.ndarray) -> np.ndarray:
            tau = np.asarray(observations).reshape(-1, 3)[:, 0]
            return np.where((tau > 0) & (tau >= threshold), STOP, ROLL)

        return Rule.from_batch(batch, name)

    def picture(self, state: TTState, context: dict):
        tau, config_index, n = state
        dice = context.get("dice", [])
        _f, _o, t = CONFIGS[config_index] if n else NO_CONFIG
        triple = 3 if t else 0
        shown = []
        for face in dice:  # scoring dice bright, the rest dim
            scoring = face in (1, 5) or (face == t and triple > 0)
            if face == t and triple > 0:
                triple -= 1
            shown.append((face, not scoring))
        lines = [f"TURN SCORE {tau} CHIPS ({50 * tau} PTS)", f"DICE IN HAND {n}"]
        if context["done"]:
            lines.append("BUST" if n == 0 else "BANKED")
        return shown, lines


# Every ordered roll of n dice with its configuration, for sampling a roll in one draw.
_ROLLS = {
    n: [(roll, classify(roll)) for roll in product(range(1, 7), repeat=n)] for n in range(1, 6)
}
