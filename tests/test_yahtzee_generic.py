"""Reduced Yahtzee games through the project's generic tables: the model's tables form
(`transitions`, its batch form) builds the same tables both ways, the generic solver equals the
structure-aware one (`baselines.yahtzee.solve_yahtzee`) at the start and action by action, and
the generic exact evaluation scores the named policies. The full game refuses tables."""

import numpy as np
import pytest

import baselines
from baselines.solvers import solve_mdp
from baselines.yahtzee import solve_yahtzee
from dice_envs import game
from dice_envs.games.yahtzee import (
    FULL_CARD,
    REGISTRY_TABLE_BOXES,
    YAHTZEE_DICE,
    Yahtzee,
    decode_observations,
)
from dice_envs.tables import build_tables

ENV_ID = "dice_envs/Yahtzee-v0"
# (joker, boxes): one and two boxes run every time; three boxes (where the joker rules give
# different optima: a Yahtzee with Sixes and Full house open) take about 5 GB and two minutes
# each, so they run with `make verify`, on the model's tables (the registry allows two boxes).
# The last one run by default is the game `test_where_it_loses_...` first asks `generic` for:
# it is still kept then.
CASES = [
    ("forced", ["chance"]),
    ("free", ["yahtzee"]),
    ("verhoeff", ["fours", "yahtzee"]),
    ("free", ["small_straight", "yahtzee"]),
    ("forced", ["ones", "yahtzee"]),
    *(
        pytest.param(joker, ["sixes", "full_house", "yahtzee"], marks=pytest.mark.verify)
        for joker in ("forced", "free", "verhoeff")
    ),
]
_SOLVED: dict = {}


def generic(joker, boxes):
    """The generic optimum of a reduced game, kept per case: through `baselines.solve` where
    the registry allows tables (two boxes), else on the model's tables directly."""
    key = (joker, tuple(boxes))
    if key not in _SOLVED:
        _SOLVED.clear()  # one game's tables at a time: they take hundreds of MB
        if len(boxes) <= REGISTRY_TABLE_BOXES:
            solution = baselines.solve(ENV_ID, method="generic", joker=joker, boxes=boxes)
        else:
            solution = solve_mdp(build_tables(Yahtzee(joker, boxes)), "backward")
        _SOLVED[key] = solution
    return _SOLVED[key]


@pytest.mark.parametrize("joker, boxes", CASES, ids=str)
def test_the_generic_optimum_equals_the_structure_aware_one(joker, boxes):
    solution = generic(joker, boxes)
    structured = solve_yahtzee(joker, boxes)
    assert solution.method == "backward"
    assert solution.value == pytest.approx(structured.value, abs=1e-9)
    assert solution.bellman_residual < 1e-9
    # Action values at a sample of decision states (every turn, every rolls left), legal or
    # not: a forbidden action is worth what the action it plays is worth.
    tables = solution.tables
    rng = np.random.default_rng(11)
    sample = rng.choice(tables.num_states, min(150, tables.num_states), replace=False)
    model = tables.model
    for i in sample:
        observation = tables.observation_array[i]
        filled, upper, flag, dice, rolls = (int(v[0]) for v in decode_observations(observation))
        expected = structured.turn_action_values((filled, upper, flag), dice, rolls)
        np.testing.assert_allclose(solution.action_values(observation), expected, atol=1e-9)
        legal_bits, _ = model.scoring_one(filled, dice)
        played = [model.played_action(dice, rolls, legal_bits, a) for a in range(45)]
        np.testing.assert_allclose(solution.q_values(observation), expected[played], atol=1e-9)


@pytest.mark.parametrize("joker, boxes", [("forced", ["chance"]), ("free", ["yahtzee"])], ids=str)
def test_the_fast_builder_equals_the_generic_enumeration(joker, boxes):
    """Entry for entry: states (by observation), legal actions, start, and every outcome row
    (state, action, next state or final observation, reward, probability)."""
    slow = build_tables(Yahtzee(joker, boxes), "generic")
    fast = build_tables(Yahtzee(joker, boxes), "vectorised")
    perm = slow.indices_of(fast.observation_array)
    assert sorted(perm.tolist()) == list(range(slow.num_states)) == list(range(fast.num_states))
    np.testing.assert_array_equal(slow.legal[perm], fast.legal)
    np.testing.assert_allclose(slow.initial[perm], fast.initial, atol=1e-15)
    np.testing.assert_array_equal(
        [slow.states[i] for i in perm], [tuple(int(v) for v in s) for s in fast.states]
    )
    np.testing.assert_array_equal(
        sorted_rows(slow, np.arange(slow.num_states)), sorted_rows(fast, perm)
    )


@pytest.mark.parametrize("joker", ["forced", "free", "verhoeff"])
def test_the_batch_rules_equal_the_rules_one_state_at_a_time(joker):
    """On a three-box game, where a scoring leads to another turn, the Yahtzee bonus is paid
    and the jokers arise (Full house in full or not, Fours forced or not): every action at a
    sample of decision states, and at every Yahtzee with the Yahtzee box filled."""
    model = Yahtzee(joker, ["fours", "full_house", "yahtzee"])
    filled, upper, flag = model.turn_start_states()
    rng = np.random.default_rng(3)
    cards = rng.integers(0, len(filled), 40)
    dice, rolls = rng.integers(0, 252, 40), rng.integers(0, 3, 40)
    jokers = np.flatnonzero(filled >> 11 & 1)
    cards = np.concatenate([cards, np.repeat(jokers, 6)])
    dice = np.concatenate([dice, np.tile(YAHTZEE_DICE, len(jokers))])
    rolls = np.concatenate([rolls, np.zeros(6 * len(jokers), dtype=np.int64)])
    states = np.column_stack((filled[cards], upper[cards], flag[cards], dice, rolls))
    for state in states:
        for action in range(45):
            _, prob, nexts, reward, terminal = model.batch_transitions(state[None], action)
            columns = (map(tuple, nexts.tolist()), reward.tolist(), terminal.tolist())
            batch = sorted(zip(*columns, prob.tolist(), strict=True))
            plain = sorted(
                (t.next_state, t.reward, t.terminal, t.prob)
                for t in model.transitions(tuple(state), action)
            )
            assert [row[:3] for row in batch] == [row[:3] for row in plain], (state, action)
            np.testing.assert_allclose([r[3] for r in batch], [r[3] for r in plain], atol=1e-15)


def sorted_rows(tables, to_slow) -> np.ndarray:
    """Every outcome row as (state, action, next, reward, probability), states numbered as in
    the generic tables and final states by their observation, sorted."""
    model = tables.model
    final = np.array([hash(model.observation(s)) for s in tables.terminal_states] or [0])
    nexts = tables.outcome_next.astype(np.int64)
    target = np.where(nexts >= 0, to_slow[np.maximum(nexts, 0)], final[np.maximum(-1 - nexts, 0)])
    rows = np.column_stack(
        (
            to_slow[tables.row_state].astype(float),
            tables.row_action.astype(float),
            target.astype(float),
            nexts < 0,
            tables.outcome_reward.astype(float),
            tables.outcome_prob.round(15),
        )
    )
    return rows[np.lexsort(rows.T[::-1])]


@pytest.mark.parametrize("boxes", [["chance"], ["yahtzee"], ["threes"]], ids=str)
def test_the_generic_evaluation_scores_the_named_policies(boxes):
    model = Yahtzee(boxes=boxes)
    at_once = baselines.evaluate(model.named_policy("score-at-once"), ENV_ID, boxes=boxes)
    # one roll, scored as it falls: 17.5 in Chance, 50 * 6 / 6**5 in Yahtzee, 2.5 in Threes
    expected = {"chance": 17.5, "yahtzee": 50 * 6 / 6**5, "threes": 2.5}[boxes[0]]
    assert at_once.value == pytest.approx(expected, abs=1e-12)
    # With one box the greedy turn's goal is the game's: it plays optimally.
    greedy = baselines.evaluate(model.named_policy("greedy-turn"), ENV_ID, boxes=boxes)
    assert greedy.gap == pytest.approx(0.0, abs=1e-9)
    assert greedy.value == pytest.approx(solve_yahtzee("forced", boxes).value, abs=1e-9)


def test_the_full_game_and_larger_ones_refuse_tables_clearly():
    with pytest.raises(ValueError, match="at most 2 boxes in play"):
        baselines.tabulate(ENV_ID)
    with pytest.raises(ValueError, match="method must be 'auto' or 'specialised'"):
        baselines.solve(ENV_ID, method="generic", boxes=["ones", "twos", "threes"])
    with pytest.raises(ValueError, match="at most 3 boxes"):
        Yahtzee().transitions((0, 0, 0, 0, 2), 32)
    assert game(ENV_ID).tables is False  # its own env classes; the conformance tests skip it
    assert game(ENV_ID).tables_refused({"boxes": ["ones", "yahtzee"]}) is None
    full = Yahtzee(boxes=["chance"]).transitions((FULL_CARD & ~(1 << 12), 0, 0, 251, 0), 44)
    assert full == [(1.0, (FULL_CARD, 0, 0, 251, 0), 30.0, True)]  # five sixes in Chance: 30


# greedy-turn on ones and yahtzee breaks exact ties between faces 2-6 (worth the same there)
# by round-off that depends on the batch it is asked in, so its occupancies differ by batch;
# on fours and yahtzee it has no such ties.
@pytest.mark.parametrize(
    "name, boxes", [("score-at-once", ["ones", "yahtzee"]), ("greedy-turn", ["fours", "yahtzee"])]
)
def test_where_it_loses_is_the_same_decision_by_decision_on_the_tables(name, boxes):
    """The structure-aware sweep keeps the largest single-decision losses; kept all, they are
    the generic evaluation's losses over the tables (one state per decision), entry for
    entry, with the same action played and an optimal action of the same worth."""
    from baselines.evaluation import evaluate_on
    from baselines.yahtzee_evaluation import evaluate_yahtzee

    policy = Yahtzee(boxes=boxes).named_policy(name)
    optimum = generic("forced", boxes)
    tables = optimum.tables  # `baselines.tabulate(ENV_ID, boxes=boxes)`, built by the solve
    everything = tables.num_states
    by_tables = evaluate_on(policy, tables, optimum).where_lost(everything)
    expected = {loss.observation: loss for loss in by_tables}
    assert len(expected) > 10
    for method in ("compiled", "numpy"):
        evaluation = evaluate_yahtzee(name, boxes=boxes, method=method, keep_losses=everything)
        swept = {loss.observation: loss for loss in evaluation.where_lost(everything)}
        assert swept.keys() == expected.keys()
        for observation, loss in swept.items():
            same = expected[observation]
            assert loss.loss == pytest.approx(same.loss, rel=1e-9, abs=1e-14)
            assert loss.action == same.action
            worth = optimum.action_values(observation)
            assert worth[loss.optimal_action] == pytest.approx(np.nanmax(worth), abs=1e-9)
        top = evaluate_yahtzee(name, boxes=boxes, method=method, keep_losses=5).where_lost(5)
        assert [loss.loss for loss in top] == pytest.approx([loss.loss for loss in by_tables[:5]])
