"""Solver benchmarks: synthetic graph families, the zoo on presets, and the report writer."""
