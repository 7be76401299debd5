# wovepaper: the two commands a new user needs are `make demo` and `make test`.
PYTHON ?= python3.11
VENV ?= .venv
PY := $(VENV)/bin/python
DATA ?= $(or $(WOVEPAPER_DATA_DIR),../shared/data)/arxiv
HOST ?= 127.0.0.1:8000
STAMP := $(VENV)/.installed

.PHONY: install demo test lint serve clean-db run docs-screenshots

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

# KaTeX from npm (package-lock.json), served with the static files.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch node_modules/.installed

install: $(STAMP) node_modules/.installed

## Harvest the bundled real arXiv records into SQLite, match, summarise, then serve.
## NO_SERVE=1 skips serving; DATA=PATH harvests another folder or file.
demo: install
	@mkdir -p "$${WOVEPAPER_VAR_DIR:-var}"
	$(PY) manage.py migrate --verbosity 0
	$(PY) manage.py demo --data "$(DATA)"
ifndef NO_SERVE
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "serving on http://$(HOST)/  (admin: http://$(HOST)/admin/, API: http://$(HOST)/api/)"
	@echo "(DEBUG=0, as a visitor sees it: run 'manage.py runserver' for Django's debug pages)"
	DEBUG=0 $(PY) manage.py runserver $(HOST)
endif

## Serve what `make demo` built (the embedded SQLite site), without harvesting again.
serve: install
	$(PY) manage.py collectstatic --noinput --verbosity 0
	@echo "serving on http://$(HOST)/  (admin: http://$(HOST)/admin/, API: http://$(HOST)/api/)"
	DEBUG=0 $(PY) manage.py runserver $(HOST)

## Web (gunicorn), a Celery worker on every queue and beat, against the local
## PostgreSQL and Redis (production-like: DEBUG off). Ctrl-C stops all three.
run: export DATABASE_URL := $(or $(DATABASE_URL),postgres://postgres@127.0.0.1:5432/wovepaper)
run: export REDIS_URL := $(or $(REDIS_URL),redis://127.0.0.1:6379/0)
run: export DEBUG := 0
run: install
	@mkdir -p "$${WOVEPAPER_VAR_DIR:-var}"
	createdb -h 127.0.0.1 -U postgres "$${DATABASE_URL##*/}" 2>/dev/null || true
	$(PY) manage.py migrate --verbosity 0
	$(PY) manage.py collectstatic --noinput --verbosity 0
	$(PY) manage.py schedule_ensure
	@echo "web on http://$(HOST)/ (health: /healthz); worker on harvest, matching, notifications; beat"
	trap 'kill $$(jobs -p) 2>/dev/null; wait' INT TERM EXIT; \
	$(VENV)/bin/celery -A wovepaper worker --queues=harvest,matching,notifications,celery --loglevel=INFO & \
	$(VENV)/bin/celery -A wovepaper beat --loglevel=INFO & \
	BIND=$(HOST) $(VENV)/bin/gunicorn -c gunicorn.conf.py

## The whole test suite against the real PostgreSQL on 127.0.0.1:5432.
test: install
	$(PY) -m pytest

## The curator's guide's screenshots (docs/img/), as the browser test takes them.
docs-screenshots: install
	$(PY) -m pytest tests/browser/test_block_review.py
	cd "$${WOVEPAPER_VAR_DIR:-var}/screenshots" && cp block-01-review.png \
		block-05-undo-confirm.png block-06-public-after-undo.png $(CURDIR)/docs/img/

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean-db:
	rm -f "$${WOVEPAPER_VAR_DIR:-var}/wovepaper.sqlite3"
