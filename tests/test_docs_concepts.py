"""docs/concepts.md: its generated examples are what `python -m docs.tools.concepts` writes now,
and the factors it states between this project's exploitability and OpenSpiel's measures hold
on a small game."""

from __future__ import annotations

import re

import pytest

import baselines
from docs.tools import concepts

PIG = "dice_envs/Pig-v0"
GOAL = 15


def page_sections() -> dict[str, str]:
    page = concepts.PAGE.read_text()
    found = re.findall(r"<!-- ([\w-]+):start -->\n(.*?)\n?<!-- \1:end -->", page, flags=re.S)
    return {name: text.strip() for name, text in found}


def test_the_page_holds_what_the_generator_writes_now():
    committed = page_sections()
    assert set(committed) == set(concepts.SECTIONS)
    for name, text in concepts.sections().items():
        assert committed[name] == text.strip(), f"docs/concepts.md section {name} is stale"


def seat_by_seat(policy: str) -> dict[str, float]:
    """Win probabilities of Pig to GOAL by a generic solve and evaluation, seat by seat."""
    first = baselines.solve(PIG, goal=GOAL, opponent=policy, agent_starts=True, method="generic")
    second = baselines.solve(PIG, goal=GOAL, opponent=policy, agent_starts=False, method="generic")
    itself = baselines.evaluate(policy, PIG, goal=GOAL, opponent=policy, agent_starts=True)
    return {"first": first.value, "second": second.value, "itself": itself.value}


@pytest.mark.parametrize("policy", ["hold-at-5", "hold-at-10", "random"])
def test_openspiel_measures_are_two_and_four_times_the_exploitability(policy):
    ours = baselines.exploitability(policy, PIG, goal=GOAL).value
    seats = seat_by_seat(policy)
    assert ours > 0.01  # a policy a best response beats: the factors below say something
    # OpenSpiel's definitions on the +1/-1 payoff: a seat won with probability w is worth 2w - 1.
    best = [2 * seats["first"] - 1, 2 * seats["second"] - 1]
    on_policy = [2 * seats["itself"] - 1, 1 - 2 * seats["itself"]]
    nash_conv = sum(b - u for b, u in zip(best, on_policy, strict=True))
    openspiel_exploitability = (sum(best) - 0.0) / 2  # utility sum 0
    assert openspiel_exploitability == pytest.approx(2 * ours, abs=1e-9)
    assert nash_conv == pytest.approx(4 * ours, abs=1e-9)
    # On the 0/1 payoff (utility sum 1) the factors halve.
    win_nash_conv = (seats["first"] - seats["itself"]) + (seats["second"] - (1 - seats["itself"]))
    assert (seats["first"] + seats["second"] - 1) / 2 == pytest.approx(ours, abs=1e-9)
    assert win_nash_conv == pytest.approx(2 * ours, abs=1e-9)
    # The page's generator assembles the same two measures.
    page = concepts.openspiel_measures(
        {
            "best_response_first": seats["first"],
            "best_response_second": seats["second"],
            "self_play_first": seats["itself"],
        }
    )
    assert page == pytest.approx((openspiel_exploitability, nash_conv), abs=1e-12)


def test_the_optimum_has_no_exploitability_on_either_scale():
    seats = seat_by_seat("two-player-optimal")
    assert seats["first"] + seats["second"] == pytest.approx(1.0, abs=1e-9)
    assert baselines.exploitability("two-player-optimal", PIG, goal=GOAL).value == pytest.approx(
        0, abs=1e-9
    )
