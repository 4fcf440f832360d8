"""The HTML checks of `make docs-check` (tools/docs_check.py), on hand-written pages; no browser."""

from __future__ import annotations

import pytest
from repository import docs_check_module

docs_check = docs_check_module()

PAGE = "http://127.0.0.1:8000/games/pig/"


def page(body: str) -> str:
    return f"<html><head><title>t</title><script>var a = '**';</script></head><body>{body}</body>"


def no_fetch(address: str) -> int:
    raise AssertionError(f"no image to fetch, asked for {address}")


def test_a_rendered_page_has_no_finding():
    html = page(
        "<h1>Pig</h1><p>Hold at <strong>20</strong>; call <code>solve(**kwargs)</code>.</p>"
        "<!-- game:start --><pre><code>::: baselines.solve\n&lt;!-- x --&gt;</code></pre>"
        "<table><tr><th>goal</th></tr><tr><td>100</td></tr></table>"
    )
    assert docs_check.check_page(PAGE, html, no_fetch) == []


@pytest.mark.parametrize(
    ("prose", "leak"),
    [
        ("Hold at **20 and roll.", "**"),
        ("::: baselines.solve", ":::"),
        ("&lt;!-- game:start --&gt; two-player Pig", "<!--"),
        ("see [the report](../report.md) for more", "]("),
        ("| goal | value |\n| --- | --- |", "| --- |"),
        ("call `solve and go", "`"),
    ],
)
def test_markdown_left_in_the_text_is_found(prose, leak):
    findings = docs_check.check_page(PAGE, page(f"<p>{prose}</p>"), no_fetch)
    assert any(f"({leak})" in finding for finding in findings), findings


def test_a_leak_is_reported_with_its_context():
    findings = docs_check.check_page(PAGE, page("<p>The optimum **wins</p>"), no_fetch)
    assert findings == ["Markdown left as text (**): ...The optimum **wins..."]


def test_only_the_image_the_server_lacks_is_found():
    asked = []

    def status_of(address: str) -> int:
        asked.append(address)
        return 200 if address.endswith("/there.png") else 404

    html = page(
        '<p><img src="../../images/there.png" alt="a"><img src="../missing.png"/>'
        '<img src="data:image/png;base64,AAAA"></p>'
    )
    findings = docs_check.check_page(PAGE, html, status_of)
    assert findings == ["image ../missing.png answers 404"]
    assert asked == [
        "http://127.0.0.1:8000/images/there.png",
        "http://127.0.0.1:8000/games/missing.png",
    ]


def test_an_image_from_another_host_is_found_without_fetching():
    findings = docs_check.check_page(PAGE, page('<img src="https://example.org/a.png">'), no_fetch)
    assert len(findings) == 1 and "another host" in findings[0]


@pytest.mark.parametrize(
    "table",
    [
        "<table><thead><tr><th>goal</th><th>value</th></tr></thead><tbody></tbody></table>",
        "<table><tr><th>goal</th></tr><tr><td> </td></tr><tr><td></td></tr></table>",
    ],
)
def test_an_empty_table_is_found(table):
    findings = docs_check.check_page(PAGE, page(f"<p>Before.</p>{table}"), no_fetch)
    assert len(findings) == 1 and findings[0].startswith("table 1 is empty"), findings


def test_the_first_api_page_of_the_nav_and_its_address(tmp_path):
    config = tmp_path / "mkdocs.yml"
    config.write_text(
        "site_name: x\n"
        "markdown_extensions:\n"
        "  - pymdownx.emoji:\n"
        "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n"
        "nav:\n"
        "  - Home: index.md\n"
        "  - Games: [games/pig.md]\n"
        "  - Elsewhere: https://example.org/api/x.md\n"
        "  - API:\n"
        "      - Solving: api/solve.md\n"
        "      - Evaluation: api/evaluate.md\n"
    )
    read = docs_check.read_config(config)
    page = docs_check.first_api_page(read, tmp_path / "docs")
    assert page == "api/solve.md"
    assert docs_check.page_address(page, directory_urls=True) == "api/solve/"
    assert docs_check.page_address(page, directory_urls=False) == "api/solve.html"
    assert docs_check.page_address("api/index.md", directory_urls=True) == "api/"


def test_bad_arguments_are_usage_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        docs_check.main(["--timeout", "0", "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert "--timeout: must be a positive number of seconds" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        docs_check.main(["--config", str(tmp_path / "none.yml"), "--out", str(tmp_path)])
    assert "--config: no such file" in capsys.readouterr().err
