"""Benchmarks of the explorer's searches on one harness (benchmarks/harness/): run them from the
checkout's root as modules, `python3 -m benchmarks.table`, and see benchmarks/README.md."""
