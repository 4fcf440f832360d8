"""The maintainer's tools write their generated sections into the README and the site's pages:
one writer for a marked section (refusing a file or markers that are missing), links rebased to
each page's folder, and each committed page holding the markers its command writes. Dry runs
into temporary copies: writing what is committed reproduces the committed pages."""

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from docs.tools.readme import (
    BENCHMARKS,
    DOCS,
    HOME,
    MKDOCS,
    README,
    ROOT,
    SOLUTIONS,
    TRAINING_RESULTS,
    check_markers,
    games_nav,
    rebase_links,
    replace_marked_section,
    replace_yaml_section,
)
from docs.tools.solve import write_repository_pages
from docs.tools.training_report import write_quick_sections

# Every page a make target writes, and the sections it writes there.
WRITTEN = {
    README: ["games"],  # make solve
    HOME: ["games"],  # make solve
    SOLUTIONS: ["solutions"],  # make solve
    TRAINING_RESULTS: ["training", "training-timing", "training-exploitability", "training-full"],
    BENCHMARKS: ["bench", "training-bench", "yahtzee-bench"],  # make bench
}


def section(path: Path, name: str) -> str:
    text = path.read_text()
    return text.split(f"<!-- {name}:start -->\n")[1].split(f"\n<!-- {name}:end -->")[0]


def copy_pages(tmp_path: Path) -> dict[Path, Path]:
    """The written pages copied under tmp_path, at their places relative to the root."""
    copies = {}
    for page in WRITTEN:
        copies[page] = tmp_path / page.relative_to(ROOT)
        copies[page].parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(page, copies[page])
    return copies


@pytest.mark.parametrize("page", list(WRITTEN), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_written_page_has_its_sections_markers(page):
    for name in WRITTEN[page]:
        check_markers(page, name)


def test_a_marked_section_is_replaced_and_the_rest_kept(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# T\n\nbefore\n<!-- a:start -->\nold\n<!-- a:end -->\nafter\n")
    replace_marked_section(page, "a", "\nnew [x](y.md)\n\n")
    assert (
        page.read_text()
        == "# T\n\nbefore\n<!-- a:start -->\nnew [x](y.md)\n<!-- a:end -->\nafter\n"
    )


@pytest.mark.parametrize(
    "content, error",
    [
        (None, "path must be an existing file with section 'a'"),
        ("<!-- b:start -->\n<!-- b:end -->\n", "has no <!-- a:start --> and no <!-- a:end -->"),
        ("<!-- a:start -->\nx\n", "has no <!-- a:end -->: add both markers"),
        ("<!-- a:end -->\n<!-- a:start -->\n", "<!-- a:end --> comes before <!-- a:start -->"),
    ],
)
def test_a_missing_file_or_marker_is_refused_and_nothing_written(tmp_path, content, error):
    page = tmp_path / "page.md"
    if content is not None:
        page.write_text(content)
    with pytest.raises(ValueError, match=error):
        replace_marked_section(page, "a", "new")
    assert (page.read_text() if content is not None else None) == content


def test_links_are_rebased_from_one_folder_to_another():
    text = (
        '[p](docs/games/pig.md) ![i](docs/images/a.png "t") [r](docs/training/report.md#runs)'
        " [w](https://x.invalid/docs/a.md) [s](#here) [top](README.md) `code`"
    )
    assert rebase_links(text, Path("."), Path("docs/results")) == (
        '[p](../games/pig.md) ![i](../images/a.png "t") [r](../training/report.md#runs)'
        " [w](https://x.invalid/docs/a.md) [s](#here) [top](../../README.md) `code`"
    )
    assert rebase_links("[f](full/report.md) ![a](a.png)", DOCS / "training", DOCS) == (
        "[f](training/full/report.md) ![a](training/a.png)"
    )


def test_solve_writes_the_games_table_and_solutions_where_they_belong(tmp_path):
    copies = copy_pages(tmp_path)
    # What `make solve` would pass: links relative to the repository's root, as the README's.
    games = section(README, "games")
    solutions = rebase_links(section(SOLUTIONS, "solutions"), DOCS / "results", ROOT)
    assert "(docs/games/pig.md)" in games and "(docs/images/gap_decomposition.png)" in solutions
    for page, name in ((README, "games"), (HOME, "games"), (SOLUTIONS, "solutions")):
        replace_marked_section(copies[page], name, "")
    write_repository_pages(games, solutions, copies[README], copies[HOME], copies[SOLUTIONS])
    for page in (README, HOME, SOLUTIONS):  # the committed pages, byte for byte
        assert copies[page].read_text() == page.read_text(), page
    assert "[`dice_envs/Pig-v0`](games/pig.md)" in section(copies[HOME], "games")
    assert "[`dice_envs/Pig-v0`](docs/games/pig.md)" in section(copies[README], "games")
    solved = section(copies[SOLUTIONS], "solutions")
    assert "[Pig-v0](../games/pig.md)" in solved and "(../images/gap_decomposition.png)" in solved


def test_solve_writes_nothing_when_a_page_lacks_its_markers(tmp_path):
    copies = copy_pages(tmp_path)
    copies[SOLUTIONS].write_text("# Exact solutions\n")
    before = copies[README].read_text()
    with pytest.raises(ValueError, match="solutions.md has no <!-- solutions:start -->"):
        write_repository_pages("| new |", "new", copies[README], copies[HOME], copies[SOLUTIONS])
    assert copies[README].read_text() == before


def test_the_training_report_writes_its_quick_sections_relinked_to_the_results_page(tmp_path):
    copies = copy_pages(tmp_path)
    page, out = copies[TRAINING_RESULTS], tmp_path / "docs" / "training"

    def from_report(name: str) -> str:  # the section as the report gives it: links from out
        return rebase_links(section(TRAINING_RESULTS, name), page.parent, out)

    results = from_report("training")
    assert "](sum_avoid.png)" in results and "](monte_carlo.png)" in results
    report = SimpleNamespace(
        out=out, description=results, table="", plots="", monte_carlo="",
        timing=from_report("training-timing"),
        exploitability=from_report("training-exploitability"),
    )  # fmt: skip
    for name in ("training", "training-timing", "training-exploitability"):
        replace_marked_section(page, name, "")
    write_quick_sections(report, page)
    assert page.read_text() == TRAINING_RESULTS.read_text()  # the parts joined, stripped
    assert "(../training/sum_avoid.png)" in section(page, "training")
    report.timing = "- a sweep. Its report: [full](full/report.md)."  # linked from `out`
    write_quick_sections(report, page)
    assert "(../training/full/report.md)" in section(page, "training-timing")


def test_the_sites_games_navigation_is_the_registrys(tmp_path):
    """`make solve` writes the games' entries of mkdocs.yml's nav from the registry: the
    committed nav is what it writes now, a registered game gets an entry, and a file without
    the marker lines is refused with nothing written."""
    from dice_envs import env_ids

    copy = tmp_path / "mkdocs.yml"
    shutil.copy(MKDOCS, copy)
    replace_yaml_section(copy, "games", games_nav(env_ids()))
    assert copy.read_text() == MKDOCS.read_text()
    replace_yaml_section(copy, "games", games_nav([*env_ids(), "toy/ToyStop-v0"]))
    assert "      - ToyStop: games/toy_stop.md\n      # games:end" in copy.read_text()
    bare = tmp_path / "bare.yml"
    bare.write_text("nav:\n  - Home: index.md\n")
    with pytest.raises(ValueError, match="games:start"):
        replace_yaml_section(bare, "games", games_nav(env_ids()))
    assert bare.read_text() == "nav:\n  - Home: index.md\n"


def test_the_full_report_is_of_the_archived_configs_whose_file_is_still_there(tmp_path):
    from docs.tools.training_report import archived_configs

    for name in ("pig/qlearning_goal100", "yahtzee/ppo", "gone/ppo", ".full.new-1/x"):
        (tmp_path / "full" / name / "seed0").mkdir(parents=True)
    for name in ("pig/qlearning_goal100", "yahtzee/ppo", "yahtzee/qlearning"):
        (tmp_path / "configs" / f"{name}.yaml").parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "configs" / f"{name}.yaml").write_text("{}")
    found = archived_configs(tmp_path / "full", tmp_path / "configs")
    assert found == ["pig/qlearning_goal100", "yahtzee/ppo"]
    assert archived_configs(tmp_path / "none", tmp_path / "configs") == []
