"""A simulated cuzk daemon: logs in the real formats with the ground truth behind them.

The demo (`cuzk-tui --demo`), the tests and the benchmarks run it; the parser never imports
it (parsers/ reads bytes, whatever wrote them).
"""
