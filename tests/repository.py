"""The repository's state as git sees it, for tests that check a command left it unchanged."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

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


def docs_check_module() -> ModuleType:
    """The maintainer's `tools/docs_check.py` (a script, not a package), imported once."""
    if "docs_check" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "docs_check", REPOSITORY / "tools" / "docs_check.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["docs_check"] = module
        spec.loader.exec_module(module)
    return sys.modules["docs_check"]
