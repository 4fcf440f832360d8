"""The API reference (docs/api/*.md, rendered by mkdocstrings): it documents the public
surface, and every field of the result dataclasses is described in its class's docstring."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest
from repository import docs_check_module

import baselines
import dice_envs
from baselines.exploitability import exploitability
from baselines.sb3 import ExactGapCallback
from baselines.two_player import TwoPlayerSolution
from baselines.value_errors import value_errors
from baselines.yahtzee import YahtzeeSolution, solve_yahtzee
from dice_envs import pettingzoo, policies
from dice_envs.envs.sb3 import DiceSB3VecEnv
from dice_envs.envs.vector import DiceVectorEnv
from dice_envs.envs.yahtzee import YahtzeeEnv
from dice_envs.envs.yahtzee_vector import YahtzeeVectorEnv
from dice_envs.registration import GAMES, Game, Reference

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api"
DIRECTIVE = re.compile(r"^:::\s+([\w.]+)\s*$", re.MULTILINE)

REQUIRED = {
    "baselines.solve": baselines.solve,
    "baselines.evaluate": baselines.evaluate,
    "baselines.exploitability": exploitability,
    "baselines.equilibrium": baselines.equilibrium,
    "baselines.Solution": baselines.Solution,
    "baselines.two_player.TwoPlayerSolution": TwoPlayerSolution,
    "baselines.Evaluation": baselines.Evaluation,
    "baselines.Exploitability": baselines.Exploitability,
    "baselines.Equilibrium": baselines.Equilibrium,
    "baselines.value_errors": value_errors,
    "baselines.ValueErrors": baselines.ValueErrors,
    "baselines.sb3.ExactGapCallback": ExactGapCallback,
    "dice_envs.envs.sb3.DiceSB3VecEnv": DiceSB3VecEnv,
    "dice_envs.envs.vector.DiceVectorEnv": DiceVectorEnv,
    "dice_envs.envs.yahtzee.YahtzeeEnv": YahtzeeEnv,
    "dice_envs.envs.yahtzee_vector.YahtzeeVectorEnv": YahtzeeVectorEnv,
    "baselines.yahtzee.solve_yahtzee": solve_yahtzee,
    "baselines.yahtzee.YahtzeeSolution": YahtzeeSolution,
    "dice_envs.register_game": dice_envs.register_game,
    "dice_envs.Reference": Reference,
    "dice_envs.game": dice_envs.game,
    "dice_envs.env_ids": dice_envs.env_ids,
    "dice_envs.policies.named_policy": policies.named_policy,
    "dice_envs.policies.batched": policies.batched,
    "dice_envs.pettingzoo.raw_env": pettingzoo.raw_env,
    "dice_envs.pettingzoo.env": pettingzoo.env,
    "dice_envs.pettingzoo.parallel_env": pettingzoo.parallel_env,
}

# Dataclasses a user reads field by field: each public field has its own `Attributes:` entry.
DOCUMENTED_FIELDS = (
    baselines.Solution,
    TwoPlayerSolution,
    baselines.Evaluation,
    baselines.Exploitability,
    baselines.Equilibrium,
    baselines.ValueErrors,
    YahtzeeSolution,
    Reference,
    Game,
)


def _resolve(path: str) -> object:
    """The object a `::: path` directive names: the longest importable module, then
    attributes (as mkdocstrings finds it; a module's attribute that is also a submodule, such
    as `baselines.exploitability`, resolves to the submodule there too)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise AssertionError(f"{path} names no module")


def _directives() -> dict[str, object]:
    paths = [p for page in sorted(API.glob("*.md")) for p in DIRECTIVE.findall(page.read_text())]
    return {path: _resolve(path) for path in paths}


def attribute_entries(docstring: str) -> list[str]:
    """The names of a Google-style `Attributes:` section's entries, one per entry (an entry
    "a, b: ..." is not two names: mkdocstrings renders it as one)."""
    lines = inspect.cleandoc(docstring).splitlines()
    names: list[str] = []
    for i, line in enumerate(lines):
        if line.strip() != "Attributes:":
            continue
        indent = len(line) - len(line.lstrip()) + 4
        for entry in lines[i + 1 :]:
            if entry.strip() and len(entry) - len(entry.lstrip()) < indent:
                break
            match = re.match(rf"^ {{{indent}}}(\w[\w, ]*?)(?: \([^)]*\))?:(?: |$)", entry)
            if match:
                names.append(match.group(1))
    return names


def test_api_pages_document_the_public_surface():
    documented = _directives()
    assert documented, "no ::: directive in docs/api/*.md"
    missing = [
        name
        for name, obj in REQUIRED.items()
        if not any(found is obj for found in documented.values())
    ]
    assert not missing, f"not in the API reference: {missing}"


@pytest.mark.parametrize("cls", DOCUMENTED_FIELDS, ids=lambda cls: cls.__name__)
def test_every_field_has_an_attribute_entry(cls):
    entries = attribute_entries(cls.__doc__ or "")
    fields = [f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")]
    undocumented = [name for name in fields if name not in entries]
    assert not undocumented, f"{cls.__name__} has no Attributes entry for {undocumented}"
    # ... and no entry names what the class does not have (a renamed or removed field).
    stale = [name for name in entries if not hasattr(cls, name) and name not in fields]
    assert not stale, f"{cls.__name__}'s docstring documents what it has not: {stale}"


def test_attribute_entries_reads_one_name_per_entry():
    doc = """Title.

    Attributes:
        value: one.
        a, b: two names in one entry.
        shape (tuple): typed
            and continued: not an entry.

    Returns:
        after: not an attribute.
    """
    assert attribute_entries(doc) == ["value", "a, b", "shape"]


def test_every_game_page_is_in_the_site_navigation():
    docs_check = docs_check_module()
    nav = set(docs_check.nav_pages(docs_check.read_config(ROOT / "mkdocs.yml")["nav"]))
    missing = [f"games/{entry.slug}.md" for entry in GAMES.values()]
    missing = [page for page in missing if page not in nav]
    assert not missing, f"game pages not in mkdocs.yml's nav: {missing}"
    assert not [page for page in nav if not (ROOT / "docs" / page).exists()]
