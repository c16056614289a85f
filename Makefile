# fleetlab: `make lab` runs the scenarios on the standard topology, `make test` runs the unit
# tests and the scenario suite. Both set up everything first (npm packages, Docker engine,
# images). Overrides: NODES=4 OPENCLAW_VERSION=2026.9.6 SEED=123 SCENARIOS="smoke" REPLAY=path/run.json
SHELL := /bin/bash
export NODES OPENCLAW_VERSION SEED TOPOLOGY SHARD REPROS LANES
export TESTCONTAINERS_RYUK_DISABLED := true
export TESTCONTAINERS_HOST_OVERRIDE := localhost

.PHONY: repro matrix lab test unit scenarios bench prune images engine chromium deps typecheck clean help nightly-sim costs engine2 engine2-stop

help:
	@echo "make lab      run the scenarios on the standard topology (SCENARIOS=..., NODES=..., OPENCLAW_VERSION=..., SEED=..., REPLAY=run.json)"
	@echo "make test     unit tests + scenario suite against real OpenClaw in containers"
	@echo "make bench    image, readiness, teardown figures against same-run baselines"
	@echo "make prune    remove what dead runs left (ALL=1: every lab resource)"
	@echo "make lab RUNNER=container   run inside a runner container on the engine DOCKER_HOST names (README: Past one machine)"
	@echo "make engine2 / engine2-stop   a second Docker engine on this machine (unix:///run/fleetlab-engine2.sock)"
	@echo "make lab SHARD=2/4   run one shard of the suite (split by scenarios/costs.json), as a nightly runner does"
	@echo "make nightly-sim SHARDS=4   every shard one after another, as the nightly's jobs run them, then the merge"
	@echo "make costs RUNS='<run id>...'   refresh scenarios/costs.json from run folders"
	@echo "make repro NAME=<scenario> N=20 [UNTIL=1]   one scenario N times: reproduced k/N (exit 0 when it reproduced)"
	@echo "make matrix VERSIONS='2026.9.4 2026.9.6' [SCENARIOS=...]   scenarios x OpenClaw versions (newest, last3 resolve at run time)"

# npm packages exactly as the lockfiles say (`npm ci`), installed again only when one changes.
# docker/mcp's install is marked with its lockfile's sha256, as lab/images.ts checks before it
# builds the MCP image (a half-finished install is never reused).
node_modules/.fleetlab-deps: package.json package-lock.json docker/mcp/package.json docker/mcp/package-lock.json
	npm ci --no-audit --no-fund
	npm --prefix docker/mcp ci --no-audit --no-fund --omit=dev
	sha256sum < docker/mcp/package-lock.json | cut -d' ' -f1 > docker/mcp/node_modules/.fleetlab-installed
	@touch $@
deps: node_modules/.fleetlab-deps

# A Docker engine that answers (installed and started on Debian as root when missing).
engine:
	@bash lab/engine.sh

# Headless Chromium for the report check at the end of the scenario suite (Debian's package,
# installed as root on Debian when missing).
chromium:
	@bash lab/chromium.sh

# make exits 2 whenever a recipe fails, whatever the recipe's own code: the lab's code (0 pass,
# 1 fail, 2 bad input or set-up, 3 unknown, 130/143 interrupted) is printed as the last line and
# kept in $(LAST_EXIT) for a CI job or script (or call `npm run --silent fleetlab -- run`).
LAST_EXIT ?= .lab/last-exit
FLEETLAB_RUN ?= npm run --silent fleetlab -- run
lab: deps engine
	@rc=0; $(FLEETLAB_RUN) $(if $(filter container,$(RUNNER)),--in-network) $(if $(REPLAY),--replay $(REPLAY)) $(SCENARIOS) || rc=$$?; \
	  mkdir -p "$$(dirname '$(LAST_EXIT)')" && echo $$rc > '$(LAST_EXIT)'; \
	  case $$rc in 0) m="every verdict accepted: pass, known finding or fixed?";; 1) m="a scenario failed";; 2) m="bad input or set-up";; \
	    3) m="unknown: the lab could not tell";; 129|130|143) m="interrupted";; *) m="unexpected";; esac; \
	  echo "fleetlab: exit $$rc ($$m; kept in $(LAST_EXIT))"; exit $$rc

# One scenario N times, "reproduced k/N" (lab/repro.ts); its own exit code as for make lab:
# 0 reproduced at least once, 1 never, 2 bad input, 3 never but some attempts could not tell.
repro: deps engine
	@rc=0; npm run --silent fleetlab -- repro $(NAME) --n $(or $(N),10) $(if $(UNTIL),--until) || rc=$$?; \
	  mkdir -p "$$(dirname '$(LAST_EXIT)')" && echo $$rc > '$(LAST_EXIT)'; echo "fleetlab: exit $$rc (kept in $(LAST_EXIT))"; exit $$rc

# The scenarios on each OpenClaw version (lab/matrix.ts): VERSIONS="2026.9.4 2026.9.6", newest or last3.
matrix: deps engine
	@rc=0; npm run --silent fleetlab -- matrix --versions "$(VERSIONS)" $(SCENARIOS) || rc=$$?; \
	  mkdir -p "$$(dirname '$(LAST_EXIT)')" && echo $$rc > '$(LAST_EXIT)'; echo "fleetlab: exit $$rc (kept in $(LAST_EXIT))"; exit $$rc

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

# The nightly's shard jobs (.github/workflows/nightly.yml) on this machine, one after another:
# SHARD=1/N..N/N with the shard step's command, then the merge; wall time per shard and total.
nightly-sim: deps engine
	bash lab/testing/simulate-nightly.sh $(or $(SHARDS),4)

# Seconds per scenario for the shard split, from run folders (default: the newest run).
costs: deps
	npm run --silent fleetlab -- costs $(RUNS)

# Past one machine (README): a second Docker engine beside the first, with its own socket, data
# root, bridge and address pool (lab/engine2.sh; root). DOCKER_HOST=unix:///run/fleetlab-engine2.sock
# make lab RUNNER=container then runs there; FLEETLAB_IMAGES_FROM=unix:///var/run/docker.sock
# copies the images from the first engine instead of building them.
engine2:
	@bash lab/engine2.sh start
engine2-stop:
	@bash lab/engine2.sh stop
