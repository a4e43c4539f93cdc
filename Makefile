# One command runs lint, types, the Rust core's checks and the tests: `make check`.
PY ?= python
CARGO ?= cargo
CORE = --manifest-path core/Cargo.toml

.PHONY: check lint types rust test screenshots bench

check: lint types rust test

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

types:
	$(PY) -m mypy
	$(PY) -m mypy.stubtest parsers._core

# the core's unit and property tests run without Python (--no-default-features)
rust:
	$(CARGO) fmt $(CORE) --check
	$(CARGO) clippy $(CORE) --all-targets -- -D warnings
	$(CARGO) test $(CORE) --no-default-features

test:
	$(PY) -m pytest -q

screenshots:
	$(PY) screenshots/make_screenshots.py

bench:
	$(PY) benchmarks/bench_core.py
	$(PY) benchmarks/bench_render.py
	$(PY) benchmarks/bench_live.py
	$(PY) benchmarks/bench_viewer.py
