"""The answer to Crocce and Mordecki's open question: the Ten Thousand race solved exactly.

    python -m docs.tools.ten_thousand_race [--compute] [--write] [--archive PATH]

`--compute` fills the archive (docs/results/ten_thousand_race.json) with what the page states,
each part written as soon as it is finished, so a stopped run resumes where it was: the first
player's win probability under optimal play at several goals (with the solve's time and
policy-iteration counts); at the full goal the best response to `crocce-mordecki` and to every
`stop-at-K` (K = 1..60 chips: the opponent's win probability and exploitability), and the
two-player optimum against `crocce-mordecki` and the least exploitable `stop-at-K`. About an
hour on this machine. `--write` draws the threshold figure (from a fresh solve of the full
goal) and writes the page docs/results/ten_thousand_race.md from the archive alone: no number
in it is typed by hand. `make race` runs both.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from baselines.ten_thousand_duel import (
    MAX_ITERATIONS,
    MAX_ROLL_SCORE,
    PI_TOLERANCE,
    TIE_TOLERANCE,
    RaceSolution,
    best_response,
    solve_race,
    solve_seats,
    turn_tables,
)
from dice_envs.files import atomic_write_bytes
from dice_envs.games.ten_thousand_duel import TenThousandDuel
from dice_envs.policies import as_policy

ROOT = Path(__file__).resolve().parents[2]
ARCHIVE = ROOT / "docs" / "results" / "ten_thousand_race.json"
PAGE = ROOT / "docs" / "results" / "ten_thousand_race.md"
FIGURE = ROOT / "docs" / "images" / "ten_thousand_race_thresholds.png"
GOALS = (300, 500, 1000, 2000, 5000, 10_000)  # points
FULL_GOAL = 10_000
THRESHOLDS = range(1, 61)  # stop-at-K, K in chips
CHIP = 50


# -- the archive --------------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def save(archive: dict[str, Any], path: Path) -> None:
    atomic_write_bytes(path, (json.dumps(archive, indent=1, sort_keys=True) + "\n").encode())


def _optimum_entry(goal: int) -> dict[str, Any]:
    start = time.perf_counter()
    solution = solve_race(goal // CHIP)
    tables = solution.tables
    return {
        "first_player_wins": solution.value,
        "seconds": time.perf_counter() - start,
        "pairs": int(tables.goal) ** 2,
        "iterations": {str(k): v for k, v in tables.iteration_histogram().items()},
    }


def _response_entry(name: str, goal: int = FULL_GOAL) -> dict[str, Any]:
    model = TenThousandDuel(goal)
    start = time.perf_counter()
    first, second = best_response(model.goal_chips, as_policy(name, model))
    coin = (first.value + second.value) / 2
    return {
        "first": first.value,
        "second": second.value,
        "coin": coin,
        "exploitability": coin - 0.5,
        "seconds": time.perf_counter() - start,
        "policy_seconds": first.tables.policy_seconds,
    }


def _against_optimum(name: str, optimum: RaceSolution) -> dict[str, Any]:
    """The two-player optimum's win probability against `name`, first and second."""
    model = TenThousandDuel(FULL_GOAL)
    policy = as_policy(name, model)
    optimal = optimum.batched_policy()
    first = solve_seats(model.goal_chips, (optimal, policy)).first_player_wins
    second = 1.0 - solve_seats(model.goal_chips, (policy, optimal)).first_player_wins
    return {"first": first, "second": second, "coin": (first + second) / 2}


def compute(path: Path = ARCHIVE) -> dict[str, Any]:
    """Fill the archive at `path`, skipping what it holds (each part saved when done)."""
    archive = load(path)
    goals = archive.setdefault("optimum", {})
    for goal in GOALS:
        if str(goal) not in goals:
            goals[str(goal)] = _optimum_entry(goal)
            save(archive, path)
            print(f"goal {goal}: {goals[str(goal)]['first_player_wins']:.10f}", flush=True)
    responses = archive.setdefault("best_responses", {})
    for name in ("crocce-mordecki", *(f"stop-at-{k}" for k in THRESHOLDS)):
        if name not in responses:
            responses[name] = _response_entry(name, FULL_GOAL)
            save(archive, path)
            print(f"{name}: exploitability {responses[name]['exploitability']:.6f}", flush=True)
    against = archive.setdefault("optimum_against", {})
    least = least_exploitable(archive)
    wanted = [name for name in ("crocce-mordecki", least) if name not in against]
    if wanted:
        optimum = solve_race(FULL_GOAL // CHIP)
        optimum.action_table()
        for name in wanted:
            against[name] = _against_optimum(name, optimum)
            save(archive, path)
            print(f"optimum against {name}: {against[name]['coin']:.6f}", flush=True)
    return archive


def least_exploitable(archive: dict[str, Any]) -> str:
    """The stop-at-K of the archive with the least exploitability (the smallest K on ties)."""
    found = [
        (entry["exploitability"], int(name.rsplit("-", 1)[1]), name)
        for name, entry in archive["best_responses"].items()
        if name.startswith("stop-at-")
    ]
    return min(found)[2]


# -- the thresholds -----------------------------------------------------------------------------


def reachable_totals(allowed_moves: Any = None) -> np.ndarray:
    """reachable[t, n]: whether some play of a turn decides at turn total t (chips, capped
    here at the goal) with n dice in hand (5: five fresh dice after hot dice)."""
    tables = turn_tables(allowed_moves)
    top = FULL_GOAL // CHIP
    seen = np.zeros((top + MAX_ROLL_SCORE + 1, 6), dtype=bool)
    rolls = {(0, 5)}
    done: set[tuple[int, int]] = set()
    while rolls:
        tau, n = rolls.pop()
        done.add((tau, n))
        for j in range(tables.n_out[n]):
            t, left, pos = tau + tables.out_gain[n, j], tables.out_left[n, j], tables.out_pos[n, j]
            if t >= top:
                continue
            seen[t, left] = True
            nexts = [(t, left)]
            if left < 5:
                for m in range(tables.mv_count[pos]):
                    nexts.append((t - tables.mv_chips[pos, m], left + tables.mv_dice[pos, m]))
            rolls.update(s for s in nexts if s not in done)
    return seen[:top]


def threshold_maps(solution: RaceSolution) -> tuple[np.ndarray, np.ndarray]:
    """(thresholds, not_threshold), each (5, G, G) over [dice in hand - 1, own chips, other
    chips]: the least reachable turn total at which the optimum prefers stopping to rolling
    its n dice (give-backs left aside; G - own when it never stops: it rolls to the goal),
    and whether it rolls again at some larger reachable total (play not a threshold)."""
    goal = solution.goal
    reachable = reachable_totals(solution.tables.allowed_moves)
    thresholds = np.zeros((5, goal, goal), dtype=np.int64)
    broken = np.zeros((5, goal, goal), dtype=bool)
    for a in range(goal):
        for b in range(goal):
            top, pay, r, _bust = solution._pair_turn(a, b)
            for n in range(1, 6):
                totals = np.flatnonzero(reachable[1:top, n]) + 1
                best = np.maximum(pay[totals], r[totals, n])
                stops = pay[totals] >= best - TIE_TOLERANCE * np.maximum(1.0, np.abs(best))
                thresholds[n - 1, a, b], broken[n - 1, a, b] = threshold_of(totals, stops, top)
    return thresholds, broken


def threshold_of(totals: np.ndarray, stops: np.ndarray, top: int) -> tuple[int, bool]:
    """The least of the increasing `totals` where `stops` (`top` if none), and whether some
    larger total rolls again."""
    if not stops.any():
        return top, False
    first = int(np.argmax(stops))
    return int(totals[first]), not bool(stops[first:].all())


# -- the page -----------------------------------------------------------------------------------

PANELS = (5, 1, 2, 3, 4)  # dice in hand: five fresh dice first
GOALS_HEADER = (
    "| goal (points) | first player wins | banked-score pairs | most policy evaluations of a "
    "two-cycle | solve time |\n|---|---|---|---|---|"
)


def plot_thresholds(thresholds: np.ndarray, broken: np.ndarray, path: Path) -> None:
    """One panel per number of dice in hand: the least turn total (points) at which the
    optimum stops, by both banked scores; grey where it never stops (it rolls to the goal),
    a black dot where it stops there but rolls again at a larger total."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    goal = thresholds.shape[1]
    own = np.arange(goal)
    never = thresholds == (goal - own)[None, :, None]
    shown = np.where(never, np.nan, thresholds * CHIP).astype(float)
    colours = plt.get_cmap("viridis").copy()
    colours.set_bad("0.8")
    # A log colour scale: most thresholds are a few hundred points, a few (far behind, five
    # fresh dice) thousands.
    norm = LogNorm(vmin=CHIP, vmax=np.nanmax(shown))
    extent = (-0.5 * CHIP, (goal - 0.5) * CHIP, -0.5 * CHIP, (goal - 0.5) * CHIP)
    fig, axes = plt.subplots(2, 3, figsize=(13, 9))
    for ax, n in zip(axes.flat, PANELS, strict=False):
        image = ax.imshow(
            shown[n - 1].T, origin="lower", cmap=colours, norm=norm, extent=extent,
            interpolation="nearest",
        )  # fmt: skip
        a, b = np.nonzero(broken[n - 1])
        ax.plot(a * CHIP, b * CHIP, "k.", ms=1.5)
        label = (
            "five fresh dice (after hot dice)"
            if n == 5
            else f"{n} {'die' if n == 1 else 'dice'} in hand"
        )
        ax.set_title(f"{label}, no give-back", fontsize=10)
        ax.set_xlabel("own banked score (points)")
        ax.set_ylabel("opponent's banked score (points)")
    key = axes.flat[5]
    key.axis("off")
    bar_axes = key.inset_axes((0.05, 0.55, 0.9, 0.08))
    bar = fig.colorbar(image, cax=bar_axes, orientation="horizontal")
    bar.set_label("least turn total at which the optimum stops\n(points, log scale)")
    never_label = "never stops: rolls to the goal"
    broken_label = "not a threshold: stops there,\nrolls again at a larger total"
    handles = [
        plt.Line2D([], [], ls="", marker="s", color="0.8", ms=10, label=never_label),
        plt.Line2D([], [], ls="", marker=".", color="k", ms=8, label=broken_label),
    ]
    key.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.3), frameon=False)
    fig.suptitle(
        f"Ten Thousand race to {FULL_GOAL:,} points (Crocce and Mordecki's scoring), the "
        "two-player optimum:\nthe least turn total at which the player to move stops, by both "
        "banked scores",
        fontsize=12,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_exploitability(archive: dict[str, Any], path: Path) -> None:
    """Exploitability of stop-at-K by K, with crocce-mordecki's as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    responses = archive["best_responses"]
    ks = sorted(int(n.rsplit("-", 1)[1]) for n in responses if n.startswith("stop-at-"))
    values = [responses[f"stop-at-{k}"]["exploitability"] for k in ks]
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    ax.plot(ks, values, marker="o", ms=3, label="stop-at-K (never gives dice back)")
    ax.axhline(
        responses["crocce-mordecki"]["exploitability"], color="tab:red", ls="--",
        label="crocce-mordecki (the paper's optimal solitaire turn)",
    )  # fmt: skip
    ax.set_yscale("log")
    ax.set(
        xlabel="K: the turn total at which it stops (chips of 50 points)",
        ylabel="exploitability (win probability, log axis)",
        title=f"How much a best response wins beyond 1/2\n(race to {FULL_GOAL:,} points, a coin "
        "for who starts)",
    )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_page(archive: dict[str, Any], page: Path = PAGE, figure: Path = FIGURE) -> None:
    """The figures and the page, from the archive (and a fresh solve for the figure)."""
    solution = solve_race(FULL_GOAL // CHIP)
    thresholds, broken = threshold_maps(solution)
    plot_thresholds(thresholds, broken, figure)
    curve = figure.with_name("ten_thousand_race_exploitability.png")
    plot_exploitability(archive, curve)
    text = page_text(archive, thresholds, broken, figure.name, curve.name)
    atomic_write_bytes(page, text.encode())


def _pct(x: float) -> str:
    return f"{100 * x:.3f} %"


def page_text(archive, thresholds, broken, figure_name: str, curve_name: str) -> str:
    optimum = archive["optimum"]
    full = optimum[str(FULL_GOAL)]
    responses = archive["best_responses"]
    against = archive.get("optimum_against", {})
    least = least_exploitable(archive)
    iterations = {int(k): v for k, v in full["iterations"].items()}
    failed = iterations.pop(-1, 0)
    unsettled = "none did" if not failed else f"{failed:,} did"
    cycles = sum(iterations.values()) + failed
    most = max(iterations)
    mean = sum(k * v for k, v in iterations.items()) / max(1, cycles - failed)
    rows = [
        f"| {int(g):,} | {e['first_player_wins']:.10f} | {e['pairs']:,} | "
        f"{max(int(k) for k in e['iterations'])} | {e['seconds']:.2f} s |"
        for g, e in sorted(optimum.items(), key=lambda item: int(item[0]))
    ]
    by_goal = [e["first_player_wins"] for _, e in sorted(optimum.items(), key=lambda i: int(i[0]))]
    falling = all(x > y for x, y in zip(by_goal, by_goal[1:], strict=False))
    trend = " The shorter the race, the more the first move is worth:" if falling else ""
    goal_chips = FULL_GOAL // CHIP
    positions = len(turn_tables().positions)
    decisions = int(TenThousandDuel(FULL_GOAL).table_size().states) // 2
    names = ["crocce-mordecki", least, "stop-at-20"]
    names = list(dict.fromkeys(names))
    response_rows = [
        f"| `{name}` | {responses[name]['first']:.6f} | {responses[name]['second']:.6f} | "
        f"{responses[name]['coin']:.6f} | {responses[name]['exploitability']:.6f} |"
        for name in names
    ]
    against_rows = [
        f"| `{name}` | {e['first']:.6f} | {e['second']:.6f} | {e['coin']:.6f} |"
        for name, e in against.items()
    ]
    cm = responses["crocce-mordecki"]
    fresh_never = float((thresholds[4] == (goal_chips - np.arange(goal_chips))[:, None]).mean())
    not_threshold = {n: int(broken[n - 1].sum()) for n in PANELS}
    return f"""# The race to 10,000 at Ten Thousand, solved exactly

<!-- Generated by `python -m docs.tools.ten_thousand_race --write` (`make race`) from
docs/results/ten_thousand_race.json: edit the code, not this page. -->

Crocce and Mordecki ("A finite exact algorithm to solve a dice game", Journal of Applied
Probability, 2016) solve one turn of Ten Thousand, the turn that maximises the expected score,
and leave open whether a similar algorithm solves the competitive game. This page answers it
for the game `dice_envs/TenThousandDuel-v0` models: two players alternate the paper's turn
(its scoring, hot dice and give-back moves), and the first whose banked score plus turn total
reaches the goal wins at once (no opening minimum, no last round). Every number below is
computed by `baselines.ten_thousand_duel` and is exact under Crocce and Mordecki's scoring,
nothing more: other house rules (for example Busche's two-player Farkle, 2016) give other
games.

## Who wins

With both players optimal, the first player wins the race to {FULL_GOAL:,} points with
probability **{full["first_player_wins"]:.10f}**.{trend}

{GOALS_HEADER}
{chr(10).join(rows)}

(Solve times measured while the rest of the archive was computed, the machine's two cores
shared; `make bench` times the full goal alone.)

## When to stop

![The least turn total at which the optimum stops, by both banked scores](../images/{figure_name})

Each panel is one number of dice in hand, with the give-back moves left aside (the choice
between stopping and rolling those dice): the colour is the least turn total at which the
two-player optimum stops, for every pair of banked scores, seen by the player to move. With
five fresh dice the optimum never stops at {_pct(fresh_never)} of the pairs of banked scores
(grey): it rolls on whatever the turn total. Cells marked with a dot are not thresholds: the
optimum stops at some total and rolls again at a larger one ({not_threshold[5]:,} pairs with
five dice, {not_threshold[1]:,}, {not_threshold[2]:,}, {not_threshold[3]:,} and
{not_threshold[4]:,} with 1 to 4 dice).

## Against the paper's optimum and fixed thresholds

The paper's optimal turn (`crocce-mordecki`) maximises the turn's expected score whatever the
banked scores. Against it, the best response wins {_pct(cm["first"])} as first player and
{_pct(cm["second"])} as second, {_pct(cm["coin"])} with a coin for who starts: an
exploitability of {cm["exploitability"]:.6f}. Of the rules "roll, never giving dice back,
until the turn total reaches K chips" (`stop-at-K`, K = 1 to 60), the least exploitable is
`{least}`.

| policy | best response wins first | second | coin | exploitability |
|---|---|---|---|---|
{chr(10).join(response_rows)}

![Exploitability of stop-at-K by K](../images/{curve_name})

The two-player optimum played against them:

| opponent | optimum wins first | second | coin |
|---|---|---|---|
{chr(10).join(against_rows)}

## The answer to the open question

Yes: a finite exact algorithm solves the competitive game, and it is the paper's own turn
recursion nested in an order over banked scores. A decision of the race is (own banked score,
opponent's banked score, turn total, configuration, dice in hand). Stopping moves the game to a
pair of banked scores with a larger sum, and so does every win; only a bust keeps the sum,
handing the turn to the other player with the scores unchanged. So the pairs are solved in
decreasing order of their sum: when a pair (a, b) is reached every stop's value is known, and
the only unknowns are the two win probabilities of the two-cycle (a, b) to (b, a) that busts
close. Inside a turn, for a fixed bust value v, every value is linear in v and the paper's
backward recursion over the turn total (a give-back lowers the total by less than the roll
added) gives the turn's value and its optimal actions. Fixing a turn's actions fixes a line in
v, and there are finitely many ways to play a turn, so the optimal turn's value is the maximum
of finitely many lines: piecewise linear in the bust value. Each player's bust value is one
minus the other's win probability at the pair, so the cycle's two win probabilities are the
unique solution (every bust chance is below 1) of two piecewise-linear equations with finitely
many pieces, which a finite search over the pieces finds exactly. The solver finds the right
pieces by policy iteration on the pair: fix both turns' actions, solve the 2x2 linear system
of the cycle, re-optimise both turns at the new bust values (an action changes only for a
gain above {PI_TOLERANCE:g}, so exact ties never make it cycle), until no action
changes; when it stops its values are the exact fixed point. Over the {cycles:,} two-cycles
of the race to {FULL_GOAL:,} it stopped after at most {most} policy evaluations ({mean:.2f}
on average; a cycle that did not settle in {MAX_ITERATIONS} would be reported:
{unsettled}). The cost is one backward pass over the turn per pair and evaluation:
{goal_chips:,} x {goal_chips:,} pairs of banked scores, each turn over up to {goal_chips}
turn totals and {positions} positions (configuration and dice in hand): {decisions:,}
decision states per seat, solved in {full["seconds"]:.1f} s here. The same loop, with one
seat's actions asked of a fixed policy in batches, gives exact best responses, exploitability
and evaluation.
"""


def game_page_section(path: Path = ARCHIVE) -> str:
    """The race's game page's pointer to the answer page, its numbers from the archive."""
    if not path.exists():
        return "Not computed yet: run `make race`."
    archive = load(path)
    first = archive["optimum"][str(FULL_GOAL)]["first_player_wins"]
    cm = archive["best_responses"]["crocce-mordecki"]
    return (
        f"With both players optimal the first player wins the race to {FULL_GOAL:,} with "
        f"probability {first:.10f}; the paper's optimal turn (`crocce-mordecki`) is exploitable "
        f"by {cm['exploitability']:.6f}. The thresholds of the optimum by both banked scores, "
        "the fixed-threshold rules and the algorithm: [the race to 10,000, solved]"
        "(../results/ten_thousand_race.md).\n\n"
        f"![When the optimum stops](images/{FIGURE.name})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs.tools.ten_thousand_race")
    parser.add_argument("--compute", action="store_true", help="fill the archive (resumable)")
    parser.add_argument("--write", action="store_true", help="the figure and the page")
    parser.add_argument("--archive", type=Path, default=ARCHIVE)
    args = parser.parse_args(argv)
    if args.compute:
        compute(args.archive)
    if args.write:
        write_page(load(args.archive))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
