"""Look at the documentation site as a person would (`make docs-check`, a maintainer's tool).

Builds the site with ``mkdocs build --strict`` into a temporary folder, serves it on a free
localhost port, screenshots the home page, a game page and the first API page of the nav at
desktop and phone widths in headless Chromium (Debian's ``chromium``), and reads every page's
HTML for what a reader would notice: Markdown that did not render (``**``, ``:::``, ``<!--``
left in the visible text), images the server does not have, and empty tables.

Usage, from the repository's root::

    python tools/docs_check.py [--out docs-check] [--config mkdocs.yml]

It prints what it wrote and what it found, and exits 1 on a finding. Not part of the tests:
it needs a browser and takes a while.
"""

from __future__ import annotations

import argparse
import base64
import functools
import json
import math
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import yaml

#: (label, viewport width, viewport height) of each screenshot; a phone is a narrow, mobile view.
SCREENS = (("desktop", 1280, 900), ("phone", 390, 844))
#: A full page is written as tiles this tall, so that each file stays readable when opened.
TILE_HEIGHT = 2400
#: Tiles written per page and screen at most; a longer page is cut there (and the output says so).
MAX_TILES = 20
GAME_PAGE = "games/pig.md"
BROWSERS = ("chromium", "chromium-browser", "google-chrome")

#: Text that Markdown should have turned into markup; seen by a reader, it means it did not.
LEAK_PATTERNS = {
    "**": re.compile(r"\*\*"),
    ":::": re.compile(r":::"),
    "<!--": re.compile(r"<!--"),
    "-->": re.compile(r"-->"),
    "](": re.compile(r"\]\("),
    "`": re.compile(r"`"),
    "| --- |": re.compile(r"\|\s*:?-{3,}"),
    "# heading": re.compile(r"(?:^|\n)\s*#{1,6} \S"),
}
#: Elements whose text is code, a script or hidden: Markdown-like text there is not a leak.
NOT_PROSE = {"code", "pre", "script", "style", "svg", "noscript", "template", "kbd", "samp"}


# --- reading a page's HTML -----------------------------------------------------------------


@dataclass
class Table:
    """What a reader sees of one table: its header cells and its body cells' text."""

    header: list[str] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)


class PageReader(HTMLParser):
    """Collects a page's visible prose, its image sources and its tables."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.prose: list[str] = []
        self.images: list[str] = []
        self.tables: list[Table] = []
        self._hidden_depth = 0
        self._open_tables: list[Table] = []
        self._cell: list[str] | None = None
        self._cell_is_header = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in NOT_PROSE:
            self._hidden_depth += 1
        elif tag == "img":
            src = dict(attrs).get("src")
            if src:
                self.images.append(src)
        elif tag == "table":
            self._open_tables.append(Table())
        elif tag in ("td", "th") and self._open_tables:
            self._cell, self._cell_is_header = [], tag == "th"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in NOT_PROSE:
            self._hidden_depth = max(0, self._hidden_depth - 1)
        elif tag in ("td", "th") and self._cell is not None and self._open_tables:
            text = " ".join("".join(self._cell).split())
            table = self._open_tables[-1]
            (table.header if self._cell_is_header else table.cells).append(text)
            self._cell = None
        elif tag == "table" and self._open_tables:
            self.tables.append(self._open_tables.pop())

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._hidden_depth == 0 and data.strip():
            self.prose.append(data)


def read_page(html: str) -> PageReader:
    """Parse one page's HTML."""
    reader = PageReader()
    reader.feed(html)
    reader.close()
    return reader


def leaked_markdown(prose: Sequence[str]) -> list[str]:
    """Findings for Markdown syntax left in a page's visible (non-code) text."""
    findings = []
    for text in prose:
        for name, pattern in LEAK_PATTERNS.items():
            match = pattern.search(text)
            if match:
                start, end = max(0, match.start() - 40), match.end() + 40
                context = " ".join(text[start:end].split())
                findings.append(f"Markdown left as text ({name}): ...{context}...")
    return findings


def empty_tables(tables: Sequence[Table]) -> list[str]:
    """Findings for tables with no body row, or whose body cells are all blank."""
    findings = []
    for number, table in enumerate(tables, start=1):
        if not any(table.cells):
            header = " | ".join(table.header) or "no header"
            findings.append(f"table {number} is empty (header: {header})")
    return findings


def missing_images(
    page_url: str, sources: Sequence[str], status_of: Callable[[str], int]
) -> list[str]:
    """Findings for images on this page that the site's own server does not answer with 200.

    Args:
        page_url: the page's address, against which relative sources are resolved.
        sources: the ``src`` of each ``<img>`` on the page.
        status_of: the HTTP status the server gives an address.
    """
    findings = []
    site = urlsplit(page_url).netloc
    for source in sources:
        if source.startswith("data:"):
            continue
        address = urljoin(page_url, source)
        if urlsplit(address).netloc != site:
            findings.append(f"image from another host (a reader offline sees none): {source}")
            continue
        status = status_of(address)
        if status != 200:
            findings.append(f"image {source} answers {status}")
    return findings


def check_page(page_url: str, html: str, status_of: Callable[[str], int]) -> list[str]:
    """Everything a reader would notice on one page, as findings."""
    page = read_page(html)
    return (
        leaked_markdown(page.prose)
        + missing_images(page_url, page.images, status_of)
        + empty_tables(page.tables)
    )


# --- the site: config, build, server ---------------------------------------------------------


class _AnyTagLoader(yaml.SafeLoader):
    """Reads mkdocs.yml without running its Python tags (``!!python/name:...``, ``!ENV``)."""


_AnyTagLoader.add_multi_constructor("", lambda loader, suffix, node: None)
_AnyTagLoader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, s, node: None)


def read_config(path: Path) -> dict:
    """The mkdocs config as a dict; a clear ValueError if it is missing or not a mapping."""
    if not path.is_file():
        raise ValueError(f"--config: no such file {path}; give the site's mkdocs.yml")
    config = yaml.load(path.read_text(encoding="utf-8"), Loader=_AnyTagLoader)  # noqa: S506
    if not isinstance(config, dict):
        raise ValueError(f"--config: {path} is not a mkdocs config (a YAML mapping)")
    return config


def nav_pages(nav: object) -> Iterator[str]:
    """Every page path in a mkdocs nav, in order (external links left out)."""
    if isinstance(nav, str):
        if "://" not in nav:
            yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from nav_pages(value)


def first_api_page(config: dict, docs_dir: Path) -> str:
    """The first page under ``api/`` in the nav (or, with no nav, in the docs folder)."""
    pages = list(nav_pages(config.get("nav"))) or sorted(
        path.relative_to(docs_dir).as_posix() for path in docs_dir.rglob("*.md")
    )
    for page in pages:
        if page.startswith("api/"):
            return page
    raise ValueError("--config: the nav has no page under api/ to screenshot")


def page_address(page: str, directory_urls: bool) -> str:
    """The site-relative address mkdocs gives a Markdown page."""
    stem = page.removesuffix(".md")
    if stem == "index" or stem.endswith("/index"):
        return stem.removesuffix("index")
    return f"{stem}/" if directory_urls else f"{stem}.html"


def build_site(config_path: Path, site_dir: Path) -> None:
    """``mkdocs build --strict``; a RuntimeError carrying mkdocs' output if it fails."""
    command = [sys.executable, "-m", "mkdocs", "build", "--strict"]
    command += ["--config-file", str(config_path), "--site-dir", str(site_dir)]
    quiet = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's end-of-life banner
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=quiet)
    if done.returncode != 0:
        raise RuntimeError(f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}")


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        """Keep the server's request log out of the report."""


@contextmanager
def serve(site_dir: Path) -> Iterator[str]:
    """Serve a folder on a free localhost port in a thread; yields its base address."""
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def http_status(address: str) -> int:
    """The status a HEAD request for ``address`` gets."""
    try:
        with urllib.request.urlopen(urllib.request.Request(address, method="HEAD"), timeout=10):
            return 200
    except urllib.error.HTTPError as error:
        return error.code


# --- the browser -------------------------------------------------------------------------------


class Browser:
    """Headless Chromium driven over its DevTools pipe (file descriptors 3 and 4), no library.

    The command line's ``--screenshot`` cannot take a whole page; the DevTools protocol can.
    """

    def __init__(self, executable: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="docs-check-chromium-")
        to_browser_read, self._to_browser = os.pipe()
        self._from_browser, from_browser_write = os.pipe()
        flags = "--headless=new --no-sandbox --disable-gpu --hide-scrollbars"
        flags += f" --remote-debugging-pipe --user-data-dir={self._profile}"
        script = f'exec "$0" {flags} 3<&{to_browser_read} 4>&{from_browser_write}'
        self._process = subprocess.Popen(
            ["sh", "-c", script, executable],
            pass_fds=(to_browser_read, from_browser_write),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches this script, which then ends the browser
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        self._buffer = b""
        self._next_id = 0

    def close(self) -> None:
        """End the browser and every process it started, and remove its profile."""
        if self._process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self._process.pid, 9)
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)

    def _receive(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError(f"chromium did not answer within {self.timeout:.0f} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(message)

    def _send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self._next_id += 1
        message: dict = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        return self._next_id

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """One DevTools command; its result (events arriving meanwhile are dropped)."""
        sent = self._send(method, params, session)
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._receive(deadline)
            if message.get("id") == sent:
                if "error" in message:
                    raise RuntimeError(f"chromium: {method}: {message['error']}")
                return message["result"]

    def open(self, address: str, width: int, height: int) -> tuple[str, str]:
        """Open a page in a new tab of this viewport, and wait for it to load.

        Returns:
            The tab's target id and the DevTools session attached to it.
        """
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})
        session_id = session["sessionId"]
        self.call("Page.enable", session=session_id)
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600}
        self.call("Emulation.setDeviceMetricsOverride", metrics, session=session_id)
        self.call("Page.navigate", {"url": address}, session=session_id)
        deadline = time.monotonic() + self.timeout
        while self._receive(deadline).get("method") != "Page.loadEventFired":
            pass
        return target, session_id

    def screenshot(self, address: str, width: int, height: int, stem: Path) -> list[Path]:
        """The whole page as PNG tiles ``stem-1.png``, ``stem-2.png``, ...; their paths."""
        target, session = self.open(address, width, height)
        page_height = math.ceil(
            self.call("Page.getLayoutMetrics", session=session)["cssContentSize"]["height"]
        )
        written = []
        for number, top in enumerate(range(0, page_height, TILE_HEIGHT)[:MAX_TILES], start=1):
            clip = {"x": 0, "y": top, "width": width, "scale": 1}
            clip["height"] = min(TILE_HEIGHT, page_height - top)
            params = {"format": "png", "captureBeyondViewport": True, "clip": clip}
            shot = self.call("Page.captureScreenshot", params, session=session)
            path = stem.with_name(f"{stem.name}-{number}.png")
            path.write_bytes(base64.b64decode(shot["data"]))
            written.append(path)
        if page_height > MAX_TILES * TILE_HEIGHT:
            print(f"  {stem.name}: page is {page_height} px tall; only the first {MAX_TILES} tiles")
        self.call("Target.closeTarget", {"targetId": target})
        return written


# --- the command -------------------------------------------------------------------------------


def find_browser(name: str | None) -> str:
    """The path of the Chromium to run: ``name``, or the first of BROWSERS on the PATH."""
    for candidate in [name] if name else BROWSERS:
        path = shutil.which(candidate)
        if path:
            return path
    wanted = name or " or ".join(BROWSERS)
    raise ValueError(f"--browser: {wanted} not found; install Debian's chromium package")


def pages_to_shoot(config: dict, config_path: Path) -> dict[str, str]:
    """Name -> site-relative address of the pages to screenshot: home, a game, an API page."""
    docs_dir = config_path.parent / str(config.get("docs_dir", "docs"))
    directory_urls = bool(config.get("use_directory_urls", True))
    return {
        "home": "",
        "game": page_address(GAME_PAGE, directory_urls),
        "api": page_address(first_api_page(config, docs_dir), directory_urls),
    }


def check_site(site_dir: Path, base: str) -> tuple[int, list[str]]:
    """The number of built pages, and their findings, each prefixed with the page's address."""
    status_of = functools.cache(http_status)
    findings = []
    pages = sorted(site_dir.rglob("*.html"))
    for path in pages:
        address = path.relative_to(site_dir).as_posix()
        if address == "index.html" or address.endswith("/index.html"):
            address = address.removesuffix("index.html")
        page = check_page(base + address, path.read_text(encoding="utf-8"), status_of)
        findings += [f"/{address}: {finding}" for finding in page]
    return len(pages), findings


def take_screenshots(browser: Browser, base: str, pages: dict[str, str], out: Path) -> list[str]:
    """Screenshot each page at each screen width into ``out``; findings for missing pages."""
    for old in out.glob("*-*-*.png"):
        if old.name.split("-")[0] in pages:
            old.unlink()
    findings = []
    for name, address in pages.items():
        status = http_status(base + address)
        if status != 200:
            findings.append(f"/{address}: the {name} page to screenshot answers {status}")
            continue
        for label, width, height in SCREENS:
            for path in browser.screenshot(base + address, width, height, out / f"{name}-{label}"):
                print(f"wrote {path} (/{address}, {width} px wide)")
    return findings


def run(args: argparse.Namespace) -> int:
    """Build, check and screenshot the site; 1 if anything was found, else 0."""
    started = time.monotonic()
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out: {out} is a file; give a folder for the screenshots")
    if not args.timeout > 0:
        raise ValueError(f"--timeout: must be a positive number of seconds, got {args.timeout}")
    config_path = Path(args.config).resolve()
    config = read_config(config_path)
    pages = pages_to_shoot(config, config_path)
    executable = find_browser(args.browser)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="docs-check-site-") as temporary:
        site_dir = Path(temporary) / "site"
        try:
            build_site(config_path, site_dir)
        except RuntimeError as error:
            print(error)
            return 1
        with serve(site_dir) as base:
            pages_checked, findings = check_site(site_dir, base)
            browser = Browser(executable, timeout=args.timeout)
            try:
                findings += take_screenshots(browser, base, pages, out)
            finally:
                browser.close()
    for finding in findings:
        print(f"FOUND {finding}")
    seconds = time.monotonic() - started
    print(f"{pages_checked} pages read, {len(findings)} finding(s), in {seconds:.1f} s")
    return 1 if findings else 0


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: parse, run, and turn bad arguments into a usage error."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="docs-check", help="folder for the screenshots")
    parser.add_argument("--config", default="mkdocs.yml", help="the site's mkdocs config")
    parser.add_argument("--browser", help="Chromium to run (default: the first on the PATH)")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to wait for a page to load"
    )
    args = parser.parse_args(argv)
    try:
        return run(args)
    except ValueError as error:
        parser.error(str(error))
    except KeyboardInterrupt:
        print("interrupted: server stopped, browser ended, temporary files removed")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
