"""Benchmarks: rillet side by side with redis-server (`rillet bench ...`, `bench/run`).

`latency` is the seeds' end-to-end test as a tool; `suite` runs every
comparison and writes bench/RESULTS.md with plots.
"""
