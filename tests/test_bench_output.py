"""benchmarks.output: where a benchmark writes its results."""

import json

from benchmarks.output import write_results, writes_to_repository
from docs.tools.readme import DOCS


def test_results_go_beside_each_other_outside_the_docs_folder(tmp_path):
    out = tmp_path / "new" / "folder"
    write_results(out, "bench_x", "x-bench", {"rate": 1.5}, "### X\n\n| a |\n")
    assert json.loads((out / "bench_x.json").read_text()) == {"rate": 1.5}
    assert (out / "bench_x.md").read_text() == "### X\n\n| a |\n"
    assert not writes_to_repository(out)
    assert not writes_to_repository(None)
    assert writes_to_repository(DOCS) and writes_to_repository(DOCS / ".." / "docs")
