# One command runs lint, types and tests: `make check`.
PY ?= python

.PHONY: check lint types test screenshots bench

check: lint types test

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

types:
	$(PY) -m mypy

test:
	$(PY) -m pytest -q

screenshots:
	$(PY) screenshots/make_screenshots.py

bench:
	$(PY) benchmarks/bench_report.py
	$(PY) benchmarks/bench_render.py
