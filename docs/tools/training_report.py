"""Write the repository's training docs from the run archive (`make train`, `make report`).

    python -m docs.tools.training_report [--budget quick|full] [--configs configs]
                                         [--runs runs] [--games pig ...]

Run from the repository's root. The report reads the runs from the archive committed in
docs/training/runs/<budget>/ (`docs.tools.archive`: each run's config, result, curve, timing
and compressed per-state arrays, by config name and seed), so it needs no run store and no
training. With `--runs STORE` the budget's planned runs (of `--games`, else of every config)
are first archived from that run store (a run no config plans goes); `make train` does that
after its sweep. The report is always of every config archived, whatever `--games` chose.
The repository's report (`docs.tools.report`) goes to docs/training (the `quick` budget) or
docs/training/full (`full`: of every config its archive holds, since each full-budget sweep is
of a few configs), each trained game's training section to docs/games/<game>.md, and the pages
of games no config trains at the budget say so. Then the results page,
docs/results/training.md: its `training`, `training-timing` and `training-exploitability`
sections from a `quick` report of every config, its `training-full` section from the `full`
report: the targets table (configs/targets.yaml), the rows of the configs the targets judge,
and the names of those not trained yet.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from docs.tools.archive import Archive, archive_runs
from docs.tools.readme import ROOT, check_markers, rebase_links, replace_marked_section
from docs.tools.report import (
    TARGETS_FILE,
    Report,
    ReportError,
    best_agents,
    describe,
    gap_plots,
    make_report,
    results_table,
    timing_text,
    write_game_pages,
    write_unreported_pages,
    write_untrained_pages,
)
from docs.tools.targets import config_name, load_targets


def target_configs(configs: str | Path = "configs") -> tuple[str, ...]:
    """The configs the targets judge (`<game>/<config>`, in the targets file's order): the
    results page's full-budget section shows these."""
    names: dict[str, None] = {}
    for target in load_targets(Path(configs) / TARGETS_FILE):
        names.update(dict.fromkeys(target.configs))
    return tuple(names)


def report_folder(budget: str, docs: Path) -> Path:
    """Where the repository keeps the report of `budget`."""
    return docs / "training" if budget == "quick" else docs / "training" / "full"


def archive_folder(docs: Path) -> Path:
    """Where the repository keeps its run archive (one folder per budget inside)."""
    return docs / "training" / "runs"


def archived_configs(budget_folder: Path, configs: str | Path = "configs") -> list[str]:
    """The configs (`<game>/<config>`) the archive of one budget holds runs of, those whose
    file is still in `configs`: the full budget's archive can hold a few configs' runs (each
    sweep of it chosen with `--games`)."""
    return [
        name
        for name in Archive(budget_folder).config_names()
        if (Path(configs) / f"{name}.yaml").is_file()
    ]


def results_page(docs: Path) -> Path:
    """The page of training results under `docs`, whose sections the reports write."""
    return docs / "results" / "training.md"


def write_quick_sections(report: Report, page: Path) -> None:
    """The results page's results, exploitability and timing sections from the `quick`
    report, its links (relative to the report's folder) made relative to the page's."""

    def write(name: str, text: str) -> None:
        replace_marked_section(page, name, rebase_links(text, report.out, page.parent))

    write(
        "training",
        f"{report.description}\n\n{report.table}\n\n{report.plots}\n\n{report.monte_carlo}",
    )
    write("training-timing", report.timing)
    if report.exploitability:
        write("training-exploitability", report.exploitability)


def write_full_section(report: Report, page: Path, full_configs=None) -> None:
    """The results page's `training-full` section: the targets table, then the rows, figures
    and times of the configs the targets judge that the report has, the ones it lacks named,
    with a link to the rest."""
    full_configs = target_configs() if full_configs is None else full_configs
    groups = report.groups
    shown = {p: g for p, g in groups.items() if config_name(p) in full_configs}
    names = {config_name(p) for p in shown}
    absent = [name for name in full_configs if name not in names]
    stems = {game for game, paths in report.by_game.items() if any(p in shown for p in paths)}
    rest = len(groups) - len(shown)
    others = (
        f"\n\nThe other {rest} configs of this report: [the full report](report.md), and "
        f"each game's page."
        if rest
        else ""
    )
    waiting = (
        "Not yet trained at the full budget by the current code (no archived runs): "
        + ", ".join(f"`{name}`" for name in absent)
        + ".\n\n"
        if absent
        else ""
    )
    targets = f"### Targets\n\n{report.targets}\n\n" if report.targets else ""
    if shown:
        body = (
            f"{describe(shown, report.budget)}\n\n{waiting}{targets}{results_table(shown)}\n\n"
            f"{best_agents(shown)}\n\n{gap_plots(report, stems)}{others}\n\n"
            f"{timing_text(shown, 'shown here', report.sweeps)}"
        )
    else:
        body = f"{waiting}{targets}[The full report](report.md) has the configs trained so far."
    replace_marked_section(page, "training-full", rebase_links(body, report.out, page.parent))


def remove_unreferenced_figures(folder: Path, docs: Path) -> list[Path]:
    """Delete the figures (`folder`/*.png) that no Markdown page under `docs` (nor the README
    beside it) links to any more, an older report's; return them."""
    linked = set()
    for page in [*docs.rglob("*.md"), docs.parent / "README.md"]:
        if page.is_file():
            for link in re.findall(r"\]\(([^)\s]+\.png)\)", page.read_text()):
                linked.add((page.parent / link).resolve())
    stale = [png for png in sorted(folder.glob("*.png")) if png.resolve() not in linked]
    for png in stale:
        png.unlink()
    return stale


def write_training_docs(
    configs: str | Path,
    budget: str,
    runs: str | Path | None = None,
    games: list[str] | None = None,
    docs: Path = Path("docs"),
    page: Path | None = None,
    full_configs: tuple[str, ...] | None = None,
) -> Report:
    """The report of `budget` from the archive (`archive_folder(docs)`/<budget>) into its
    folder under `docs`, the games' pages, and the sections of the results `page` (default:
    `docs`/results/training.md). `runs`: a run store whose planned runs of `budget` (of
    `games`) are archived first; None reports from the archive as it is."""
    page = results_page(docs) if page is None else page
    if budget == "full":
        check_markers(page, "training-full")  # refused before the report, not after
    else:
        for name in ("training", "training-timing", "training-exploitability"):
            check_markers(page, name)
    if runs is not None:
        archive_runs(configs, budget, runs, archive_folder(docs), games)
    archive = Archive(archive_folder(docs) / budget)
    # `games` chooses what this call archives; the report is of every config archived so far
    # (at the full budget those some sweep trained; at the quick one every config), so a
    # sweep of a few games never leaves a report of only those.
    reported = (archived_configs(archive.folder, configs) or games) if budget == "full" else None
    reproduce = "`make demo`" if budget == "quick" else None
    report = make_report(configs, budget, archive, report_folder(budget, docs), reported, reproduce)
    write_game_pages(report, docs)
    write_untrained_pages(configs, budget, docs)
    write_unreported_pages(configs, report, docs)
    if budget == "quick":
        write_quick_sections(report, page)
    else:
        write_full_section(report, page, full_configs)
    remove_unreferenced_figures(report.out, docs)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m docs.tools.training_report", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--configs", default="configs")
    parser.add_argument(
        "--runs",
        default=None,
        help="archive the budget's planned runs from this run store first (default: report "
        "from the archive as it is)",
    )
    parser.add_argument("--budget", default="quick", choices=("quick", "full"))
    parser.add_argument("--games", nargs="+", default=None)
    args = parser.parse_args(argv)
    if Path.cwd().resolve() != ROOT:
        parser.exit(2, f"error: run from the repository's root, {ROOT} (make report)\n")
    try:
        report = write_training_docs(args.configs, args.budget, args.runs, args.games)
    except (ReportError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(report.table)
    print(f"report in {report.out}/, pages in docs/games/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
