"""The tool that times the documentation's examples (docs/tools/example_times.py)."""

from docs.tools.example_times import examples, main, took

PAGE = """# A page

```python
import time
pause = 0.3
```

Some text.

```python
time.sleep(pause)
```

<!-- example-time-sleep:start -->
<!-- example-time-sleep:end -->

```python
time.sleep(pause)
```

<!-- example-not-run: a fragment -->
```python
register(...)
```
"""


def test_a_long_example_gets_its_time_and_an_unmarked_one_fails_the_run(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    assert [block.section for block in examples(PAGE)] == [None, "example-time-sleep", None]
    assert main([str(page), "--long", "0.2"]) == 1  # the last block: 0.3 s and no section
    assert "page.md:17: the example took 0.3 s" in capsys.readouterr().err
    text = page.read_text()
    assert "<!-- example-time-sleep:start -->\n*This example takes under a second here (" in text
    assert main([str(page), "--long", "1"]) == 0


def test_an_example_that_raises_fails_the_run_naming_its_line(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 1\n```\n\n```python\nprint(x)\nraise KeyError('gone')\n```\n")
    assert main([str(page)]) == 1
    error = capsys.readouterr().err
    assert "page.md:5: the example raised" in error and "KeyError: 'gone'" in error


def test_times_read_as_a_person_says_them():
    assert [took(s) for s in (0.4, 1.4, 59.6, 119, 125, 600)] == [
        "under a second", "1 s", "60 s", "119 s", "2 min", "10 min"
    ]  # fmt: skip
