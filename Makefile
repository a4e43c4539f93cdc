# One command runs lint, types, the Rust core's checks and the tests: `make check`.
PY ?= python
CARGO ?= cargo
CORE = --manifest-path core/Cargo.toml

.PHONY: check dev lint types rust test screenshots bench

CORE_SO = parsers/_core.abi3.so
CORE_SOURCES = core/Cargo.toml core/Cargo.lock $(wildcard core/src/*.rs core/src/*/*.rs)

# the tests test the core built from the sources beside them: rebuilt first if one is newer
# (tests/test_build.py fails on a stale core when pytest is run by hand)
check: $(CORE_SO) lint types rust test

$(CORE_SO): $(CORE_SOURCES)
	$(MAKE) --no-print-directory dev

# the Rust core rebuilt after an edit (cargo is incremental: well under a second when nothing
# changed) and put where the source tree imports it, renamed into place (a running viewer keeps
# the file it loaded). It touches no venv, so worktrees sharing one venv each build their own.
dev:
	$(CARGO) build $(CORE) --release --features python
	cp core/target/release/lib_core.so parsers/_core.tmp.so
	mv -f parsers/_core.tmp.so $(CORE_SO)

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
