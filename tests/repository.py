"""The repository's state as git sees it, for tests that check a command left it unchanged."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def repository_state() -> str:
    """Every change to the repository's tracked and untracked files, as git sees them."""
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
