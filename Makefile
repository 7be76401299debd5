# wovepaper: the two commands a new user needs are `make demo` and `make test`.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
DATA ?= $(or $(WOVEPAPER_DATA_DIR),../shared/data)/arxiv
HOST ?= 127.0.0.1:8000
STAMP := $(VENV)/.installed

.PHONY: install demo test lint serve clean-db

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## Harvest the bundled real arXiv records into SQLite, match, summarise, then serve.
## NO_SERVE=1 skips serving; DATA=PATH harvests another folder or file.
demo: install
	@mkdir -p var
	$(PY) manage.py migrate --verbosity 0
	$(PY) manage.py demo --data "$(DATA)"
ifndef NO_SERVE
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "serving on http://$(HOST)/  (admin: http://$(HOST)/admin/, API: http://$(HOST)/api/)"
	@echo "(DEBUG=0, as a visitor sees it: run 'manage.py runserver' for Django's debug pages)"
	DEBUG=0 $(PY) manage.py runserver $(HOST)
endif

## The whole test suite against the real PostgreSQL on 127.0.0.1:5432.
test: install
	$(PY) -m pytest

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean-db:
	rm -f var/wovepaper.sqlite3
