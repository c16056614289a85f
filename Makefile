# fleetlab: `make lab` runs the scenarios on the standard topology, `make test` runs the unit
# tests and the scenario suite. Both set up everything first (npm packages, Docker engine,
# images). Overrides: NODES=4 OPENCLAW_VERSION=2026.9.6 SEED=123 SCENARIOS="smoke" REPLAY=path/run.json
SHELL := /bin/bash
export NODES OPENCLAW_VERSION SEED TOPOLOGY
export TESTCONTAINERS_RYUK_DISABLED := true
export TESTCONTAINERS_HOST_OVERRIDE := localhost

.PHONY: lab test unit scenarios bench prune images engine chromium deps typecheck clean help

help:
	@echo "make lab      run the scenarios on the standard topology (SCENARIOS=..., NODES=..., OPENCLAW_VERSION=..., SEED=..., REPLAY=run.json)"
	@echo "make test     unit tests + scenario suite against real OpenClaw in containers"
	@echo "make bench    image, readiness, teardown figures against same-run baselines"
	@echo "make prune    remove what dead runs left (ALL=1: every lab resource)"

# npm packages, installed again only when the lockfile changes. (`npm install`, not `npm ci`:
# vite lists an optional dependency the registry does not have, which `npm ci` refuses.)
node_modules/.fleetlab-deps: package.json package-lock.json docker/mcp/package.json docker/mcp/package-lock.json
	npm install --no-audit --no-fund
	npm --prefix docker/mcp install --no-audit --no-fund --omit=dev
	@touch $@
deps: node_modules/.fleetlab-deps

# A Docker engine that answers (installed and started on Debian as root when missing).
engine:
	@bash lab/engine.sh

# Headless Chromium for the report check at the end of the scenario suite (Debian's package,
# installed as root on Debian when missing).
chromium:
	@bash lab/chromium.sh

lab: deps engine
	npm run --silent fleetlab -- run $(if $(REPLAY),--replay $(REPLAY)) $(SCENARIOS)

test: deps engine chromium
	npm run --silent typecheck
	npm test

unit: deps
	npm run --silent test:unit

scenarios: deps engine chromium
	npm run --silent test:docker

bench: deps engine
	npm run --silent bench

prune: deps engine
	npm run --silent fleetlab -- prune $(if $(ALL),--all)

images: deps engine
	npm run --silent fleetlab -- images

typecheck: deps
	npm run --silent typecheck
