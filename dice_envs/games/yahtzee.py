"""Solitaire Yahtzee: the rules once, as batch operations over arrays, and the game's structure.

Sources: the official rules (Milton Bradley / Hasbro instructions); T. Verhoeff, "Optimal
Solitaire Yahtzee Player" (1999, and "How to Maximize Your Score in Solitaire Yahtzee", 1999);
J. Glenn, "An Optimal Strategy for Yahtzee" (Loyola College technical report CS-TR-0002, 2006).

The game is too large for the project's tables (about half a million turn-start states, each with
a three-roll turn inside), so instead of `transitions` this model offers its structure:

- Turn-start states ``(filled, upper, yahtzee50)``: the bit mask of filled boxes (bit ``b`` for
  box ``b`` in `BOX_NAMES` order), the upper total capped at 63, and whether the Yahtzee box
  holds 50. `Yahtzee.turn_start_states` lists the reachable ones in an order in which a turn
  only leads to later ones (by the number of filled boxes); `state_index` maps them into a
  dense array of `NUM_STATE_SLOTS` entries.
- The graph inside a turn, the same for every turn: roll five dice (`ROLL_PROBABILITIES` over the
  252 sorted dice multisets `DICE`), keep a multiset (`KEEPS`: the 462 multisets of 0 to 5 dice),
  roll the rest (`KEEP_OUTCOMES`, or one die at a time through `KEEP_ADD`), keep, roll, score.
  Rerolls as the env numbers them (bit ``i`` rerolls the ``i``-th lowest die) map to keeps by
  `REROLL_KEEP`; `REROLL_LEGAL` keeps the lowest-numbered reroll of each distinct keep.
- Scoring, in batches: `Yahtzee.scoring(filled, dice)` (legal boxes and the points written in
  them, joker-aware) and `Yahtzee.score_result(...)` (the reward with its bonuses and the next
  state). The scoring depends on the filled boxes only through which boxes are open, except for
  a Yahtzee rolled with the Yahtzee box filled (the joker rules); the reward and next state
  depend on the dice only through the points and whether the dice are a Yahtzee. Solvers may
  rely on both facts (a test holds the model to them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations_with_replacement
from math import factorial
from typing import NamedTuple

import numpy as np

from dice_envs.games.base import Transition, check_choice
from dice_envs.games.rule import Rule

BOX_NAMES = (
    "ones",
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "three_of_a_kind",
    "four_of_a_kind",
    "full_house",
    "small_straight",
    "large_straight",
    "yahtzee",
    "chance",
)
NUM_BOXES = 13
UPPER_BOXES = tuple(range(6))
THREE_KIND, FOUR_KIND, FULL_HOUSE, SMALL_STRAIGHT, LARGE_STRAIGHT, YAHTZEE, CHANCE = range(6, 13)
LOWER_BOXES = tuple(range(6, 13))
FULL_CARD = (1 << NUM_BOXES) - 1
UPPER_TARGET = 63
UPPER_BONUS = 35
YAHTZEE_BONUS = 100
JOKER_RULES = ("forced", "free", "verhoeff")
UPPER_LEVELS = UPPER_TARGET + 1  # the upper total 0..63 (capped)
NUM_STATE_SLOTS = (FULL_CARD + 1) * UPPER_LEVELS * 2
NUM_DICE = 5


def _multisets(size: int) -> list[tuple[int, ...]]:
    return list(combinations_with_replacement(range(1, 7), size))


def _counts(faces: Sequence[int]) -> list[int]:
    return [sum(1 for f in faces if f == face) for face in range(1, 7)]


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


DICE_FACES = _frozen(np.array(_multisets(NUM_DICE), dtype=np.int8))
"""(252, 5): the sorted faces of each dice multiset, in lexicographic order."""
DICE = _frozen(np.array([_counts(d) for d in DICE_FACES], dtype=np.int8))
"""(252, 6): how many dice show each face 1..6, per dice multiset."""
NUM_DICE_SETS = len(DICE)
_KEEP_TUPLES = [keep for size in range(NUM_DICE + 1) for keep in _multisets(size)]
KEEPS = _frozen(np.array([_counts(k) for k in _KEEP_TUPLES], dtype=np.int8))
"""(462, 6): face counts of every multiset of 0..5 dice, by size then lexicographically; the
last 252 are the dice multisets in `DICE` order (a keep of five dice is the dice themselves)."""
NUM_KEEPS = len(KEEPS)
KEEP_SIZE = _frozen(KEEPS.sum(axis=1).astype(np.int8))
KEEP_LEVEL_START = tuple(int(np.searchsorted(KEEP_SIZE, n)) for n in range(NUM_DICE + 2))
"""Keeps of n dice are ``KEEPS[KEEP_LEVEL_START[n]:KEEP_LEVEL_START[n + 1]]``."""
DICE_KEEP_OFFSET = KEEP_LEVEL_START[NUM_DICE]  # keep index of dice multiset i: offset + i
_KEEP_INDEX = {keep: i for i, keep in enumerate(_KEEP_TUPLES)}


def _add_remove_tables() -> tuple[np.ndarray, np.ndarray]:
    add = np.full((NUM_KEEPS, 6), -1, dtype=np.int32)
    remove = np.full((NUM_KEEPS, 6), -1, dtype=np.int32)
    for i, keep in enumerate(_KEEP_TUPLES):
        for face in range(1, 7):
            if len(keep) < NUM_DICE:
                add[i, face - 1] = _KEEP_INDEX[tuple(sorted(keep + (face,)))]
            if face in keep:
                rest = list(keep)
                rest.remove(face)
                remove[i, face - 1] = _KEEP_INDEX[tuple(rest)]
    return _frozen(add), _frozen(remove)


KEEP_ADD, KEEP_REMOVE = _add_remove_tables()
"""(462, 6) each: the keep with one more die showing face f+1 (-1 for five dice), and the keep
with one die of face f+1 taken out (-1 if no die shows it). Rolling the dice a keep leaves out
one at a time: the expected value of a keep is the mean over the six faces of the keep with one
more die; that recursion is the whole roll."""


def _keep_outcomes() -> np.ndarray:
    factorials = np.array([factorial(n) for n in range(NUM_DICE + 1)], dtype=float)
    rolled = DICE[None, :, :].astype(np.int64) - KEEPS[:, None, :]
    possible = (rolled >= 0).all(axis=-1)
    rolled = np.maximum(rolled, 0)
    size = rolled.sum(axis=-1)
    ways = factorials[size] / factorials[rolled].prod(axis=-1)
    return _frozen(np.where(possible, ways / 6.0**size, 0.0))


KEEP_OUTCOMES = _keep_outcomes()
"""(462, 252): the probability of each dice multiset after keeping a multiset and rolling the
other dice (a keep of five dice stays as it is)."""
ROLL_PROBABILITIES = KEEP_OUTCOMES[0]
"""(252,): the distribution of a roll of five dice."""


def _reroll_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    keep_of = np.zeros((NUM_DICE_SETS, 32), dtype=np.int32)
    legal = np.zeros((NUM_DICE_SETS, 32), dtype=bool)
    twin = np.full((NUM_DICE_SETS, 32), -1, dtype=np.int32)
    for d, faces in enumerate(DICE_FACES.tolist()):
        first: dict[tuple[int, ...], int] = {}
        for bits in range(32):
            kept = tuple(f for i, f in enumerate(faces) if not bits >> i & 1)
            keep_of[d, bits] = _KEEP_INDEX[kept]
            legal[d, bits] = bits != 0 and kept not in first
            if bits:
                first.setdefault(kept, bits)
                twin[d, bits] = first[kept]
    return _frozen(keep_of), _frozen(legal), _frozen(twin)


REROLL_KEEP, REROLL_LEGAL, REROLL_TWIN = _reroll_tables()
"""(252, 32) each: the keep left by rerolling the dice whose bit is set (the five dice in
ascending order of face, bit 0 the lowest), whether that reroll is the lowest-numbered
non-empty one leaving its keep (the one legal reroll per distinct keep), and that legal twin
of every non-empty reroll (-1 for rerolling nothing)."""
_REROLL_TWIN_ROWS = REROLL_TWIN.tolist()
_REROLL_TWIN_FLAT = _frozen(REROLL_TWIN.ravel().astype(np.int64))


def _points_tables() -> tuple[np.ndarray, np.ndarray]:
    counts = DICE.astype(np.int64)
    total = (counts * np.arange(1, 7)).sum(axis=1)
    most = counts.max(axis=1)
    present = counts > 0

    def runs(length: int) -> np.ndarray:
        windows = [present[:, s : s + length].all(axis=1) for s in range(7 - length)]
        return np.any(windows, axis=0)

    points = np.zeros((NUM_DICE_SETS, NUM_BOXES), dtype=np.int64)
    points[:, :6] = counts * np.arange(1, 7)
    points[:, THREE_KIND] = np.where(most >= 3, total, 0)
    points[:, FOUR_KIND] = np.where(most >= 4, total, 0)
    # Exactly three of one face and two of another: five of a kind is not a full house.
    points[:, FULL_HOUSE] = np.where((most == 3) & ((counts == 2).sum(axis=1) == 1), 25, 0)
    points[:, SMALL_STRAIGHT] = np.where(runs(4), 30, 0)
    points[:, LARGE_STRAIGHT] = np.where(runs(5), 40, 0)
    points[:, YAHTZEE] = np.where(most == 5, 50, 0)
    points[:, CHANCE] = total
    joker = points.copy()  # a Yahtzee played as a joker: the lower boxes score in full
    joker[:, FULL_HOUSE] = 25
    joker[:, SMALL_STRAIGHT] = 30
    joker[:, LARGE_STRAIGHT] = 40
    return _frozen(points), _frozen(joker)


BOX_POINTS, JOKER_POINTS = _points_tables()
"""(252, 13) each: the points of each dice multiset in each box, plainly and as a joker (Full
house, Small and Large straight in full; the rest as plainly). Only Yahtzee rows of
`JOKER_POINTS` are ever used."""
_BOX_POINT_ROWS = tuple(tuple(row) for row in BOX_POINTS.tolist())
_OPEN_BOXES = _frozen((np.arange(FULL_CARD + 1)[:, None] >> np.arange(NUM_BOXES) & 1) == 0)
_NO_POINTS = _frozen(np.zeros((0, NUM_BOXES), dtype=np.int64))
_NO_ROWS = _frozen(np.zeros(0, dtype=np.int64))
_FIRST_BOX = _frozen(
    np.array([(m & -m).bit_length() - 1 for m in range(FULL_CARD + 1)], dtype=np.int64)
)  # the lowest bit set in a box mask (-1 for none)
IS_YAHTZEE = _frozen(DICE.max(axis=1) == NUM_DICE)
YAHTZEE_FACE = _frozen(np.where(IS_YAHTZEE, DICE.argmax(axis=1), -1))
"""(252,): the face index 0..5 of a Yahtzee roll, -1 for other dice."""
YAHTZEE_DICE = _frozen(np.flatnonzero(IS_YAHTZEE))
_IS_UPPER = _frozen(np.arange(NUM_BOXES) < 6)
_IS_LOWER = _frozen(~_IS_UPPER)


def dice_index(faces: Sequence[int]) -> int:
    """The index in `DICE` of five dice given by their faces (any order)."""
    values = tuple(sorted(int(f) for f in faces))
    if len(values) != NUM_DICE or not all(1 <= f <= 6 for f in values):
        raise ValueError(f"dice must be five faces in 1..6, got {tuple(faces)!r}")
    return _KEEP_INDEX[values] - DICE_KEEP_OFFSET


def keep_index(faces: Sequence[int]) -> int:
    """The index in `KEEPS` of a multiset of 0..5 dice given by their faces."""
    values = tuple(sorted(int(f) for f in faces))
    if len(values) > NUM_DICE or not all(1 <= f <= 6 for f in values):
        raise ValueError(f"a keep must be 0..5 faces in 1..6, got {tuple(faces)!r}")
    return _KEEP_INDEX[values]


def state_index(filled, upper, yahtzee50):
    """The slot of turn-start states in a dense array of `NUM_STATE_SLOTS` entries (arrays
    broadcast): ``(filled * 64 + upper) * 2 + yahtzee50``."""
    return (np.asarray(filled, dtype=np.int64) * UPPER_LEVELS + upper) * 2 + np.asarray(
        yahtzee50, dtype=np.int64
    )


NUM_ACTIONS = 32 + NUM_BOXES
"""The env's actions: rerolls 0..31 by bit mask over the dice in ascending order, then a box."""
OBSERVATION_NVEC = (NUM_DICE + 1,) * 6 + (3,) + (2,) * NUM_BOXES + (UPPER_LEVELS, 2)
"""The observation's 22 entries: dice per face 1..6, rolls left, the 13 filled flags, the
upper total capped at 63, whether the Yahtzee box holds 50."""
TABLE_BOXES = 3
"""The most boxes in play for which the model offers the tables form (`transitions`): one turn
inside has 756 decision states and about 5 million outcome rows, so three boxes already give
about 70 million rows (5 GB to build)."""
REGISTRY_TABLE_BOXES = 2
"""The most boxes in play at which the registry lets `baselines` build tables (`tabulate`,
`solve(method=...)`, `evaluate`): about 12 million rows, seconds. Three boxes are for
`dice_envs.tables.build_tables` on the model directly."""
_COUNT_KEY = _frozen(6 ** np.arange(6, dtype=np.int64))


def _dice_of_counts() -> np.ndarray:
    lookup = np.full(6**6, -1, dtype=np.int64)
    lookup[DICE.astype(np.int64) @ _COUNT_KEY] = np.arange(NUM_DICE_SETS)
    return _frozen(lookup)


_DICE_OF_COUNTS = _dice_of_counts()
_FILLED_FLAGS = _frozen(np.arange(FULL_CARD + 1)[:, None] >> np.arange(NUM_BOXES) & 1)
_BOX_BITS = _frozen(1 << np.arange(NUM_BOXES, dtype=np.int64))


def _keep_rolls() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    nonzero = KEEP_OUTCOMES > 0
    ptr = np.zeros(NUM_KEEPS + 1, dtype=np.int64)
    np.cumsum(nonzero.sum(axis=1), out=ptr[1:])
    keeps, dice = np.nonzero(nonzero)
    return _frozen(ptr), _frozen(dice.astype(np.int64)), _frozen(KEEP_OUTCOMES[keeps, dice])


KEEP_ROLL_PTR, KEEP_ROLL_DICE, KEEP_ROLL_PROB = _keep_rolls()
"""`KEEP_OUTCOMES` as sparse rows: the dice multisets a keep can roll into are
``KEEP_ROLL_DICE[KEEP_ROLL_PTR[k]:KEEP_ROLL_PTR[k + 1]]``, with their probabilities."""


def decode_observations(observations) -> tuple[np.ndarray, ...]:
    """Observations ((22,) or (n, 22) ints) as arrays ``(filled, upper, yahtzee50, dice,
    rolls_left)``, each (n,) int64 (dice: the index in `DICE`; -1 for counts that are not five
    dice)."""
    obs = np.asarray(observations, dtype=np.int64).reshape(-1, len(OBSERVATION_NVEC))
    dice = np.take(_DICE_OF_COUNTS, obs[:, :6] @ _COUNT_KEY)
    filled = obs[:, 7:20] @ _BOX_BITS
    return filled, obs[:, 20].copy(), obs[:, 21].copy(), dice, obs[:, 6].copy()


def encode_observations(filled, upper, yahtzee50, dice, rolls_left) -> np.ndarray:
    """(n, 22) int64 observations of arrays of play states (the inverse of
    `decode_observations`)."""
    columns = [np.asarray(a, dtype=np.int64).reshape(-1) for a in (filled, upper, yahtzee50)]
    filled, upper, flag = columns
    dice = np.asarray(dice, dtype=np.int64).reshape(-1)
    rolls = np.asarray(rolls_left, dtype=np.int64).reshape(-1)
    return np.concatenate(
        (DICE[dice], rolls[:, None], _FILLED_FLAGS[filled], upper[:, None], flag[:, None]),
        axis=1,
        dtype=np.int64,
    )


class PlayState(NamedTuple):
    """A decision point of the game: the score card (as `TurnState`), the dice showing (index
    in `DICE`) and the rolls left in the turn (0..2). Once every box is filled the game is
    over and `dice` are the last dice scored, with 0 rolls left."""

    filled: int
    upper: int
    yahtzee50: bool
    dice: int
    rolls_left: int


class ManyScorings(NamedTuple):
    """`Yahtzee.scoring_many`'s answer for n rows: `legal` (n, 13) bool and `legal_bits`
    (n,) the same as bit masks; `jokers` the rows that are jokers and `joker_points` their
    points (k, 13); every other row scores `BOX_POINTS` of its dice."""

    legal: np.ndarray
    legal_bits: np.ndarray
    jokers: np.ndarray
    joker_points: np.ndarray


class TurnState(NamedTuple):
    """The score card between turns: filled boxes (bit mask), upper total (capped at 63), and
    whether the Yahtzee box holds 50."""

    filled: int
    upper: int
    yahtzee50: bool


def _check_boxes(boxes: Sequence[str] | None) -> tuple[int, ...]:
    if boxes is None:
        return tuple(range(NUM_BOXES))
    allowed = ", ".join(BOX_NAMES)
    if isinstance(boxes, str | bytes) or not isinstance(boxes, Sequence):
        raise ValueError(f"boxes must be a sequence of box names ({allowed}); got {boxes!r}")
    if not boxes or any(name not in BOX_NAMES for name in boxes) or len(set(boxes)) < len(boxes):
        raise ValueError(
            f"boxes must be distinct names among {allowed} (at least one); got {boxes!r}"
        )
    return tuple(sorted(BOX_NAMES.index(name) for name in boxes))


class Yahtzee:
    """Solitaire Yahtzee under the official rules, with a choice of joker rule.

    ## Rules
    Thirteen turns; each turn rolls five dice, then up to twice rerolls any of them, then scores
    the dice in one open box: Ones..Sixes (the dice of that face), Three and Four of a kind (all
    dice, if that many show one face), Full house 25 (three of one face and two of another:
    five of a kind is not a full house unless played as a joker), Small straight 30 (four in a
    row), Large straight 40 (five in a row), Yahtzee 50 (five of a kind), Chance (all dice).
    The scoring that brings the upper total (Ones..Sixes) to 63 or more pays the upper bonus 35.
    Each further Yahtzee while the Yahtzee box holds 50 pays a Yahtzee bonus of 100.

    A Yahtzee rolled with the Yahtzee box already filled (50 or 0) is a joker, by `joker`:

    - ``"forced"`` (the official instructions): it must be scored in its upper box if that is
      open; else in any open lower box, where Full house, Small and Large straight score in
      full (25, 30, 40); else as 0 in an open upper box.
    - ``"free"``: any open box; lower boxes score in full.
    - ``"verhoeff"``: any open box (Verhoeff's rules say the player may choose any open box);
      Full house, Small and Large straight score in full only when the Yahtzee's own upper box
      is not open. This is the reading under which the published optimum 254.5896 (Verhoeff
      1999; Glenn 2006) comes out: the solver gives 254.58961 under it, and 254.58773 under the
      forced rule (the two differ in the fifth significant digit). Verhoeff's description of
      his rules ("you may choose any dice pattern for scoring, as long as its box is empty")
      rules out the forcing; a reading with lower boxes always in full (``"free"``) gives a
      different number again.

    ## Reduced games
    `boxes` names the boxes in play (default all 13, in any order). Boxes left out count as
    filled from the start and never score; the game lasts one turn per box in play. The upper
    bonus still needs 63 from the upper boxes in play (so it is out of reach when they cannot
    make 63). The joker and the Yahtzee bonus need the Yahtzee box in play; under ``"forced"``
    and ``"verhoeff"`` an upper box left out counts as not open.

    Args:
        joker: ``"forced"`` (default), ``"free"`` or ``"verhoeff"``.
        boxes: names from `BOX_NAMES`, or None for all.

    Raises:
        ValueError: a joker rule or box name not listed above, or repeated boxes.
    """

    def __init__(self, joker: str = "forced", boxes: Sequence[str] | None = None) -> None:
        self.joker = check_choice("joker", joker, JOKER_RULES)
        self.boxes = _check_boxes(boxes)
        self.absent = FULL_CARD & ~sum(1 << b for b in self.boxes)
        self.has_yahtzee_box = YAHTZEE in self.boxes
        self.start = TurnState(self.absent, 0, False)
        self._joker_answers: tuple[np.ndarray, np.ndarray] | None = None

    def __repr__(self) -> str:
        names = [BOX_NAMES[b] for b in self.boxes]
        return f"Yahtzee(joker={self.joker!r}, boxes={names!r})"

    @property
    def num_turns(self) -> int:
        return len(self.boxes)

    policy_names = (
        "score-at-once",
        "greedy-turn",
        "glenn-greedy",
        "glenn-heuristic",
        "glenn-better-heuristic",
    )
    policy_descriptions = {
        "score-at-once": "never rerolls; scores in the box that earns the most now",
        "greedy-turn": "plays each turn for the best box at its end, a box's worth on its own "
        "and the upper bonus weighed in",
        "glenn-greedy": "Glenn (2006) Greedy: plays each turn for the most points now, ties to "
        "the harder box",
        "glenn-heuristic": "Glenn (2006) Heuristic: plays each turn for its points plus the "
        "optimum's mean points of the open boxes and a normal estimate of the upper bonus",
        "glenn-better-heuristic": "Glenn (2006) Better Heuristic: plays each turn for its points "
        "plus the optima of the open upper and of the open lower boxes alone and a normal "
        "estimate of the upper bonus",
    }

    def named_policy(self, name: str):
        """A `Rule` over (n, 22) observations, one of `policy_names` (see the hand-written
        policies at the end of this module); None for another name."""
        return yahtzee_policy(self, name)

    # -- scoring, in batches -------------------------------------------------------------------

    def scoring(self, filled, dice) -> tuple[np.ndarray, np.ndarray]:
        """Legal boxes and the points written in them, for arrays of filled masks and dice
        indices (broadcast together).

        Returns:
            ``(legal, points)``, each of the broadcast shape plus a last axis of 13 boxes
            (bool, int64). Points are those of the box alone (no bonus); see `score_result`.
        """
        filled, dice = np.broadcast_arrays(np.asarray(filled, np.int64), np.asarray(dice))
        open_ = (filled[..., None] >> np.arange(NUM_BOXES) & 1) == 0
        joker = self.is_joker(filled, dice)
        face = np.maximum(YAHTZEE_FACE[dice], 0)
        own_upper_open = np.take_along_axis(open_, face[..., None], axis=-1)[..., 0]
        legal = open_
        in_full = joker
        if self.joker == "verhoeff":
            in_full = joker & ~own_upper_open
        elif self.joker == "forced":
            lower_open = (open_ & _IS_LOWER).any(axis=-1)
            allowed = np.where(
                own_upper_open[..., None],
                np.arange(NUM_BOXES) == face[..., None],
                np.where(lower_open[..., None], _IS_LOWER, _IS_UPPER),
            )
            legal = open_ & (allowed | ~joker[..., None])
        points = np.where(in_full[..., None], JOKER_POINTS[dice], BOX_POINTS[dice])
        return legal, points

    def is_joker(self, filled, dice):
        """Whether the dice (indices in `DICE`) are a joker: a Yahtzee rolled with the Yahtzee
        box in play and filled (arrays broadcast). Only then does the scoring depend on the
        filled boxes beyond which are open: otherwise the legal boxes are the open ones and
        the points those of `BOX_POINTS`."""
        filled_yahtzee = np.asarray(filled, dtype=np.int64) >> YAHTZEE & 1 == 1
        return IS_YAHTZEE[dice] & self.has_yahtzee_box & filled_yahtzee

    def scoring_one(self, filled: int, dice: int) -> tuple[int, tuple[int, ...]]:
        """`scoring` of one card and one roll, fast (plain Python but for a joker): the legal
        boxes as a bit mask (bit b for box b) and the points of each box."""
        if IS_YAHTZEE[dice] and self.has_yahtzee_box and filled >> YAHTZEE & 1:
            legal, points = self.scoring(filled, dice)
            return int((legal << np.arange(NUM_BOXES)).sum()), tuple(points.tolist())
        return FULL_CARD & ~filled, _BOX_POINT_ROWS[dice]

    def scoring_many(self, filled, dice) -> ManyScorings:
        """`scoring` of 1-D int64 arrays of cards and dice, fast (a `ManyScorings`): every row
        but the jokers has the open boxes legal and scores `BOX_POINTS` of its dice; the
        jokers' answers are `scoring`'s over every card and Yahtzee, computed once per model."""
        legal = np.take(_OPEN_BOXES, filled, axis=0)
        bits = FULL_CARD & ~filled
        if not self.has_yahtzee_box:
            return ManyScorings(legal, bits, _NO_ROWS, _NO_POINTS)
        jokers = np.flatnonzero(np.take(IS_YAHTZEE, dice) & (filled >> YAHTZEE & 1 == 1))
        if not len(jokers):
            return ManyScorings(legal, bits, jokers, _NO_POINTS)
        if self._joker_answers is None:
            cards = np.arange(FULL_CARD + 1)
            self._joker_answers = self.scoring(cards[None, :], YAHTZEE_DICE[:, None])
        joker_legal, joker_points = self._joker_answers
        face, card = np.take(YAHTZEE_FACE, dice[jokers]), filled[jokers]
        legal[jokers] = joker_legal[face, card]
        bits[jokers] = (legal[jokers] << np.arange(NUM_BOXES)).sum(axis=1)
        return ManyScorings(legal, bits, jokers, joker_points[face, card])

    @staticmethod
    def score_result(upper, yahtzee50, box, points, yahtzee_roll):
        """The reward of scoring `points` in `box` and the next upper total and Yahtzee flag
        (arrays broadcast, or plain Python numbers and bools for one scoring; the filled mask
        gains the box's bit).

        Returns:
            ``(reward, next_upper, next_yahtzee50)``: the reward is the points plus the upper
            bonus if this scoring brings the upper total to 63, plus the Yahtzee bonus if the
            dice are a Yahtzee and the Yahtzee box holds 50.
        """
        # Arithmetic on bools rather than np.where: the same lines serve arrays and scalars.
        upper_points = points * (box < 6)
        reached = upper + upper_points
        upper_bonus = UPPER_BONUS * ((upper < UPPER_TARGET) & (reached >= UPPER_TARGET))
        yahtzee_bonus = YAHTZEE_BONUS * (yahtzee_roll & yahtzee50)
        next_flag = yahtzee50 | ((box == YAHTZEE) & (points == 50))
        reward = points + upper_bonus + yahtzee_bonus
        next_upper = reached - (reached > UPPER_TARGET) * (reached - UPPER_TARGET)
        return reward, next_upper, next_flag

    # -- the forbidden-action fallback -----------------------------------------------------------

    @staticmethod
    def played_action(dice: int, rolls_left: int, legal_boxes: int, action: int) -> int:
        """The action (0..44: rerolls by bit mask, then 32 + box) that an in-space action plays.

        A legal action plays itself; a reroll of some dice that the mask forbids only because
        an equal multiset is kept by a lower-numbered reroll plays as that legal twin; any
        other forbidden action (rerolling nothing, a reroll with no rolls left, a box not
        among `legal_boxes`, a bit mask) scores the dice in the first legal box in box order.
        """
        if action < 32:
            if action and rolls_left:
                return _REROLL_TWIN_ROWS[dice][action]
        elif legal_boxes >> (action - 32) & 1:
            return action
        return 32 + (legal_boxes & -legal_boxes).bit_length() - 1

    @staticmethod
    def played_actions(dice, rolls_left, legal_boxes, actions) -> np.ndarray:
        """`played_action` for 1-D int64 arrays of dice, rolls left, legal boxes (bit masks)
        and actions."""
        twin = np.take(_REROLL_TWIN_FLAT, dice * 32 + (actions & 31))
        reroll = (actions < 32) & (twin > 0) & (rolls_left > 0)  # twin -1: rerolling nothing
        scores = (actions >= 32) & (legal_boxes >> np.maximum(actions - 32, 0) & 1 == 1)
        fallback = np.take(_FIRST_BOX, legal_boxes) + 32
        return np.where(reroll, twin, np.where(scores, actions, fallback))

    # -- one state at a time -------------------------------------------------------------------

    def check_state(self, state: TurnState | Sequence) -> TurnState:
        """`state` as a `TurnState` of this game, or ValueError."""
        try:
            filled, upper, flag = (int(v) for v in state)
        except (TypeError, ValueError):
            raise ValueError(f"state must be (filled, upper, yahtzee50), got {state!r}") from None
        if not (filled & self.absent == self.absent and 0 <= filled <= FULL_CARD):
            raise ValueError(
                f"filled must be a 13-bit mask including the absent boxes, got {filled}"
            )
        if not 0 <= upper <= UPPER_TARGET or flag not in (0, 1):
            raise ValueError(f"upper must be in 0..63 and yahtzee50 0 or 1, got {state!r}")
        if flag and not (self.has_yahtzee_box and filled >> YAHTZEE & 1):
            raise ValueError("yahtzee50 needs the Yahtzee box in play and filled")
        return TurnState(filled, upper, bool(flag))

    def check_play_state(self, state: PlayState | Sequence) -> PlayState:
        """`state` (filled, upper, yahtzee50, dice, rolls_left) as a `PlayState` of this game
        before its end, or ValueError."""
        try:
            *card, dice, rolls_left = (int(v) for v in state)
        except (TypeError, ValueError):
            raise ValueError(
                f"state must be (filled, upper, yahtzee50, dice, rolls_left), got {state!r}"
            ) from None
        turn = self.check_state(card)
        if self.is_over(turn):
            raise ValueError("state: the game is over there (every box is filled)")
        if not 0 <= dice < NUM_DICE_SETS or rolls_left not in (0, 1, 2):
            raise ValueError(
                f"dice must be an index in 0..{NUM_DICE_SETS - 1} and rolls_left 0, 1 or 2, "
                f"got {state!r}"
            )
        return PlayState(*turn, dice, rolls_left)

    def legal_boxes(self, state: TurnState, dice: int) -> tuple[int, ...]:
        """The boxes the dice (an index in `DICE`) may be scored in."""
        legal, _ = self.scoring(self.check_state(state).filled, dice)
        return tuple(int(b) for b in np.flatnonzero(legal))

    def score(self, state: TurnState, dice: int, box: int) -> tuple[int, TurnState]:
        """The reward and next turn-start state of scoring the dice in a legal box."""
        state = self.check_state(state)
        legal, points = self.scoring(state.filled, dice)
        if not 0 <= box < NUM_BOXES or not legal[box]:
            raise ValueError(f"box {box} is not legal here; legal boxes: {np.flatnonzero(legal)}")
        reward, upper, flag = self.score_result(
            state.upper, state.yahtzee50, box, points[box], IS_YAHTZEE[dice]
        )
        return int(reward), TurnState(state.filled | 1 << box, int(upper), bool(flag))

    def is_over(self, state: TurnState) -> bool:
        return state.filled == FULL_CARD

    # -- the tables form, for reduced games -------------------------------------------------------
    # The project's generic tables (`dice_envs.tables`) over the env's own decision states:
    # a state is a `PlayState` as a tuple of ints, its observation the env's, its actions the
    # env's 45 (a forbidden action plays as `played_action` says). Offered up to `TABLE_BOXES`
    # boxes in play, so that a reduced game can be solved and evaluated by the generic solvers,
    # the oracle of the structure-aware ones.

    num_actions = NUM_ACTIONS
    action_names = tuple(f"reroll {bits:05b}" for bits in range(32)) + tuple(
        f"score {name}" for name in BOX_NAMES
    )
    observation_nvec = OBSERVATION_NVEC
    state_bounds = (FULL_CARD + 1, UPPER_LEVELS, 2, NUM_DICE_SETS, 3)

    def check_tables(self) -> None:
        """ValueError unless this game is small enough for the tables form."""
        if len(self.boxes) > TABLE_BOXES:
            raise ValueError(
                f"boxes: the tables form (transitions) needs at most {TABLE_BOXES} boxes in "
                f"play, this game has {len(self.boxes)} (a turn alone has about 5 million "
                "outcome rows); the structure-aware solver and evaluator play it instead"
            )

    def initial_states(self) -> list[tuple[float, tuple[int, ...]]]:
        self.check_tables()
        return [
            (float(p), (self.absent, 0, 0, d, 2)) for d, p in enumerate(ROLL_PROBABILITIES.tolist())
        ]

    def legal_actions(self, state: Sequence[int]) -> tuple[int, ...]:
        filled, _, _, dice, rolls_left = state
        bits, _ = self.scoring_one(filled, dice)
        rerolls = np.flatnonzero(REROLL_LEGAL[dice]).tolist() if rolls_left else []
        return tuple(rerolls) + tuple(32 + b for b in range(NUM_BOXES) if bits >> b & 1)

    def transitions(self, state: Sequence[int], action: int) -> list[Transition]:
        """Every outcome of an env action (0..44) in a decision state, as the env plays it
        (one state at a time, in plain Python: the oracle of `batch_transitions`)."""
        self.check_tables()
        filled, upper, flag, dice, rolls_left = (int(v) for v in state)
        legal, points = self.scoring_one(filled, dice)
        played = self.played_action(dice, rolls_left, legal, int(action))
        if played < 32:
            keep = int(REROLL_KEEP[dice, played])
            return [
                Transition(float(p), (filled, upper, flag, d, rolls_left - 1), 0.0, False)
                for d, p in enumerate(KEEP_OUTCOMES[keep].tolist())
                if p > 0
            ]
        box = played - 32
        reward, upper, next_flag = self.score_result(
            upper, bool(flag), box, points[box], bool(IS_YAHTZEE[dice])
        )
        filled |= 1 << box
        flag = int(next_flag)
        if filled == FULL_CARD:
            return [Transition(1.0, (filled, upper, flag, dice, 0), float(reward), True)]
        return [
            Transition(float(p), (filled, upper, flag, d, 2), float(reward), False)
            for d, p in enumerate(ROLL_PROBABILITIES.tolist())
        ]

    def batch_transitions(self, states: np.ndarray, action):
        """(source row, probability, next state, reward, terminal) for `action` (one, or one
        per row) in each row of `states` ((n, 5) ints: filled, upper, yahtzee50, dice, rolls
        left): `transitions` for a batch (the fast table builder; a test holds them equal)."""
        filled, upper, flag, dice, rolls = (states[:, i] for i in range(5))
        n = len(states)
        scored = self.scoring_many(filled, dice)
        actions = np.broadcast_to(np.asarray(action, dtype=np.int64), (n,))
        played = self.played_actions(dice, rolls, scored.legal_bits, actions)
        box = np.maximum(played - 32, 0)
        points = BOX_POINTS[dice, box]
        if len(scored.jokers):
            points[scored.jokers] = scored.joker_points[
                np.arange(len(scored.jokers)), box[scored.jokers]
            ]
        score = played >= 32
        gain, next_upper, next_flag = self.score_result(
            upper, flag == 1, box, points, IS_YAHTZEE[dice]
        )
        next_filled = np.where(score, filled | 1 << box, filled)
        ends = next_filled == FULL_CARD
        keep = np.where(score, 0, REROLL_KEEP[dice, played & 31])
        counts = np.where(ends, 1, KEEP_ROLL_PTR[keep + 1] - KEEP_ROLL_PTR[keep])
        row = np.repeat(np.arange(n), counts)
        offset = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        position = KEEP_ROLL_PTR[keep][row] + offset
        final = ends[row]
        prob = np.where(final, 1.0, KEEP_ROLL_PROB[np.where(final, 0, position)])
        next_dice = np.where(final, dice[row], KEEP_ROLL_DICE[np.where(final, 0, position)])
        next_rolls = np.where(score, np.where(ends, 0, 2), rolls - 1)[row]
        nexts = np.column_stack(
            (
                next_filled[row],
                np.where(score, next_upper, upper)[row],
                np.where(score, next_flag, flag == 1)[row].astype(np.int64),
                next_dice,
                next_rolls,
            )
        )
        reward = np.where(score, gain, 0)[row].astype(float)
        return row, prob, nexts, reward, final

    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        """(n, 45) the legal actions of each row of `states` (as `batch_transitions`)."""
        scored = self.scoring_many(states[:, 0], states[:, 3])
        rerolls = REROLL_LEGAL[states[:, 3]] & (states[:, 4:5] > 0)
        return np.concatenate((rerolls, scored.legal), axis=1)

    def batch_observation(self, states: np.ndarray) -> np.ndarray:
        """(n, 22) the env's observation of each row of `states`."""
        return encode_observations(*(states[:, i] for i in range(5)))

    def observation(self, state: Sequence[int]) -> tuple[int, ...]:
        """The env's 22-entry observation of a decision state (or of the final one)."""
        return tuple(encode_observations(*([v] for v in state))[0].tolist())

    def validate_state(self, state: Sequence[int]) -> tuple[int, ...]:
        """`state` as the tables' tuple (filled, upper, yahtzee50, dice, rolls_left), or
        ValueError."""
        play = self.check_play_state(state)
        return (play.filled, play.upper, int(play.yahtzee50), play.dice, play.rolls_left)

    def render_text(self, state: Sequence[int]) -> str:
        filled, upper, flag, dice, rolls_left = state
        faces = "".join(str(f) for f in DICE_FACES[dice])
        open_ = ",".join(BOX_NAMES[b] for b in range(NUM_BOXES) if not filled >> b & 1)
        return f"dice {faces}, {rolls_left} rolls left, open: {open_ or '-'}, upper {upper}" + (
            ", yahtzee 50" if flag else ""
        )

    # -- the turn-start states -------------------------------------------------------------------

    def reachable_uppers(self, filled: int) -> np.ndarray:
        """(64,) bool: the capped upper totals reachable with these boxes filled."""
        reach = np.zeros(UPPER_LEVELS, dtype=bool)
        reach[0] = True
        for face in range(6):
            if filled >> face & 1 and face in self.boxes:
                grown = np.zeros_like(reach)
                for count in range(NUM_DICE + 1):
                    shifted = np.flatnonzero(reach) + (face + 1) * count
                    grown[np.minimum(shifted, UPPER_TARGET)] = True
                reach = grown
        return reach

    def turn_start_states(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every reachable turn-start state before the end, as arrays ``(filled, upper,
        yahtzee50)``, ordered by the number of boxes filled (then by mask, flag, upper): a turn
        leads only to later states (or to the end)."""
        present = FULL_CARD & ~self.absent
        masks = [self.absent | sub for sub in range(present + 1) if sub & present == sub]
        masks = [m for m in masks if m != FULL_CARD]
        masks.sort(key=lambda m: (bin(m).count("1"), m))
        upper_reach: dict[int, np.ndarray] = {}
        parts = []
        for mask in masks:
            key = mask & 0b111111
            if key not in upper_reach:
                upper_reach[key] = np.flatnonzero(self.reachable_uppers(mask))
            uppers = upper_reach[key]
            flags = (0, 1) if self.has_yahtzee_box and mask >> YAHTZEE & 1 else (0,)
            for flag in flags:
                parts.append((np.full(len(uppers), mask), uppers, np.full(len(uppers), flag)))
        filled, upper, flag = (np.concatenate(p) for p in zip(*parts, strict=True))
        return filled.astype(np.int64), upper.astype(np.int64), flag.astype(bool)


# Hand-written Yahtzee policies, asked in batches over the env's (n, 22) observations.
#
# - ``"score-at-once"``: never reroll; score the dice showing in the legal box that earns the
#   most points now (box points plus any bonus this scoring earns), ties to the first box in
#   box order.
# - ``"greedy-turn"`` (this project's design): plays each turn as well as possible for a
#   one-turn goal, the best box utility at the end of the turn, where a box's utility is the
#   reward of scoring it now, minus what the box is worth on its own (so that dice are not
#   wasted in a box that usually earns more), plus credit for upper boxes scored above three
#   dice of their face while the upper bonus is still open (three of each face reach 63).
#   The turn is solved exactly for that goal (keep, roll, keep, roll, score), once per score
#   card in a batch: observations of one card share the work, so asking for every decision
#   state of a turn costs about one turn's solve.
#
# - J. Glenn's strategies, from his report (CS-TR-0002, 2006), section 7 and Table 3: each
#   plays every turn exactly (keep, roll, keep, roll, score) for s(S, r, c) + E'(n(S, r, c)),
#   the points the scoring writes with any Yahtzee bonus but not the upper bonus, plus an
#   estimate E' of the future score of the turn-start state it leads to (his optimal strategy
#   with E' in place of the exact E, his section 5). Read here as follows:
#   - ``"glenn-greedy"`` (Table 3 "Greedy", 218.05): E' = 0, so the upper bonus is never
#     sought; ties between boxes "in favor of the more difficult categories": Yahtzee, Large
#     straight, Four of a kind, Full house, Small straight, Three of a kind, Sixes .. Ones,
#     Chance (`GREEDY_TIE_ORDER`; the report names only Four before Three of a kind).
#   - ``"glenn-heuristic"`` ("Heuristic", 240.67): E' is the sum of the optimum's expected
#     points in the open boxes ("the expected scores for each category when following the
#     optimal strategy as computed by Tom Verhoeff": `OPTIMAL_BOX_MEANS`, here exact, from
#     `baselines.yahtzee_evaluation.optimal_box_moments` under Verhoeff's rules; the Yahtzee
#     box's mean without the Yahtzee bonuses, counted apart as the upper bonus), plus the expected
#     upper bonus, 35 times the chance that a normal variable with the open upper boxes'
#     summed means and summed variances (`OPTIMAL_BOX_VARIANCES`) reaches what 63 still needs
#     (no continuity correction; 35 once the total has reached 63), plus an expected Yahtzee
#     bonus of 0.
#   - ``"glenn-better-heuristic"`` ("Better Heuristic", 244.87): E' is the optimum of the
#     game of the open upper boxes alone without the bonus, plus that of the open lower boxes
#     alone (both plainly scored: no bonus, no joker; `plain_game_values`), plus the upper
#     and Yahtzee bonuses estimated as for ``"glenn-heuristic"``.
#   What the report leaves open, chosen here: the tables are the same under every joker rule
#   (Verhoeff's, as published); boxes of equal worth go to the first in box order (greedy:
#   `GREEDY_TIE_ORDER`); keeps of equal worth to the lowest-numbered reroll (`turn_rerolls`);
#   scoring now and rerolling of equal worth to scoring now.
#
#   Exact values (`baselines.evaluate`), Verhoeff's rules (`joker="verhoeff"`, where the
#   optimum is Glenn's 254.59) / `joker="forced"`, against Table 3:
#     glenn-greedy 218.7022 / 218.8376 (published 218.05), glenn-heuristic 242.2037 /
#     242.2187 (240.67), glenn-better-heuristic 248.9315 / 248.9396 (244.87).
#   None reproduces the published digits, and no reading tried does (each evaluated exactly,
#   Verhoeff's rules; docs.tools.yahtzee_glenn scores them all): greedy's tie order, which the
#   report gives only by one example, alone moves it from 217.30 (box order, Ones first) to
#   219.59 (the lower boxes, then Ones .. Sixes, then Chance), a span that holds 218.05, so
#   the published value pins no order; keep ties could move it further. The heuristics score
#   above Table 3 under every literal reading (the bonus estimate's mean from the upper
#   table, the lower table with the Yahtzee bonus and joker: within 0.04 of ours); readings
#   that lose points do not land on both numbers at once (the summed variance taken as the
#   standard deviation: 239.10 and 243.62; the standard deviations summed: 241.19 and 247.69;
#   the heuristic's Yahtzee mean with the bonuses: 237.54). The report's per-box table came
#   from Verhoeff's trivia page (not at hand; ours is recomputed to the digit of his
#   254.5896) and its evaluation code is not published, so the gap (1.5 and 4.1 points) is
#   left unexplained.
#
# All use the model's own scoring (`Yahtzee.scoring_many`, `Yahtzee.score_result`) and its
# inside-turn tables (`KEEP_OUTCOMES`, `REROLL_KEEP`, `REROLL_LEGAL`).
GLENN_NAMES = ("glenn-greedy", "glenn-heuristic", "glenn-better-heuristic")
POLICY_NAMES = ("score-at-once", "greedy-turn", *GLENN_NAMES)
# The optimum's points per box under Verhoeff's rules (mean 254.5896 with the expected upper
# bonus 23.8413 and Yahtzee bonuses 9.5801): `baselines.yahtzee_evaluation.optimal_box_moments`
# gives them (a test holds these to it).
OPTIMAL_BOX_MEANS = np.array(
    [1.8812839845, 5.2824522776, 8.5692894998, 12.1582851728, 15.6873835716, 19.1885563375,
     21.661461186, 13.0977077813, 22.5918008225, 29.4612108524, 32.7113231265, 16.86827633,
     22.0091396343]
)  # fmt: skip
OPTIMAL_BOX_VARIANCES = np.array(
    [1.4785532447, 3.9916169403, 7.3641434297, 10.8039424896, 14.8300398182, 21.5585024617,
     31.5904402614, 122.6288403528, 54.4055561587, 15.8733806828, 238.4222643729,
     558.8750701553, 6.4477352085]
)  # fmt: skip
GREEDY_TIE_ORDER = (
    YAHTZEE, LARGE_STRAIGHT, FOUR_KIND, FULL_HOUSE, SMALL_STRAIGHT, THREE_KIND, 5, 4, 3, 2, 1, 0,
    CHANCE,
)  # fmt: skip
CARDS_AT_ONCE = 1024  # score cards solved together by greedy-turn (about 30 MB of work arrays)
_BOXES = np.arange(NUM_BOXES)
_PAR_COUNT = 3  # dice of each face in the upper boxes that make exactly 63
_OPEN = (np.arange(FULL_CARD + 1)[:, None] >> _BOXES & 1) == 0
_REROLL_KEEP_FLAT = REROLL_KEEP.ravel()
_ALL_DICE = np.arange(NUM_DICE_SETS)
_REROLL_PENALTY = np.where(REROLL_LEGAL, 0.0, -np.inf)  # (252, 32): -inf on illegal rerolls


def box_rewards(model: Yahtzee, filled, upper, yahtzee50, dice) -> np.ndarray:
    """(n, 13): the reward of scoring each row's dice in each box now (points plus the upper
    and Yahtzee bonuses this scoring earns), -inf where the box is not legal (1-D int64 arrays
    of length n)."""
    scored = model.scoring_many(filled, dice)
    points = BOX_POINTS[dice]
    if len(scored.jokers):
        points = points.copy()
        points[scored.jokers] = scored.joker_points
    reward, _, _ = model.score_result(
        upper[:, None], yahtzee50[:, None] == 1, _BOXES, points, IS_YAHTZEE[dice][:, None]
    )
    return np.where(scored.legal, reward, -np.inf)


def score_at_once(model: Yahtzee) -> Rule:
    """Never reroll; score in the legal box with the largest reward now, ties to the first."""

    def batch(observations: np.ndarray) -> np.ndarray:
        filled, upper, flag, dice, _ = decode_observations(observations)
        return 32 + np.argmax(box_rewards(model, filled, upper, flag, dice), axis=1)

    return Rule.from_batch(batch, "score-at-once")


def best_rerolls(reroll_values: np.ndarray, dice) -> tuple[np.ndarray, np.ndarray]:
    """For the values (..., 32) of the keep each reroll bit mask leaves (``REROLL_KEEP`` of
    `dice`, broadcast against the leading axes): the legal reroll (1..31) with the best
    value, the lowest-numbered among equals, and its value."""
    values = np.where(REROLL_LEGAL[dice], reroll_values, -np.inf)
    action = np.argmax(values, axis=-1)
    return action, np.take_along_axis(values, action[..., None], axis=-1)[..., 0]


def turn_keep_values(final_values: np.ndarray) -> list[np.ndarray]:
    """Given the worth (252, B) of ending the turn with each dice multiset, the worth (462, B)
    of each keep with 1 and with 2 rerolls left: ``[K_1, K_2]`` (K_r: keep, roll, then r - 1
    more rerolls allowed, each taken only when it is worth more than stopping). Dice and keeps
    run along the first axis, so that gathering them copies whole rows."""
    keeps = []
    stop_values = final_values
    for _ in range(2):
        keep_values = KEEP_OUTCOMES @ stop_values
        keeps.append(keep_values)
        reroll = keep_values.take(_REROLL_KEEP_FLAT, axis=0).reshape(NUM_DICE_SETS, 32, -1)
        reroll += _REROLL_PENALTY[:, :, None]
        stop_values = np.maximum(final_values, reroll.max(axis=1))
    return keeps


def turn_rerolls(final_values: np.ndarray) -> list[np.ndarray]:
    """Given the worth (252, B) of ending the turn with each dice multiset: with 1, then with
    2 rolls left, the best legal reroll (1..31, the lowest-numbered among equals) of each dice
    multiset and its worth, ``[R_1, W_1, R_2, W_2]`` (252, B each; `turn_keep_values`)."""
    plans = []
    stop_values = final_values
    for _ in range(2):
        keep_values = KEEP_OUTCOMES @ stop_values
        reroll = keep_values.take(_REROLL_KEEP_FLAT, axis=0).reshape(NUM_DICE_SETS, 32, -1)
        reroll += _REROLL_PENALTY[:, :, None]
        best = reroll.argmax(axis=1)
        worth = np.take_along_axis(reroll, best[:, None, :], axis=1)[:, 0, :]
        plans += [best, worth]
        stop_values = np.maximum(final_values, worth)
    return plans


def turn_values(final_values: np.ndarray) -> np.ndarray:
    """(B,): the worth of a whole turn (three rolls) played for the worth (252, B) of ending it
    with each dice multiset."""
    _, keep_2 = turn_keep_values(final_values)
    reroll = (keep_2[REROLL_KEEP] + _REROLL_PENALTY[:, :, None]).max(axis=1)
    return ROLL_PROBABILITIES @ np.maximum(final_values, reroll)


def single_box_values() -> np.ndarray:
    """(13,): the expected points of each box alone when a whole turn (three rolls) is played
    for it, from an empty card (no bonus, no joker)."""
    return turn_values(BOX_POINTS.astype(float))


class TurnPlan:
    """A policy that plays each turn exactly for a utility of how the turn ends: the
    subclass's `utilities` of scoring each dice multiset in each box, per score card. Asked
    in batches, the turn is solved once per score card of the batch. Boxes of equal utility:
    the first in `box_order` (box order unless a subclass says otherwise)."""

    box_order = _BOXES

    def utilities(self, filled, upper, yahtzee50) -> np.ndarray:
        """(C, 252, 13): for C score cards (arrays), each box's utility for each dice multiset
        (-inf where the box is not legal)."""
        raise NotImplementedError

    def card_plans(self, filled, upper, yahtzee50) -> tuple[np.ndarray, ...]:
        """Per card (arrays of C cards): the box to score each dice multiset in (C, 252), the
        utility of stopping with them (C, 252), then with 1 and with 2 rolls left the best
        reroll of each dice multiset and its worth (252, C each)."""
        utility = self.utilities(filled, upper, yahtzee50)[..., self.box_order]
        choice = np.argmax(utility, axis=2)
        stop = np.take_along_axis(utility, choice[..., None], axis=2)[..., 0]
        box = self.box_order[choice]
        stop[~np.isfinite(stop)] = 0.0  # a full card (a final observation): nothing to score
        return (box, stop, *turn_rerolls(np.ascontiguousarray(stop.T)))

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        filled, upper, flag, dice, rolls = decode_observations(observations)
        actions = np.empty(len(dice), dtype=np.int64)
        keys, card_of = np.unique(state_index(filled, upper, flag), return_inverse=True)
        card_of = card_of.reshape(-1)
        first = np.zeros(len(keys), dtype=np.int64)
        first[card_of[::-1]] = np.arange(len(dice))[::-1]  # a row showing each card
        order = np.argsort(card_of, kind="stable")
        starts = np.append(np.arange(0, len(keys), CARDS_AT_ONCE), len(keys))
        bounds = np.searchsorted(card_of[order], starts)
        for part, lo in enumerate(range(0, len(keys), CARDS_AT_ONCE)):
            hi = min(lo + CARDS_AT_ONCE, len(keys))
            rows = order[bounds[part] : bounds[part + 1]]
            sample = first[lo:hi]
            plans = self.card_plans(filled[sample], upper[sample], flag[sample])
            actions[rows] = self._choose(plans, card_of[rows] - lo, dice[rows], rolls[rows])
        return actions

    @staticmethod
    def _choose(plans, card, dice, rolls) -> np.ndarray:
        box, stop, *rerolls = plans
        action = 32 + box[card, dice]
        stay = stop[card, dice]
        for left in (1, 2):
            rows = np.flatnonzero(rolls == left)
            reroll, worth = (table[dice[rows], card[rows]] for table in rerolls[2 * left - 2 :][:2])
            better = worth > stay[rows] + 1e-9
            action[rows[better]] = reroll[better]
        return action


class GreedyTurn(TurnPlan):
    """The ``"greedy-turn"`` policy of a Yahtzee model (see the comment above the policies).

    Args:
        model: the game.
        box_cost: weight of what a box is worth on its own (`single_box_values`), taken off
            its utility.
        par_credit: credit per point scored in an upper box above three dice of its face
            (debit below), while the upper total is below 63.

    The defaults come from simulation with the native vector env (8,192 games each, forced
    joker rule): mean final score 238.2 (standard error 0.6) with `par_credit` 0.5, 236.7
    with 1.0, 217.9 (4,096 games) with neither the box cost nor the credit.
    """

    def __init__(self, model: Yahtzee, box_cost: float = 1.0, par_credit: float = 0.5) -> None:
        self.model = model
        self.cost = box_cost * single_box_values()
        self.par_credit = float(par_credit)
        # The utilities of the plain (not joker) scorings depend on the card only through the
        # open boxes, the upper total and the Yahtzee flag: tabled once over the last two.
        upper = np.arange(UPPER_LEVELS)[:, None, None, None]
        flag = np.array([False, True])[None, :, None, None]
        self._plain = self._shaped(upper, flag, BOX_POINTS, IS_YAHTZEE[:, None])

    def _shaped(self, upper, yahtzee50, points, yahtzee_roll) -> np.ndarray:
        """Utilities of scoring `points` in each box (the last axis), broadcast."""
        reward, _, _ = self.model.score_result(upper, yahtzee50, _BOXES, points, yahtzee_roll)
        par = self.par_credit * (points - _PAR_COUNT * (_BOXES + 1)) * (_BOXES < 6)
        return reward - self.cost + par * (upper < UPPER_TARGET)

    def utilities(self, filled, upper, yahtzee50) -> np.ndarray:
        """(C, 252, 13): for C score cards (arrays), each box's utility for each dice multiset
        (-inf where the box is not legal)."""
        utility = np.where(_OPEN[filled][:, None, :], self._plain[upper, yahtzee50], -np.inf)
        jokers = np.flatnonzero(self.model.is_joker(filled, YAHTZEE_DICE[0]))
        if len(jokers):  # Yahtzees with the Yahtzee box filled: the joker rules
            legal, points = self.model.scoring(filled[jokers, None], YAHTZEE_DICE[None, :])
            card = (upper[jokers, None, None], yahtzee50[jokers, None, None] == 1)
            shaped = self._shaped(*card, points, True)
            utility[np.ix_(jokers, YAHTZEE_DICE)] = np.where(legal, shaped, -np.inf)
        return utility


class EstimatePlan(TurnPlan):
    """Each turn played exactly for the points it scores plus an estimate of the future score
    of the turn-start state it leads to (Glenn's strategies, see the comment above them).

    Args:
        model: the game.
        upper_estimate: (64, 64): the estimate's part read from the upper boxes, by the upper
            total (0..63) and the filled upper boxes (bit b for box b).
        lower_estimate: (128,): its part read from the filled lower boxes (bit b - 6 for box
            b); or (128, 2): by those and the Yahtzee flag after the scoring (50 in the
            Yahtzee box).
        box_order: boxes of equal worth go to the first in this order (default box order).
        count_yahtzee_bonus: whether the points of a scoring include its Yahtzee bonus
            (Glenn's s(S, r, c) does; False reads the report otherwise).
    """

    def __init__(
        self,
        model: Yahtzee,
        upper_estimate,
        lower_estimate,
        box_order: Sequence[int] = _BOXES,
        *,
        count_yahtzee_bonus: bool = True,
    ) -> None:
        self.model = model
        self.box_order = np.array(box_order, dtype=np.int64)
        self.upper_estimate = np.asarray(upper_estimate, dtype=float)
        self.lower_estimate = np.asarray(lower_estimate, dtype=float)
        if self.lower_estimate.shape not in ((128,), (128, 2)):
            shape = self.lower_estimate.shape
            raise ValueError(f"lower_estimate must have shape (128,) or (128, 2); got {shape}")
        self.count_yahtzee_bonus = bool(count_yahtzee_bonus)
        upper = np.arange(UPPER_LEVELS)[:, None, None, None]
        flag = np.array([False, True])[None, :, None, None]
        scored = self._scored(upper, flag, BOX_POINTS, IS_YAHTZEE[:, None])
        shape = (UPPER_LEVELS, 2, NUM_DICE_SETS, NUM_BOXES)
        self._now, self._next_upper, self._next_flag = (
            np.broadcast_to(a, shape).copy() for a in scored
        )

    def _scored(self, upper, yahtzee50, points, yahtzee_roll) -> tuple[np.ndarray, ...]:
        """Glenn's s(S, r, c), the points of scoring `points` in each box (the last axis) with
        any Yahtzee bonus (unless not `count_yahtzee_bonus`) but not the upper bonus (the
        estimate counts it), the upper total and the Yahtzee flag after it (broadcast)."""
        reward, next_upper, next_flag = self.model.score_result(
            upper, yahtzee50, _BOXES, points, yahtzee_roll
        )
        reward = reward - UPPER_BONUS * ((upper < UPPER_TARGET) & (next_upper >= UPPER_TARGET))
        if not self.count_yahtzee_bonus:
            reward = reward - YAHTZEE_BONUS * (yahtzee_roll & yahtzee50)
        return reward, next_upper, next_flag

    def utilities(self, filled, upper, yahtzee50) -> np.ndarray:
        now, next_upper = self._now[upper, yahtzee50], self._next_upper[upper, yahtzee50]
        legal = np.broadcast_to(_OPEN[filled][:, None, :], now.shape)
        by_flag = self.lower_estimate.ndim == 2
        next_flag = self._next_flag[upper, yahtzee50] if by_flag else None
        jokers = np.flatnonzero(self.model.is_joker(filled, YAHTZEE_DICE[0]))
        if len(jokers):  # Yahtzees with the Yahtzee box filled: the joker rules
            joker_legal, points = self.model.scoring(filled[jokers, None], YAHTZEE_DICE[None, :])
            card = (upper[jokers, None, None], yahtzee50[jokers, None, None] == 1)
            rows = np.ix_(jokers, YAHTZEE_DICE)
            legal = legal.copy()
            legal[rows] = joker_legal
            now[rows], next_upper[rows], flag = self._scored(*card, points, True)
            if by_flag:
                next_flag[rows] = flag
        after = filled[:, None] | _BOX_BITS  # (C, 13): the filled boxes after each box
        estimate = self.upper_estimate[next_upper, (after & 63)[:, None, :]]
        if by_flag:
            estimate += self.lower_estimate[(after >> 6)[:, None, :], next_flag.astype(np.int64)]
        else:
            estimate += self.lower_estimate[after >> 6][:, None, :]
        return np.where(legal, now + estimate, -np.inf)


def plain_game_values(boxes: Sequence[int]) -> np.ndarray:
    """(2**k,): the optimal expected points of a game of the k `boxes` alone, scored plainly
    (`BOX_POINTS`: no bonus, no joker), from each set of them filled (bit i: ``boxes[i]``)."""
    size = 1 << len(boxes)
    values = np.zeros(size)
    masks = np.arange(size)
    filled_count = np.array([bin(m).count("1") for m in range(size)])
    for count in range(len(boxes) - 1, -1, -1):
        cards = masks[filled_count == count]
        final = np.full((NUM_DICE_SETS, len(cards)), -np.inf)
        for i, box in enumerate(boxes):
            scored = BOX_POINTS[:, box, None] + values[cards | 1 << i]
            final = np.where(cards >> i & 1 == 0, np.maximum(final, scored), final)
        values[cards] = turn_values(final)
    return values


def upper_bonus_estimates(mean=None, spread=None) -> np.ndarray:
    """(64, 64): Glenn's estimate of the upper bonus by the upper total and the filled upper
    boxes: 35 times the chance that a normal variable with the mean and variance of the open
    upper boxes' points under the optimum (`OPTIMAL_BOX_MEANS`, `OPTIMAL_BOX_VARIANCES`, the
    variances added as if independent) makes up what 63 still needs; 35 once it is reached.

    Args:
        mean: (64,): the normal's mean by the filled upper boxes, in place of the optimum's
            means summed over the open ones (other readings of the report).
        spread: (64,): likewise its standard deviation, in place of the square root of the
            summed variances.
    """
    open_ = (np.arange(64)[:, None] >> np.arange(6) & 1) == 0
    mean = open_ @ OPTIMAL_BOX_MEANS[:6] if mean is None else np.asarray(mean, dtype=float)
    if spread is None:
        spread = np.sqrt(open_ @ OPTIMAL_BOX_VARIANCES[:6])
    spread = np.asarray(spread, dtype=float)
    if mean.shape != (64,) or spread.shape != (64,):
        raise ValueError(f"mean and spread must have shape (64,); got {mean.shape}, {spread.shape}")
    need = UPPER_TARGET - np.arange(UPPER_LEVELS)[:, None]
    z = (need - mean) / np.where(spread > 0, spread * math.sqrt(2.0), 1.0)
    chance = np.where(spread > 0, 0.5 * np.vectorize(math.erfc)(z), need <= mean)
    return UPPER_BONUS * np.where(need <= 0, 1.0, chance)


def glenn_policy(model: Yahtzee, name: str) -> EstimatePlan:
    """Glenn's strategy `name` (one of `GLENN_NAMES`) of `model`: its estimate E'(S) as the
    upper and lower tables of `EstimatePlan` (see the comment above the policies)."""
    if name == "glenn-greedy":
        return EstimatePlan(model, np.zeros((UPPER_LEVELS, 64)), np.zeros(128), GREEDY_TIE_ORDER)
    if name == "glenn-heuristic":
        open_upper = (np.arange(64)[:, None] >> np.arange(6) & 1) == 0
        open_lower = (np.arange(128)[:, None] >> np.arange(7) & 1) == 0
        upper = open_upper @ OPTIMAL_BOX_MEANS[:6]
        lower = open_lower @ OPTIMAL_BOX_MEANS[6:]
    else:
        upper, lower = plain_game_values(UPPER_BOXES), plain_game_values(LOWER_BOXES)
    return EstimatePlan(model, upper[None, :] + upper_bonus_estimates(), lower)


def yahtzee_policy(model: Yahtzee, name: str) -> Rule | None:
    """The named policy of `model` (one of `POLICY_NAMES`), None for another name."""
    if name == "score-at-once":
        return score_at_once(model)
    if name == "greedy-turn":
        return Rule.from_batch(GreedyTurn(model), "greedy-turn")
    if name in GLENN_NAMES:
        return Rule.from_batch(glenn_policy(model, name), name)
    return None
