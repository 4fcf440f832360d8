"""The benchmarks (`make bench`): the library's speed beside its peers, measured in one run.
Not installed; run from the repository's root, e.g. `python -m benchmarks.library`."""
