"""How long the documentation's Python examples take here (`make examples`, a maintainer's tool).

    python -m docs.tools.example_times [--long SECONDS] [PAGE ...]

Runs the ```` ```python ```` blocks of each page (the README and the site's hand-written pages
by default) in order, one fresh process per page, so a block may use the names of the blocks
before it as a reader running them would; the process works in a temporary folder, so an
example that saves a file writes nothing into the repository. Each block is timed (wall clock).

A block right after an `<!-- example-not-run: why -->` comment is left out (a fragment, or
one that needs a run folder of the reader's own). A block followed by an
`example-time-<label>` section (`<!-- example-time-<label>:start -->`
and `:end -->`, nothing but blank lines between the block and the start marker) gets its time
written there. The run fails (exit 1) on a block that raises, and on a block that took longer
than `--long` seconds without such a section: every long example says how long it takes.
Time it on a quiet machine: the times are what a reader can expect here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dice_envs import __version__
from docs.tools.game_pages import replace_section
from docs.tools.readme import DOCS, README, ROOT

LONG_SECONDS = 5.0  # an example this long (or longer) must say how long it takes
PAGES = (README, *sorted(DOCS.glob("*.md")))
_BLOCK = re.compile(r"^```python\n(.*?)^```[ \t]*\n", re.S | re.M)
_TIME_MARKER = re.compile(r"\s*<!-- (example-time-[\w-]+):start -->")
_NOT_RUN = re.compile(r"<!-- example-not-run: [^>]*-->\s*\Z")

# Runs in the child: the blocks as JSON on stdin, a line of (seconds, error) per block.
RUNNER = """
import json, sys, time, traceback
blocks, names = json.loads(sys.stdin.read()), {"__name__": "__main__"}
for index, code in enumerate(blocks):
    start, error = time.perf_counter(), None
    try:
        exec(compile(code, f"block {index + 1}", "exec"), names)
    except BaseException:
        error = traceback.format_exc(limit=-3)
    print("@example-time", json.dumps([time.perf_counter() - start, error]), flush=True)
    if error:
        break
"""


@dataclass
class Example:
    """One python block of a page: its code, the line it starts on, and the name of the
    section its time goes in (None: no section)."""

    code: str
    line: int
    section: str | None


def examples(text: str) -> list[Example]:
    """The python blocks of a page's text that are run, in order, with their time sections."""
    found = []
    for match in _BLOCK.finditer(text):
        if _NOT_RUN.search(text, 0, match.start()):
            continue
        marker = _TIME_MARKER.match(text, match.end())
        line = text.count("\n", 0, match.start()) + 1
        found.append(Example(match.group(1), line, marker.group(1) if marker else None))
    return found


def run_examples(blocks: list[Example]) -> list[tuple[float, str | None]]:
    """(seconds, traceback or None) of each block run in order in one fresh process; the
    list stops at the first block that raised."""
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [sys.executable, "-c", RUNNER],
            input=json.dumps([block.code for block in blocks]),
            capture_output=True,
            text=True,
            cwd=scratch,
            env={**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"},
        )
    results = []
    for line in done.stdout.splitlines():
        if line.startswith("@example-time "):  # the other lines are the examples' own output
            seconds, error = json.loads(line.split(" ", 1)[1])
            results.append((float(seconds), error))
    if len(results) < len(blocks) and not any(error for _, error in results):
        results.append((0.0, f"the process ended (status {done.returncode}):\n{done.stderr}"))
    return results


def took(seconds: float) -> str:
    """A block's time as a reader would say it: "under a second", "12 s", "3 min"."""
    if seconds < 1:
        return "under a second"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min"


def time_page(path: Path, long_seconds: float) -> list[str]:
    """Run the page's blocks and write their time sections; the problems found (a block that
    raised, a long block with no time section), as lines naming the page and the block."""
    blocks = examples(path.read_text())
    if not blocks:
        return []
    problems, machine = [], f"{os.cpu_count()} cores, {platform.machine()}"
    for block, (seconds, error) in zip(blocks, run_examples(blocks), strict=False):
        where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{block.line}"
        if error:
            problems.append(f"{where}: the example raised:\n{error}")
            break
        print(f"{where}: {seconds:.2f} s", flush=True)
        if block.section is not None:
            text = (
                f"*This example takes {took(seconds)} here ({machine}, dice-envs {__version__}).*"
            )
            replace_section(block.section, text, path)
        elif seconds >= long_seconds:
            problems.append(
                f"{where}: the example took {seconds:.1f} s (>= {long_seconds:g} s) and does not "
                "say how long it takes: add an example-time section after it"
            )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs.tools.example_times")
    parser.add_argument("pages", nargs="*", type=Path, help="the pages (default: README, docs)")
    parser.add_argument("--long", type=float, default=LONG_SECONDS, help="seconds")
    args = parser.parse_args(argv)
    if args.long <= 0:
        parser.error(f"--long must be > 0 seconds, got {args.long}")
    missing = [str(page) for page in args.pages if not page.is_file()]
    if missing:
        parser.error(f"pages must be existing files; not found: {', '.join(missing)}")
    problems = []
    for page in args.pages or PAGES:
        problems += time_page(page.resolve(), args.long)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
