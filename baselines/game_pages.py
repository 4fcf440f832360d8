"""One Markdown page per game, `docs/games/<game>.md`: its rules, spaces, optimum, heuristics
and pictures (written by `make solve`) and its training results (written by the training
report), each between markers that the command owning it rewrites, as in the README."""

from __future__ import annotations

import textwrap
from pathlib import Path

import gymnasium as gym

import dice_envs  # noqa: F401  (registers the ids)
from baselines.readme import replace_section
from dice_envs.registration import game_slug

# The sections of a page, in order, each owned by one command.
SECTIONS = {
    "game": "`make solve`",
    "training-quick": "`make train` (the `quick` budget)",
    "training-full": "`python -m training.report --budget full --out docs/training/full`",
}


def page_path(env_id: str, docs: Path = Path("docs")) -> Path:
    return docs / "games" / f"{game_slug(env_id)}.md"


def write_page_section(env_id: str, name: str, text: str, docs: Path = Path("docs")) -> Path:
    """Rewrite section `name` of the game's page, creating the page with all its sections'
    markers first if it does not exist."""
    if name not in SECTIONS:
        raise ValueError(f"name must be one of {list(SECTIONS)}, got {name!r}")
    path = page_path(env_id, docs)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        title = env_id.split("/")[-1]
        blocks = [
            f"<!-- {key}:start -->\nNot written yet: run {owner}.\n<!-- {key}:end -->"
            for key, owner in SECTIONS.items()
        ]
        path.write_text(
            f"# {title}\n\nGenerated: each part below is rewritten by the command that owns "
            f"it; edit the code, not this page.\n\n" + "\n\n".join(blocks) + "\n"
        )
    replace_section(name, text, path)
    return path


def rules_text(env_id: str) -> str:
    """The env's own docstring (Gymnasium style: Description, spaces, rewards, ...), with its
    headings one level down, and the spaces of the env at its defaults."""
    env = gym.make(env_id).unwrapped
    doc = env.__doc__ or ""
    first, _, rest = doc.partition("\n")
    body = textwrap.dedent(rest).replace("\n## ", "\n### ").strip()
    return (
        f"{first.strip()}\n\n{body}\n\n"
        f"At the defaults: `gym.make({env_id!r})` has observation space "
        f"`{env.observation_space}` and action space `{env.action_space}`."
    )
