"""The per-game docs pages: their sections are rewritten in place, and the committed pages
exist for every id with links that resolve."""

import re
from pathlib import Path

import pytest

from dice_envs import env_ids
from docs.tools.game_pages import SECTIONS, page_path, rules_text, write_page_section

ROOT = Path(__file__).resolve().parent.parent


def test_a_section_is_rewritten_and_the_others_kept(tmp_path):
    path = write_page_section("dice_envs/SumAvoid-v0", "game", "first", tmp_path)
    assert path == tmp_path / "games" / "sum_avoid.md"
    write_page_section("dice_envs/SumAvoid-v0", "training-quick", "trained", tmp_path)
    write_page_section("dice_envs/SumAvoid-v0", "game", "second", tmp_path)
    text = path.read_text()
    assert "second" in text and "first" not in text and "trained" in text
    assert text.index("second") < text.index("trained")  # the sections keep their order
    assert "Not written yet: run `python -m docs.tools.training_report --budget full" in text
    with pytest.raises(ValueError, match="name must be one of"):
        write_page_section("dice_envs/SumAvoid-v0", "training-huge", "x", tmp_path)


def test_a_page_goes_only_under_the_folder_the_caller_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError):
        page_path("dice_envs/SumAvoid-v0")  # no default folder: the caller names it
    write_page_section("dice_envs/SumAvoid-v0", "game", "text", Path("mine"))
    assert [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.md")] == [
        "mine/games/sum_avoid.md"
    ]


@pytest.mark.parametrize("env_id", env_ids())
def test_the_rules_are_the_envs_docstring_with_its_spaces(env_id):
    text = rules_text(env_id)
    assert "### Action Space" in text and "### Observation Space" in text
    assert "\n## " not in text  # headings one level below the page's
    assert "has observation space `" in text


@pytest.mark.parametrize("env_id", env_ids())
def test_every_committed_page_has_its_sections_and_working_links(env_id):
    path = page_path(env_id, ROOT / "docs")
    text = path.read_text()
    for name in SECTIONS:
        assert f"<!-- {name}:start -->" in text and f"<!-- {name}:end -->" in text
    assert "Not written yet" not in text
    links = re.findall(r"\]\(([^)#]+)\)", text)
    assert links
    for link in links:
        if not link.startswith("http"):
            assert (path.parent / link).resolve().exists(), link
