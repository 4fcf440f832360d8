"""The readings of Glenn's report tried against his Table 3 (docs/tools/yahtzee_glenn.py): each
builds a policy that plays as its definition says (hand-checked positions, the switches of
`EstimatePlan` and `upper_bonus_estimates`), differs from the named policy where it should,
is scored exactly (a plain recursion on a reduced game); the results are kept in a JSON,
computed only where missing or changed, and the page's section is written from the JSON
alone. The full game's values (minutes each) only under `verify`."""

from __future__ import annotations

import json
import math
import shutil

import numpy as np
import pytest
from test_yahtzee_evaluation import PlainEvaluation

import baselines
from baselines.yahtzee_evaluation import optimal_solution
from dice_envs.games.rule import Rule
from dice_envs.games.yahtzee import (
    BOX_NAMES,
    FULL_CARD,
    NUM_DICE_SETS,
    OPTIMAL_BOX_MEANS,
    OPTIMAL_BOX_VARIANCES,
    EstimatePlan,
    Yahtzee,
    decode_observations,
    dice_index,
    encode_observations,
    glenn_policy,
    plain_game_values,
    upper_bonus_estimates,
)
from docs.tools import yahtzee_glenn as tool
from docs.tools.readme import DOCS

GREEDY, HEURISTIC, BETTER = tool.GLENN_NAMES
READINGS = {reading.key: reading for reading in tool.READINGS}
B = {name: i for i, name in enumerate(BOX_NAMES)}
TINY = ["fours", "yahtzee"]  # the results kept in a JSON


def obs(faces, rolls_left, open_boxes, upper=0, yahtzee50=0):
    filled = FULL_CARD & ~sum(1 << B[name] for name in open_boxes)
    return encode_observations(filled, upper, yahtzee50, dice_index(faces), rolls_left)


def act(reading: str, strategy: str, observation, joker: str = "verhoeff") -> int:
    options = READINGS[reading].options
    return int(tool.reading_plan(Yahtzee(joker=joker), strategy, options, 9.58)(observation)[0])


@pytest.mark.parametrize("strategy", tool.GLENN_NAMES)
def test_the_default_options_are_the_named_policies(strategy):
    model = Yahtzee(joker="verhoeff")
    named, read = glenn_policy(model, strategy), tool.reading_plan(model, strategy, {})
    np.testing.assert_array_equal(read.upper_estimate, named.upper_estimate)
    np.testing.assert_array_equal(read.lower_estimate, named.lower_estimate)
    np.testing.assert_array_equal(read.box_order, named.box_order)
    assert read.count_yahtzee_bonus and named.count_yahtzee_bonus


@pytest.mark.parametrize(
    "reading, strategy, observation, default, read",
    [
        # Nothing scores in Yahtzee, Large straight or Four of a kind: the named greedy gives
        # up the most difficult, Yahtzee; in box order, Four of a kind comes first.
        ("greedy-box-order", GREEDY,
         obs((1, 2, 3, 5, 6), 0, ("yahtzee", "large_straight", "four_of_a_kind")),
         "yahtzee", "four_of_a_kind"),
        # Chance and Three of a kind both pay 25 with 5 5 5 4 6: Chance first only there.
        ("greedy-yahtzee-chance-first", GREEDY,
         obs((4, 5, 5, 5, 6), 0, ("three_of_a_kind", "chance")), "three_of_a_kind", "chance"),
        # Ones and Twos both pay 0: Sixes .. Ones ties to Twos, Ones .. Sixes to Ones.
        ("greedy-lower-upper-chance", GREEDY,
         obs((3, 3, 4, 5, 6), 0, ("ones", "twos")), "twos", "ones"),
        # Upper total 60: Ones 4 reaches 63; counting the bonus now, 39 beats Chance's 7.
        ("greedy-upper-bonus-now", GREEDY,
         obs((1, 1, 1, 1, 3), 0, ("ones", "chance"), upper=60), "chance", "ones"),
    ],
)  # fmt: skip
def test_readings_at_hand_checked_positions(reading, strategy, observation, default, read):
    assert act(tool.AS_IMPLEMENTED, strategy, observation) == 32 + B[default]
    assert act(reading, strategy, observation) == 32 + B[read]


def sample_observations(cards: int = 64, seed: int = 0) -> np.ndarray:
    """Every dice and rolls left of `cards` random score cards (boxes filled with chance
    0.7, Ones open on a full card), random upper totals and Yahtzee flags."""
    rng = np.random.default_rng(seed)
    filled = (rng.random((cards, 13)) < 0.7) @ (1 << np.arange(13))
    filled[filled == FULL_CARD] -= 1
    upper = rng.integers(0, 64, cards)
    flag = (rng.random(cards) < 0.5) & (filled >> B["yahtzee"] & 1 == 1)
    each = NUM_DICE_SETS * 3
    return encode_observations(
        np.repeat(filled, each),
        np.repeat(upper, each),
        np.repeat(flag, each).astype(np.int64),
        np.tile(np.repeat(np.arange(NUM_DICE_SETS), 3), cards),
        np.tile(np.arange(3), NUM_DICE_SETS * cards),
    )


def test_every_reading_plays_otherwise_than_the_named_policy():
    """Each reading changes some decisions of the strategies it reads (the Yahtzee bonus
    added to the Yahtzee box's mean as the optimum's 9.58), and only legal ones."""
    model = Yahtzee(joker="verhoeff")
    observations = sample_observations()
    filled, _, _, dice, rolls = decode_observations(observations)
    legal = model.scoring_many(filled, dice).legal_bits
    named = {s: tool.reading_plan(model, s, {})(observations) for s in tool.GLENN_NAMES}
    for reading in tool.READINGS[1:]:
        for strategy in reading.strategies:
            actions = tool.reading_plan(model, strategy, reading.options, 9.58)(observations)
            assert (actions != named[strategy]).any(), (reading.key, strategy)
            played = model.played_actions(dice, rolls, legal, actions)
            np.testing.assert_array_equal(played, actions, err_msg=reading.key)


def test_upper_bonus_estimate_switches():
    assert np.array_equal(upper_bonus_estimates(), tool.bonus_estimates(tool.DEFAULTS))
    # Fives and Sixes open at 30, 33 still needed, mean 15.6874 + 19.1886 = 34.8759: the
    # standard deviations summed give 3.8510 + 4.6431 = 8.4941, P = Phi(0.2209) = 0.5874;
    # the summed variance 36.3885 taken as the standard deviation, Phi(0.0516) = 0.5206 (by
    # table).
    summed = tool.bonus_estimates(tool.check_options({"bonus_spread": "summed-sds"}))
    assert summed[30, 0b001111] == pytest.approx(35 * 0.5874, abs=0.01)
    as_sd = tool.bonus_estimates(tool.check_options({"bonus_spread": "variance-as-sd"}))
    assert as_sd[30, 0b001111] == pytest.approx(35 * 0.5206, abs=0.01)
    # The mean from the upper boxes' own game: Sixes alone 12.64 at 51 needing 12.
    upper_game = tool.bonus_estimates(tool.check_options({"bonus_mean": "upper-game"}))
    sd = np.sqrt(OPTIMAL_BOX_VARIANCES[5])
    mean = plain_game_values((5,))[0]
    assert mean == pytest.approx(12.64, abs=0.01)
    chance = 0.5 * math.erfc((12 - mean) / (sd * math.sqrt(2)))
    assert upper_game[51, 0b011111] == pytest.approx(35 * chance, abs=1e-12)
    for table in (summed, as_sd, upper_game):
        assert (table[63] == 35).all() and (table[:63, 63] == 0).all()
    with pytest.raises(ValueError, match="mean and spread must have shape"):
        upper_bonus_estimates(mean=np.zeros(6))


def test_the_lower_game_with_bonus_and_joker():
    values = tool.lower_game_with_bonus(Yahtzee(joker="verhoeff"))
    assert values.shape == (128, 2) and (values[127] == 0).all()
    only = {name: 127 & ~(1 << (B[name] - 6)) for name in ("yahtzee", "chance")}
    # Yahtzee alone: 50 times the chance of a Yahtzee, no bonus yet (the report's 2.3014).
    assert values[only["yahtzee"], 0] == pytest.approx(2.3014, abs=5e-5)
    # Chance alone after a 50 in the Yahtzee box: 23 1/3, and with the flag a Yahtzee bonus
    assert values[only["chance"], 0] == pytest.approx(70 / 3, abs=1e-9)
    # on top: at most 100 times the chance of a Yahtzee in a turn played for it (0.0460).
    bonus = values[only["chance"], 1] - values[only["chance"], 0]
    assert 1.0 < bonus < 100 * 0.04603
    assert (values[:, 1] >= values[:, 0] - 1e-9).all()  # the flag only adds bonuses


def test_a_two_column_lower_estimate_of_equal_columns_plays_as_one_column():
    model = Yahtzee(joker="verhoeff")
    named = glenn_policy(model, BETTER)
    lower = np.stack([named.lower_estimate] * 2, axis=1)
    both = EstimatePlan(model, named.upper_estimate, lower)
    observations = sample_observations(cards=16, seed=1)
    np.testing.assert_array_equal(both(observations), named(observations))
    with pytest.raises(ValueError, match="lower_estimate must have shape"):
        EstimatePlan(model, named.upper_estimate, np.zeros(64))


@pytest.mark.parametrize("reading", ["lower-game-bonus-and-joker", "without-yahtzee-bonus"])
def test_exact_evaluation_of_a_reading_equals_plain_recursion(reading):
    """The readings that need a switch of `EstimatePlan`, on a game where both matter (a
    Yahtzee bonus and jokers)."""
    boxes = ["yahtzee", "chance"]
    solution = optimal_solution("verhoeff", boxes)
    plan = tool.reading_plan(solution.model, BETTER, READINGS[reading].options)
    policy = Rule.from_batch(plan, reading)
    evaluation = baselines.evaluate(policy, tool.ENV_ID, joker="verhoeff", boxes=boxes)
    plain = PlainEvaluation(solution.model, policy).value(solution.model.start)
    assert evaluation.value == pytest.approx(plain, abs=1e-9)
    named = baselines.evaluate(BETTER, tool.ENV_ID, joker="verhoeff", boxes=boxes)
    assert abs(evaluation.value - named.value) > 1e-3


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="options must be among"):
        tool.check_options({"tie_ordr": BOX_NAMES})
    with pytest.raises(ValueError, match="option bonus_spread must be one of"):
        tool.check_options({"bonus_spread": "sds"})
    with pytest.raises(ValueError, match="option tie_order must name each"):
        tool.check_options({"tie_order": BOX_NAMES[:-1]})
    with pytest.raises(ValueError, match="strategy must be one of"):
        tool.reading_plan(Yahtzee(), "glenn", {})
    with pytest.raises(ValueError, match="needs yahtzee_bonus"):
        tool.reading_plan(Yahtzee(), HEURISTIC, {"yahtzee_mean": "with-bonus"})


def test_order_text():
    assert tool.order_text(BOX_NAMES) == (
        "Ones .. Sixes, Three of a kind, Four of a kind, Full house, Small straight, "
        "Large straight, Yahtzee, Chance"
    )
    assert tool.order_text(("sixes", "fives", "ones", "twos", "chance", "fours", "threes")) == (
        "Sixes, Fives, Ones, Twos, Chance, Fours, Threes"
    )


# -- the JSON --------------------------------------------------------------------------------


def test_results_are_computed_once_kept_as_each_is_done_and_redone_when_changed(
    tmp_path, monkeypatch
):
    path = tmp_path / "glenn.json"
    logged: list[str] = []
    results = tool.compute(path, boxes=TINY, log=logged.append)
    keys = [task[0] for task in tool.tasks(results[tool.MOMENTS]["yahtzee_bonus"], TINY)]
    assert len(logged) == len(keys) + 1 and set(results) == {tool.MOMENTS, *keys}
    assert json.loads(path.read_text()) == results
    named = baselines.evaluate(GREEDY, tool.ENV_ID, joker="forced", boxes=TINY)
    assert results[f"as-implemented/{GREEDY}/forced"]["value"] == pytest.approx(named.value)
    logged.clear()
    assert tool.compute(path, boxes=TINY, log=logged.append) == results and not logged
    # A definition changed since: that result alone is computed again.
    stale = json.loads(path.read_text())
    stale[keys[3]]["hash"] = "0" * 16
    stale[keys[3]]["value"] = -1.0
    path.write_text(json.dumps(stale))
    again = tool.compute(path, boxes=TINY, log=logged.append)
    assert len(logged) == 1 and logged[0].startswith(keys[3])
    assert again[keys[3]]["value"] == results[keys[3]]["value"]
    # Stopped after two results: both are kept, and the next run does the rest.
    path.unlink()
    calls = []
    evaluate = baselines.evaluate

    def stopping(*args, **kwargs):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(1)
        return evaluate(*args, **kwargs)

    monkeypatch.setattr(tool.baselines, "evaluate", stopping)
    with pytest.raises(KeyboardInterrupt):
        tool.compute(path, boxes=TINY, log=logged.append)
    assert set(json.loads(path.read_text())) == {tool.MOMENTS, *keys[:2]}


# -- the section -------------------------------------------------------------------------------

# The values the hand-written section showed (Verhoeff's rules unless said).
FIXTURE_VALUES = {
    f"as-implemented/{GREEDY}/verhoeff": 218.7022,
    f"as-implemented/{HEURISTIC}/verhoeff": 242.2037,
    f"as-implemented/{BETTER}/verhoeff": 248.9315,
    f"as-implemented/{GREEDY}/forced": 218.8376,
    f"as-implemented/{HEURISTIC}/forced": 242.2187,
    f"as-implemented/{BETTER}/forced": 248.9396,
    f"greedy-box-order/{GREEDY}/verhoeff": 217.30,
    f"greedy-yahtzee-chance-first/{GREEDY}/verhoeff": 217.43,
    f"greedy-chance-before-upper/{GREEDY}/verhoeff": 218.70,
    f"greedy-lower-upper-chance/{GREEDY}/verhoeff": 219.59,
    f"greedy-upper-bonus-now/{GREEDY}/verhoeff": 217.38,
    f"bonus-mean-upper-game/{BETTER}/verhoeff": 248.97,
    f"lower-game-bonus-and-joker/{BETTER}/verhoeff": 248.93,
    f"bonus-summed-sds/{HEURISTIC}/verhoeff": 241.19,
    f"bonus-summed-sds/{BETTER}/verhoeff": 247.69,
    f"bonus-variance-as-sd/{HEURISTIC}/verhoeff": 239.10,
    f"bonus-variance-as-sd/{BETTER}/verhoeff": 243.62,
    f"yahtzee-mean-with-bonus/{HEURISTIC}/verhoeff": 237.54,
    f"without-yahtzee-bonus/{BETTER}/verhoeff": 247.00,
    f"upper-total-again/{BETTER}/verhoeff": 233.59,
}


def fixture_results(values=FIXTURE_VALUES) -> dict:
    results = {
        tool.MOMENTS: {
            "means": OPTIMAL_BOX_MEANS.tolist(),
            "variances": OPTIMAL_BOX_VARIANCES.tolist(),
            "upper_bonus": 23.8413,
            "yahtzee_bonus": 9.5801,
        }
    }
    for i, (key, value) in enumerate(values.items()):
        optimum = 254.5877 if key.endswith("forced") else 254.5896
        results[key] = {"value": value, "optimal_value": optimum, "seconds": 120.0 + 10 * i}
    return results


def test_the_section_shows_the_results_and_what_follows_from_them():
    text = tool.section_text(fixture_results())
    assert "| glenn-heuristic | 242.2037 | 242.2187 | 240.67 |" in text
    assert "| optimal | 254.5896 | 254.5877 | 254.59 |" in text
    assert "| the upper total counted again in E' |  |  | 233.59 |" in text
    assert "| the Yahtzee box's mean with the Yahtzee bonuses (26.45) |  | 237.54 |  |" in text
    assert (
        "| greedy ties: Yahtzee, Chance, Large straight, Small straight, Full house, Four of a "
        "kind, Three of a kind, Sixes .. Ones | 217.43 |  |  |" in text
    )
    assert "it adds up to 254.5896 with the upper bonus 23.8413 and Yahtzee bonuses 9.5801" in text
    assert "The optimum reproduces Table 3's 254.59; the three strategies do not, and no " in text
    assert "over 217.30 (Ones .. Sixes, Three of a kind" in text
    assert "to 219.59 (Yahtzee, Large straight" in text
    assert "a span that holds 218.05, so the published number pins no order" in text
    assert "scores above Table 3 (by at least 1.53 and 4.06 points)" in text
    assert (
        "- the summed variance taken as the standard deviation: heuristic 239.10 (-3.10 against "
        "the named policy, -1.57 against Table 3); better heuristic 243.62 (-5.31 against the "
        "named policy, -1.25 against Table 3)\n"
    ) in text
    assert "might hide): none lands on a published number.\n\n- standard deviations" in text
    assert "to the digit of his 254.5896" in text
    assert "2 to 5 minutes each when computed" in text and "not computed yet" not in text


def test_the_section_says_what_changes_with_the_numbers():
    values = dict(FIXTURE_VALUES)
    for reading in ("as-implemented", "greedy-chance-before-upper", "greedy-lower-upper-chance"):
        values[f"{reading}/{GREEDY}/verhoeff"] = 218.0
    values[f"bonus-variance-as-sd/{HEURISTIC}/verhoeff"] = 240.671
    values[f"bonus-mean-upper-game/{BETTER}/verhoeff"] = 244.0
    del values[f"upper-total-again/{BETTER}/verhoeff"]
    text = tool.section_text(fixture_results(values))
    assert (
        "a span that misses 218.05 (it lies 0.05 above it), so the tie order alone does not" in text
    )
    assert (
        "might hide): the summed variance taken as the standard deviation on the heuristic's "
        "240.67, but no reading lands on both published numbers at once." in text
    )
    assert "A literal reading of the text scores at or below Table 3 for the better heuristic." in (
        text
    )
    assert "| the upper total counted again in E' |  |  | not computed yet |" in text


def test_the_section_is_written_between_its_markers_only(tmp_path):
    docs = tmp_path / "docs"
    page = docs / "games" / "yahtzee.md"
    page.parent.mkdir(parents=True)
    shutil.copy(DOCS / "games" / "yahtzee.md", page)
    before = page.read_text()
    assert tool.write_section(fixture_results(), docs) == page
    after = page.read_text()
    start, end = "<!-- yahtzee-glenn:start -->\n", "\n<!-- yahtzee-glenn:end -->"
    assert after.split(start)[0] == before.split(start)[0]
    assert after.split(end)[1] == before.split(end)[1]
    assert after.split(start)[1].split(end)[0] == tool.section_text(fixture_results())
    page.write_text(before.replace("<!-- yahtzee-glenn:end -->", ""))
    with pytest.raises(ValueError, match="has no <!-- yahtzee-glenn:end -->"):
        tool.write_section(fixture_results(), docs)


def test_only_section_writes_the_page_from_the_json_alone(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    (docs / "games").mkdir(parents=True)
    shutil.copy(DOCS / "games" / "yahtzee.md", docs / "games" / "yahtzee.md")
    (docs / "results").mkdir()
    (docs / tool.JSON_PATH).write_text(json.dumps(fixture_results()))
    monkeypatch.setattr(tool, "compute", lambda *a, **k: pytest.fail("computed"))
    assert tool.main(["--docs", str(docs), "--only-section"]) == 0
    assert tool.section_text(fixture_results()) in (docs / "games" / "yahtzee.md").read_text()


def test_the_committed_page_is_written_from_the_committed_json():
    results = tool.load_results(DOCS / tool.JSON_PATH)
    page = (DOCS / "games" / "yahtzee.md").read_text()
    assert tool.section_text(results) in page
    # Every result kept was made by the readings' current definitions.
    bonus = results[tool.MOMENTS]["yahtzee_bonus"]
    for key, _, _, _, made_of in tool.tasks(bonus):
        if key in results:
            assert results[key]["hash"] == tool.definition_hash(made_of), key


@pytest.mark.verify
@pytest.mark.parametrize("key", [f"greedy-upper-bonus-now/{GREEDY}/verhoeff",
                                 f"without-yahtzee-bonus/{BETTER}/verhoeff"])  # fmt: skip
def test_committed_results_on_the_full_game(key):
    """Two committed results computed again (minutes each)."""
    results = tool.load_results(DOCS / tool.JSON_PATH)
    reading, strategy, joker = key.split("/")
    plan = tool.reading_plan(
        Yahtzee(joker=joker), strategy, READINGS[reading].options,
        results[tool.MOMENTS]["yahtzee_bonus"],
    )  # fmt: skip
    evaluation = baselines.evaluate(Rule.from_batch(plan, key), tool.ENV_ID, joker=joker)
    assert evaluation.value == pytest.approx(results[key]["value"], abs=1e-9)
