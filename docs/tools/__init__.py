"""The maintainer's tools: they write the repository's README sections, `docs/` pages and
figures from the library's results. Not installed; run from the repository's root, e.g.
`python -m docs.tools.solve` (what `make solve` runs)."""
