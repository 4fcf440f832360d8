"""Where a benchmark's results go: `OUT/<stem>.json`, and the report as its section of
docs/benchmarks.md when OUT is the repository's docs folder, else as `OUT/<stem>.md`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from docs.tools.readme import BENCHMARKS, DOCS, replace_marked_section


def writes_to_repository(out: Path | None) -> bool:
    return out is not None and Path(out).resolve() == DOCS.resolve()


def write_results(out: Path, stem: str, section: str, results: Any, report: str) -> None:
    """The results as JSON, and the report in the `section` markers or beside the JSON."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
    if writes_to_repository(out):
        replace_marked_section(BENCHMARKS, section, report)
    else:
        (out / f"{stem}.md").write_text(report.rstrip("\n") + "\n")
