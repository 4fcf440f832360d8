"""Tijms's three optimal-stopping games: a die rolled at most k times, red and black cards, and
the Chow–Robbins coin game.

Source: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific Mathematics
Newsletter (2012): the recursions, the published values and the stopping thresholds. Each is a
one-player game in which the only choice is when to stop.
"""

from __future__ import annotations

import numpy as np

from dice_envs.games.base import TableSize, Transition, check_int, check_size, uniform_die
from dice_envs.games.rule import Rule, parse_threshold

STOP, GO_ON = 0, 1


class DieStopping:
    """Roll a die at most `rolls` times; stop after any roll and be paid its face.

    ## Description
    A die with `sides` faces is rolled; after each roll the player either stops, and is paid
    the face showing, or rolls again. The last permitted roll is paid whatever it shows. With a
    fair d6 and five rolls the optimal expected payoff is 5.129 (Tijms, 2012): stop on
    a 5 or 6 while more than two rolls remain, on a 5 or 6 with two left, on 4 or more with one
    left. `baselines.solve` gives the exact rule for any arguments.

    ## Model
    State: (rolls left, face showing), face 0 before the first roll. Actions: 0 stop (paid the
    face; only after a roll), 1 roll (a new face; the game ends paying it when it was the last
    permitted roll).

    ## Action Space
    `Discrete(2)`: 0 stop, 1 roll. Stop is illegal before the first roll (masked in
    `info["action_mask"]`; taken anyway it pays 0 and ends the game).

    ## Observation Space
    `MultiDiscrete([rolls + 1, sides + 1])`: (rolls still permitted, face showing; 0 before the
    first roll).

    ## Rewards
    The face when the player stops, or the face of the last permitted roll; 0 otherwise.

    ## Starting State
    (rolls, 0): no roll yet.

    ## Episode End
    Termination on a stop or after the last permitted roll. No truncation.

    ## Arguments
    - `rolls=5`: the most rolls permitted; an integer >= 1.
    - `sides=6`: faces of the fair die, 1..sides; an integer >= 2.
    - `render_mode=None`: `"ansi"` (one line of text), `"rgb_array"` (the die) or `"human"` (that
      picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    num_actions = 2
    action_names = ("stop", "roll")
    observation_names = ("rolls left", "face showing")
    picture_size = (1, 2)

    def __init__(self, rolls: int = 5, sides: int = 6) -> None:
        self.rolls = check_int("rolls", rolls, 1)
        self.sides = check_int("sides", sides, 2)
        check_size(
            {"rolls": self.rolls, "sides": self.sides},
            self.rolls * (self.sides + 1) * (self.sides + 1),
            "the tables' outcome rows (rolls x (sides + 1) faces x (sides + 1) outcomes)",
        )
        self.face_probs = uniform_die(self.sides)
        self.observation_nvec = (self.rolls + 1, self.sides + 1)

    def table_size(self) -> TableSize:
        """A state per (roll, face showing), a stop row and a roll of `sides` rows each."""
        states = self.rolls * self.sides
        return TableSize(states, states * (self.sides + 1), "rolls")

    def __repr__(self) -> str:
        return f"DieStopping(rolls={self.rolls}, sides={self.sides})"

    def initial_states(self) -> list[tuple[float, tuple[int, int]]]:
        return [(1.0, (self.rolls, 0))]

    def legal_actions(self, state: tuple[int, int]) -> tuple[int, ...]:
        return (GO_ON,) if state[1] == 0 else (STOP, GO_ON)

    def transitions(self, state: tuple[int, int], action: int) -> list[Transition]:
        rolls_left, face = state
        if action == STOP:
            return [Transition(1.0, state, float(face), True)]
        last = rolls_left == 1
        return [
            Transition(prob, (rolls_left - 1, new), float(new) if last else 0.0, last)
            for new, prob in enumerate(self.face_probs, start=1)
        ]

    def observation(self, state: tuple[int, int]) -> tuple[int, int]:
        return state

    def validate_state(self, state: object) -> tuple[int, int]:
        try:
            rolls_left, face = state  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ValueError(f"state must be (rolls_left, face), got {state!r}") from None
        rolls_left = check_int("rolls_left", rolls_left, 1, self.rolls)
        face = check_int("face", face, 0, self.sides)
        if face == 0 and rolls_left != self.rolls:
            raise ValueError(f"face 0 (no roll yet) needs rolls_left={self.rolls}")
        if face > 0 and rolls_left == self.rolls:
            raise ValueError(f"a face shows only after a roll: rolls_left < {self.rolls}")
        return rolls_left, face

    def render_text(self, state: tuple[int, int]) -> str:
        rolls_left, face = state
        shown = f"die shows {face}" if face else "no roll yet"
        return f"{shown}, {rolls_left} of {self.rolls} rolls left"

    policy_names = ("stop-at-K",)
    policy_descriptions = {"stop-at-K": "stops once the face shows K or more"}

    def named_policy(self, name: str) -> Rule | None:
        """stop-at-K: stop once the face shows K or more (stop-at-1 takes the first roll)."""
        limit = parse_threshold("stop-at-{K}", name)
        if limit is None:
            return None

        def batch(observations: np.ndarray) -> np.ndarray:
            face = np.asarray(observations).reshape(-1, 2)[:, 1]
            return np.where(face >= max(limit, 1), STOP, GO_ON)

        return Rule.from_batch(batch, name)

    def picture(self, state: tuple[int, int], context: dict):
        rolls_left, face = state
        lines = [f"ROLLS LEFT {rolls_left}", f"PAID {context['episode_return']:g}"]
        return ([(face, False)] if face else []), lines


# Tijms's thresholds for 26 red and 26 black cards: stop once red minus black drawn is beta_k
# or more after the k-th draw, k = 1..51, as the converted text of "Stochastic games and
# dynamic programming" (Tijms, 2012) reads.
TIJMS_RED_BLACK_THRESHOLDS = (
    [2, 3, 4, 5, 6, 5, 6, 7, 6]
    + [5 if k % 2 == 0 else 4 for k in range(10, 24)]
    + [3 if k % 2 == 0 else 4 for k in range(24, 34)]
    + [3 if k % 2 == 0 else 2 for k in range(34, 44)]
    + [1, 2, 1, 2, 1, 0, 1, 0]
)


class RedBlackCards:
    """Draw cards from a shuffled deck of red and black cards; stop whenever you like.

    ## Description
    A deck of `red` red and `black` black cards is shuffled and drawn one card at a time. The
    player may stop before any draw; the payoff is the number of red cards drawn minus the
    number of black cards drawn. With 26 and 26 the optimal expected payoff is 2.6245
    (Tijms, 2012), stopping once red minus black reaches a threshold that depends on the
    cards drawn. Draws are without replacement: with r red and b black cards left the next card
    is red with probability r / (r + b).

    ## Model
    State: (red left, black left). Actions: 0 stop, 1 draw. The reward is paid card by card
    (+1 for a red, -1 for a black), so the return is red drawn minus black drawn, as in the
    source; the game ends by a stop or when the deck is empty.

    ## Action Space
    `Discrete(2)`: 0 stop, 1 draw. Both are always legal.

    ## Observation Space
    `MultiDiscrete([red + 1, black + 1])`: (red cards left, black cards left).

    ## Rewards
    +1 for each red card drawn, -1 for each black card; 0 for stopping.

    ## Starting State
    (red, black): the full deck.

    ## Episode End
    Termination on a stop or when the last card is drawn. No truncation.

    ## Arguments
    - `red=26`: red cards in the deck; an integer >= 0.
    - `black=26`: black cards in the deck; an integer >= 0; red + black >= 1.
    - `render_mode=None`: `"ansi"` (one line of text), `"rgb_array"` (the counts) or `"human"` (that
      picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    num_actions = 2
    action_names = ("stop", "draw")
    observation_names = ("red cards left", "black cards left")
    picture_size = (0, 3)

    def __init__(self, red: int = 26, black: int = 26) -> None:
        self.red = check_int("red", red, 0)
        self.black = check_int("black", black, 0)
        if self.red + self.black < 1:
            raise ValueError("red + black must be >= 1: the deck can not be empty")
        check_size(
            {"red": self.red, "black": self.black},
            (self.red + 1) * (self.black + 1) * 4,
            "the tables' outcome rows ((red + 1) x (black + 1) decks x 2 actions x 2 cards)",
        )
        self.observation_nvec = (self.red + 1, self.black + 1)

    def table_size(self) -> TableSize:
        """A state per deck left, a stop row and a row per colour drawn."""
        states = (self.red + 1) * (self.black + 1)
        return TableSize(states, 3 * states, "red" if self.red >= self.black else "black")

    def __repr__(self) -> str:
        return f"RedBlackCards(red={self.red}, black={self.black})"

    def initial_states(self) -> list[tuple[float, tuple[int, int]]]:
        return [(1.0, (self.red, self.black))]

    def lead(self, red_left, black_left):
        """Red minus black drawn (the payoff of stopping); ints or numpy arrays alike."""
        return (self.red - red_left) - (self.black - black_left)

    def legal_actions(self, state: tuple[int, int]) -> tuple[int, ...]:
        return (STOP, GO_ON)

    def transitions(self, state: tuple[int, int], action: int) -> list[Transition]:
        red, black = state
        if action == STOP:
            return [Transition(1.0, state, 0.0, True)]
        left = red + black
        outcomes = []
        if red:
            after = (red - 1, black)
            outcomes.append(Transition(red / left, after, 1.0, left == 1))
        if black:
            after = (red, black - 1)
            outcomes.append(Transition(black / left, after, -1.0, left == 1))
        return outcomes

    def observation(self, state: tuple[int, int]) -> tuple[int, int]:
        return state

    def validate_state(self, state: object) -> tuple[int, int]:
        try:
            red, black = state  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ValueError(f"state must be (red_left, black_left), got {state!r}") from None
        red = check_int("red_left", red, 0, self.red)
        black = check_int("black_left", black, 0, self.black)
        if red + black == 0:
            raise ValueError("state (0, 0) is the empty deck, which ends the game")
        return red, black

    def render_text(self, state: tuple[int, int]) -> str:
        red, black = state
        return f"{red} red and {black} black left; red minus black drawn {self.lead(*state):+d}"

    policy_names = ("stop-at-plus-K", "tijms-thresholds")
    policy_descriptions = {
        "stop-at-plus-K": "stops once red minus black drawn is K or more",
        "tijms-thresholds": "Tijms's thresholds on red minus black after each draw (red=26, "
        "black=26 only)",
    }

    def named_policy(self, name: str) -> Rule | None:
        """stop-at-plus-K: stop once red minus black drawn is K or more; tijms-thresholds:
        Tijms's thresholds for 26 red and 26 black cards."""
        if name == "tijms-thresholds":
            if (self.red, self.black) != (26, 26):
                raise ValueError(f"{name} are Tijms's for red=26, black=26 only")
            return self.thresholds_rule(TIJMS_RED_BLACK_THRESHOLDS, name)
        lead = parse_threshold("stop-at-plus-{K}", name)
        if lead is None:
            return None
        return self.thresholds_rule([lead] * (self.red + self.black), name)

    def thresholds_rule(self, thresholds, name: str = "thresholds") -> Rule:
        """Stop once red minus black drawn reaches thresholds[k - 1] after k draws (none
        drawn: draw)."""
        beta = np.asarray([np.inf, *thresholds], dtype=float)

        def batch(observations: np.ndarray) -> np.ndarray:
            observations = np.asarray(observations).reshape(-1, 2)
            count = (self.red + self.black) - observations.sum(axis=1)
            lead = self.lead(observations[:, 0], observations[:, 1])
            return np.where(lead >= beta[count], STOP, GO_ON)

        return Rule.from_batch(batch, name)

    def picture(self, state: tuple[int, int], context: dict):
        red, black = state
        lines = [
            f"RED LEFT {red}",
            f"BLACK LEFT {black}",
            f"RED - BLACK {self.lead(red, black):+d}",
        ]
        return [], lines


class ChowRobbins:
    """Toss a fair coin; stop whenever you like and be paid the proportion of heads.

    ## Description
    The Chow–Robbins game with a horizon: toss a fair coin at most `horizon` times; after any
    toss the player may stop and is paid heads / tosses; after the last toss the game pays that
    proportion. The unbounded game's value is about 0.79295 and its thresholds are an open
    problem; with the horizon the values f_N(0) quoted by Tijms (2012) (0.7679 for
    N = 25, ..., 0.79294 for N = 1,000,000) are exact. `baselines.solve` has a banded solver
    for horizons up to 10^6 and beyond.

    Stopping before the first toss is not allowed (0 / 0 has no value); the source's recursion
    never stops there either, since one toss is worth 1/2 > 0.

    ## Model
    State: (tosses, heads). Actions: 0 stop (paid heads / tosses; legal after the first toss),
    1 toss (heads with probability 1/2; the toss number `horizon` ends the game paying
    heads / horizon).

    ## Action Space
    `Discrete(2)`: 0 stop, 1 toss. Stop is illegal before the first toss (masked in
    `info["action_mask"]`; taken anyway it pays 0 and ends the game).

    ## Observation Space
    `MultiDiscrete([horizon + 1, horizon + 1])`: (tosses so far, heads so far).

    ## Rewards
    heads / tosses when the player stops or the horizon is reached; 0 otherwise.

    ## Starting State
    (0, 0).

    ## Episode End
    Termination on a stop or at the horizon. No truncation.

    ## Arguments
    - `horizon=100`: the most tosses; an integer >= 1. The env samples the model, so any
      horizon makes and steps; the tables (and the generic solvers and tabular training,
      which read them) hold about horizon^2 / 2 states, so keep those to a few thousand.
    - `render_mode=None`: `"ansi"` (one line of text), `"rgb_array"` (the counts) or `"human"` (that
      picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    num_actions = 2
    action_names = ("stop", "toss")
    observation_names = ("tosses", "heads")
    picture_size = (0, 3)

    def __init__(self, horizon: int = 100) -> None:
        self.horizon = check_int("horizon", horizon, 1)
        self.observation_nvec = (self.horizon + 1, self.horizon + 1)

    def table_size(self) -> TableSize:
        """A state per (tosses, heads) before the horizon, a stop row and two toss rows each."""
        states = self.horizon * (self.horizon + 1) / 2
        return TableSize(states, 3 * states, "horizon")

    def __repr__(self) -> str:
        return f"ChowRobbins(horizon={self.horizon})"

    def initial_states(self) -> list[tuple[float, tuple[int, int]]]:
        return [(1.0, (0, 0))]

    def legal_actions(self, state: tuple[int, int]) -> tuple[int, ...]:
        return (GO_ON,) if state[0] == 0 else (STOP, GO_ON)

    def transitions(self, state: tuple[int, int], action: int) -> list[Transition]:
        tosses, heads = state
        if action == STOP:
            return [Transition(1.0, state, heads / tosses if tosses else 0.0, True)]
        n = tosses + 1
        last = n == self.horizon
        return [
            Transition(0.5, (n, heads + 1), (heads + 1) / n if last else 0.0, last),
            Transition(0.5, (n, heads), heads / n if last else 0.0, last),
        ]

    def observation(self, state: tuple[int, int]) -> tuple[int, int]:
        return state

    def validate_state(self, state: object) -> tuple[int, int]:
        try:
            tosses, heads = state  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ValueError(f"state must be (tosses, heads), got {state!r}") from None
        tosses = check_int("tosses", tosses, 0, self.horizon - 1)
        return tosses, check_int("heads", heads, 0, tosses)

    def render_text(self, state: tuple[int, int]) -> str:
        tosses, heads = state
        share = f" ({heads / tosses:.4f})" if tosses else ""
        return f"{heads} heads in {tosses} of {self.horizon} tosses{share}"

    policy_names = ("heads-exceed-tails", "stop-at-plus-K")
    policy_descriptions = {
        "heads-exceed-tails": "stops once heads exceed tails (the pi/4 rule Tijms quotes)",
        "stop-at-plus-K": "stops once heads minus tails is K or more",
    }

    def named_policy(self, name: str) -> Rule | None:
        """heads-exceed-tails (the pi/4 rule Tijms quotes) or stop-at-plus-K: stop once heads
        minus tails is K or more (never before the first toss)."""
        lead = 1 if name == "heads-exceed-tails" else parse_threshold("stop-at-plus-{K}", name)
        if lead is None:
            return None

        def batch(observations: np.ndarray) -> np.ndarray:
            observations = np.asarray(observations).reshape(-1, 2)
            tosses, heads = observations[:, 0], observations[:, 1]
            return np.where((tosses > 0) & (2 * heads - tosses >= lead), STOP, GO_ON)

        return Rule.from_batch(batch, name)

    def picture(self, state: tuple[int, int], context: dict):
        tosses, heads = state
        lines = [
            f"TOSSES {tosses}/{self.horizon}",
            f"HEADS {heads}  TAILS {tosses - heads}",
            f"PAID {context['episode_return']:.4f}",
        ]
        return [], lines
