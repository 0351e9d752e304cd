"""Benchmarks: ``make bench`` (or ``python -m bench``) runs them and prints a table."""
