# fleetlab: `make lab` runs the scenarios on the standard topology, `make test` runs the unit
# tests and the scenario suite. Both set up everything first (npm packages, Docker engine,
# images). Overrides: NODES=4 OPENCLAW_VERSION=2026.9.6 SEED=123 SCENARIOS="smoke" REPLAY=path/run.json
SHELL := /bin/bash
# Settings given to make (make lab NODES=4) reach the lab as FLEETLAB_* (lab/core/settings.ts); a
# NODES or SEED that is only in the environment is not made into one (the lab still reads the
# unprefixed names, with a notice that they will go).
define pass_setting
ifneq ($(filter command line file override,$(origin $(1))),)
export FLEETLAB_$(1) := $$($(1))
endif
endef
$(foreach v,NODES OPENCLAW_VERSION OPENCLAW_PACKAGE SEED TOPOLOGY SHARD REPROS LANES VERSIONS ROUNDS FLEET,$(eval $(call pass_setting,$(v))))
# The forms of the settings given to make, checked before deps and engine run (a typo is named
# before any install, in the words the lab would use; the lab checks the rest: K <= N, the version).
comma := ,
define check_form
ifneq ($(filter command line,$(origin $(1))),)
ifeq ($$(shell printf '%s' '$$($(1))' | grep -Ex '$(2)'),)
$$(error $(1)=$$($(1)): $(3))
endif
endif
endef
$(eval $(call check_form,LANES,[1-8],give a whole number of scenarios to run at once$(comma) 1 to 8 (1 runs them one after another)))
$(eval $(call check_form,NODES,[0-8],give a whole number of node hosts from 0 to 8 (each needs ~0.6-0.8 GiB)))
$(eval $(call check_form,FLEET,[1-9][0-9]{0$(comma)2}|1000,give a whole number of scripted nodes for the fleet scenarios$(comma) 1 to 1000))
$(eval $(call check_form,SEED,[0-9]{1$(comma)10},give a non-negative integer (the seed of every random choice)))
$(eval $(call check_form,SHARD,[0-9]+/[0-9]+,is not K/N (e.g. SHARD=2/4: the second of four shards)))
# SCENARIOS: each name a scenario file's (scenarios/, parity/, repro/; each file is named for its
# scenario), the lab's refusal in its words; names are separated by spaces. A word with *, ? or
# [...] is a pattern (SCENARIOS='mcp-*'), matched as bash's [[ name == pattern ]] matches, as the
# lab does (lab/core/settings.ts selectNames); one that matches no scenario is refused.
SCENARIO_NAMES := $(basename $(notdir $(filter-out %/index.ts %/main.ts %.test.ts %.scenario.ts %.d.ts,$(wildcard scenarios/*.ts scenarios/parity/*.ts scenarios/repro/*.ts scenarios/fleet/*.ts))))
# The words of SCENARIOS quoted for the shell, so a recipe hands a pattern to the lab unexpanded.
SCENARIO_ARGS = $(foreach s,$(SCENARIOS),'$(s)')
ifneq ($(filter command line,$(origin SCENARIOS)),)
SCENARIO_PATTERNS := $(foreach s,$(SCENARIOS),$(if $(findstring *,$(s))$(findstring ?,$(s))$(findstring [,$(s)),$(s)))
SCENARIO_UNKNOWN := $(filter-out $(SCENARIO_NAMES) $(SCENARIO_PATTERNS),$(SCENARIOS))
SCENARIO_UNMATCHED := $(if $(SCENARIO_PATTERNS),$(shell for p in $(foreach s,$(SCENARIO_PATTERNS),'$(s)'); do m=; for n in $(SCENARIO_NAMES); do [[ $$n == $$p ]] && m=1 && break; done; [ -n "$$m" ] || printf "'%s' " "$$p"; done))
ifneq ($(SCENARIO_UNKNOWN),)
$(error unknown scenario(s): $(SCENARIO_UNKNOWN)$(if $(findstring $(comma),$(SCENARIOS)), (names are separated by spaces: SCENARIOS="$(subst $(comma), ,$(SCENARIOS))")). Known scenarios: $(SCENARIO_NAMES))
endif
ifneq ($(strip $(SCENARIO_UNMATCHED)),)
$(error no scenario matches $(strip $(SCENARIO_UNMATCHED)) (a pattern: * any characters$(comma) ? one$(comma) [ab] one of them); see npx fleetlab list for the names)
endif
endif
export TESTCONTAINERS_RYUK_DISABLED := true
export TESTCONTAINERS_HOST_OVERRIDE := localhost

.PHONY: judge bench-fleet openclaw-docs busy-check repro soak matrix bisect excerpt issue lab test unit scenarios bench prune images engine chromium deps typecheck clean help nightly-sim costs engine2 engine2-stop

help:
	@echo "fleetlab: an integration lab for the OpenClaw gateway and node hosts (README.md; docs/). make help: this list"
	@echo ""
	@echo "Run"
	@echo "  make lab              the scenarios on the standard topology (first: make lab SCENARIOS=smoke)"
	@echo "  make test             typecheck + unit tests + the scenario suite (what .ci/run runs)"
	@echo "  make repro NAME=<scenario> N=10 [UNTIL=1]   one scenario N times: reproduced (the bug) k/N, failed otherwise, ..."
	@echo "  make repro NAME=<scenario> N=1 AIM_OFF=1    the premise self-test: the fault aimed off its path must read unknown"
	@echo "  make matrix VERSIONS='2026.9.4 2026.9.6'    scenarios x OpenClaw versions (newest, lastN too)"
	@echo "  make bisect NAME=<scenario> GOOD=<version> BAD=<version> [N=3] [PRE=1]   the first version whose verdict differs from GOOD's (halving)"
	@echo "  make soak ROUNDS=5 [SCENARIOS=...]          the suite R times: a stability table, what moved first"
	@echo "  make excerpt RUN=<run id> [IDS='<id>...']   keep each finding's raw evidence from a run in fixtures/findings/"
	@echo "  make judge RUN=<run id> [KEEP=1|'<name>...']   judge a stored run again with today's checks and records (nothing runs); KEEP: histories into fixtures/histories/"
	@echo "  make issue ID=<finding id> (or ALL=1)       a bug report for OpenClaw's tracker, in fixtures/findings/reports/"
	@echo "  make openclaw-docs [OPENCLAW_VERSION=<v>]   install that OpenClaw package into the shared cache (no Docker) and print its docs folder"
	@echo "  make bench            set-up, readiness and teardown figures against same-run baselines"
	@echo "  make bench-fleet [VERSIONS='2026.9.6 2026.9.4'] [BENCH_FLEET='10 50 100 200 500']   the gateway's curve under N scripted nodes"
	@echo "  make busy-check [SCENARIOS=...] [QUIET=<run id>]   the scenarios quiet, then with CPU busy loops and a disk job beside them: same verdicts?"
	@echo "  make nightly-sim SHARDS=4   every nightly shard one after another, then the merge"
	@echo "  make costs RUNS='<run id>...'   refresh scenarios/costs.json from run folders"
	@echo "  make findings-docs   write the README's findings list and findings.md's table from the finding records"
	@echo ""
	@echo "Parts of make test"
	@echo "  make typecheck        tsc + eslint (no floating promises)"
	@echo "  make unit             unit tests (no Docker)"
	@echo "  make scenarios        the Docker tests and the scenario suite"
	@echo ""
	@echo "Set-up (each runs by itself when a target needs it)"
	@echo "  make deps             npm ci from the lockfiles"
	@echo "  make engine           a Docker engine that answers (Debian + root: installed and started)"
	@echo "  make images           build (or find) every image and print their tags"
	@echo "  make chromium         headless Chromium for the report check"
	@echo "  make engine2 / engine2-stop   a second Docker engine on this machine (docs/guides/nightly-and-engines.md)"
	@echo ""
	@echo "Clean"
	@echo "  make prune [ALL=1]    remove what dead runs left on the engine (ALL=1: every lab resource)"
	@echo "  make clean [YES=1]    remove the lab's own state: run folders, the shared cache, fleetlab images (says what, asks y/N; YES=1: no question)"
	@echo ""
	@echo "Variables"
	@echo "  SCENARIOS='a b'       scenarios to run, by name or pattern ('mcp-*'): make lab, matrix, soak, busy-check (default: all; make test runs every one, scenarios/repro only with REPROS=1)"
	@echo "  NODES=4  OPENCLAW_VERSION=2026.9.6  SEED=123  TOPOLOGY='{\"nodes\":{\"count\":3}}'"
	@echo "  LANES=3               scenarios side by side (the default; 1: one after another)"
	@echo "  SHARD=2/4             one shard of the suite, as a nightly runner does"
	@echo "  REPLAY=path/run.json  re-run an earlier run's seed and topology"
	@echo "  RUNNER=container      run inside a runner container on the engine DOCKER_HOST names"
	@echo "  REPROS=1              make test also runs scenarios/repro"
	@echo "  RUN, IDS              make excerpt (RUN, KEEP: make judge); ID, ALL: make issue"
	@echo "  QUIET, LOADED         make busy-check: reuse a quiet run, or compare two stored runs"
	@echo "  NAME, N, UNTIL, AIM_OFF  make repro; NAME, GOOD, BAD, N, PRE: make bisect; VERSIONS: make matrix; ROUNDS, FROM: make soak; SHARDS: make nightly-sim; RUNS: make costs; ALL: make prune"
	@echo "  Environment: docs/reference/cli.md (FLEETLAB_STATE, FLEETLAB_CACHE, FLEETLAB_QUIET, ...)"

# npm packages exactly as the lockfiles say (`npm ci`), installed again only when one changes.
# docker/mcp's install is marked with its lockfile's sha256, as lab/engine/images.ts checks before it
# builds the MCP image (a half-finished install is never reused).
node_modules/.fleetlab-deps: package.json package-lock.json docker/mcp/package.json docker/mcp/package-lock.json
	@bash lab/host/machine.sh
	npm ci --no-audit --no-fund
	npm --prefix docker/mcp ci --no-audit --no-fund --omit=dev
	sha256sum < docker/mcp/package-lock.json | cut -d' ' -f1 > docker/mcp/node_modules/.fleetlab-installed
	@touch $@
deps: node_modules/.fleetlab-deps

# A Docker engine that answers (installed and started on Debian as root when missing).
engine:
	@bash lab/host/engine.sh

# Headless Chromium for the report check at the end of the scenario suite (Debian's package,
# installed as root on Debian when missing).
chromium:
	@bash lab/host/chromium.sh

# make exits 2 whenever a recipe fails, whatever the recipe's own code: the lab's code (0 pass,
# 1 fail, 2 bad input or set-up, 3 unknown, 130/143 interrupted) is printed as the last line and
# kept in $(LAST_EXIT) for a CI job or script (or call `npm run --silent fleetlab -- run`).
LAST_EXIT ?= .lab/last-exit
FLEETLAB_RUN ?= npm run --silent fleetlab -- run
lab: deps engine
	@rc=0; $(FLEETLAB_RUN) $(if $(filter container,$(RUNNER)),--in-network) $(if $(REPLAY),--replay $(REPLAY)) $(SCENARIO_ARGS) || rc=$$?; \
	  mkdir -p "$$(dirname '$(LAST_EXIT)')" && echo $$rc > '$(LAST_EXIT)'; \
	  case $$rc in 0) m="every verdict accepted: pass, known finding or fixed?";; 1) m="a scenario failed";; 2) m="bad input or set-up";; \
	    3) m="unknown: the lab could not tell";; 129|130|143) m="interrupted";; *) m="unexpected";; esac; \
	  echo "fleetlab: exit $$rc ($$m; kept in $(LAST_EXIT))"; exit $$rc

# One scenario N times, each attempt reproduced, new signature, failed otherwise, not reproduced or
# could not tell (lab/commands/repro.ts); its own exit code as for make lab: 0 the bug showed at least once,
# 1 it never did and some attempt was judged, 2 bad input, 3 no attempt could tell.
repro: deps engine
	@rc=0; npm run --silent fleetlab -- repro $(NAME) --n $(or $(N),10) $(if $(UNTIL),--until) $(if $(AIM_OFF),--aim-off $(if $(filter-out 1,$(AIM_OFF)),--premise $(AIM_OFF))) || rc=$$?; \
	  mkdir -p "$$(dirname '$(LAST_EXIT)')" && echo $$rc > '$(LAST_EXIT)'; echo "fleetlab: exit $$rc (kept in $(LAST_EXIT))"; exit $$rc

# The stability run (lab/commands/soak.ts): the suite (or SCENARIOS) ROUNDS times (default 5), each
# round a normal run; a table per scenario of verdicts, signatures and times in .lab/runs/soak-<id>/.
# FROM="DIR..." writes the table again from soak folders, run folders or run ids.
soak: deps engine
	@rc=0; npm run --silent fleetlab -- soak $(if $(FROM),--from $(FROM),$(SCENARIO_ARGS)) || rc=$$?; \
	  mkdir -p "$$(dirname '$(LAST_EXIT)')" && echo $$rc > '$(LAST_EXIT)'; echo "fleetlab: exit $$rc (kept in $(LAST_EXIT))"; exit $$rc

# The scenarios on each OpenClaw version (lab/commands/matrix.ts): VERSIONS="2026.9.4 2026.9.6", newest or last3.
matrix: deps engine
	@rc=0; npm run --silent fleetlab -- matrix $(SCENARIO_ARGS) || rc=$$?; \
	  mkdir -p "$$(dirname '$(LAST_EXIT)')" && echo $$rc > '$(LAST_EXIT)'; echo "fleetlab: exit $$rc (kept in $(LAST_EXIT))"; exit $$rc

# The first version that broke (lab/commands/bisect.ts): NAME's scenario N times (default 3) on each
# published version GOOD..BAD halves (PRE=1: pre-releases too); its own exit code as for make lab: 0 the
# first version whose verdict differs from GOOD's found, 1 GOOD and BAD read the same (refused), 2 bad
# input, 3 could not tell. Without NAME, GOOD or BAD it stops in one line before any set-up.
ifneq ($(filter bisect,$(MAKECMDGOALS)),)
BISECT_MISSING := $(strip $(foreach v,NAME GOOD BAD,$(if $($(v)),,$(v))))
ifneq ($(BISECT_MISSING),)
$(error make bisect needs NAME, GOOD and BAD (missing: $(BISECT_MISSING)): make bisect NAME=<scenario> GOOD=<older version, reads as before> BAD=<newer version> [N=3] [PRE=1])
endif
endif
bisect: deps engine
	@rc=0; npm run --silent fleetlab -- bisect $(NAME) --good $(GOOD) --bad $(BAD) --n $(or $(N),3) $(if $(PRE),--pre) || rc=$$?; \
	  mkdir -p "$$(dirname '$(LAST_EXIT)')" && echo $$rc > '$(LAST_EXIT)'; echo "fleetlab: exit $$rc (kept in $(LAST_EXIT))"; exit $$rc

# A finding's evidence kept in the repository, from a run folder (lab/findings/excerpt.ts): the raw
# frames and container log lines that decided it. No engine needed: it reads the run folder.
excerpt: deps
	npm run --silent fleetlab -- excerpt $(RUN) $(IDS)

# A stored run judged again with today's checks and finding records (lab/commands/judge.ts): from
# each scenario's history.json, nothing runs and no engine is needed. RUN=<id|folder|latest>;
# KEEP=1 (every scenario) or KEEP='<name>...' also keeps histories as fixtures/histories/<name>.json.
judge: deps
	npm run --silent fleetlab -- judge $(RUN) $(if $(KEEP),--keep $(filter-out 1,$(KEEP)))

# A bug report for OpenClaw's tracker, per registered finding (lab/findings/issue-report.ts):
# ID=<finding id> writes and prints one, ALL=1 writes every one into fixtures/findings/reports/.
issue: deps
	npm run --silent fleetlab -- issue $(if $(ALL),--all,'$(ID)')

# OpenClaw's own docs before any Docker run: the one set-up step that installs the package into
# the shared cache (lab/engine/images.ts openclawPackage, once per version on the machine; a
# version already there is not installed again), then the docs folder's path.
openclaw-docs: deps
	@npm exec --silent -- node --input-type=module -e 'const { openclawPackage, DEFAULT_OPENCLAW_VERSION } = await import("./lab/engine/images.ts"); const path = await import("node:path"); console.log(path.join(await openclawPackage(process.env.OPENCLAW_VERSION || DEFAULT_OPENCLAW_VERSION), "node_modules/openclaw/docs"))'

test: deps engine chromium
	npm run --silent typecheck
	npm test

unit: deps
	npm run --silent test:unit

scenarios: deps engine chromium
	npm run --silent test:docker

bench: deps engine
	npm run --silent bench

# The gateway's curve under a fleet (lab/bench/fleet.ts): N scripted nodes (BENCH_FLEET, default
# "10 50 100 200 500") on each of VERSIONS (default the pinned version): memory, CPU, node.list,
# health and fan-out latency, OpenClaw's own event-loop figures, against N = 0 of the same lab.
bench-fleet: deps engine chromium
	npm run --silent bench:fleet

# The busy-machine check (lab/bench/busy.ts): SCENARIOS quiet (or the run QUIET names), then again
# with CPU busy loops at twice the cores and a disk-heavy job beside them; both verdict tables and
# the load seen; exit 1 when the loaded run reads a FAIL or UNKNOWN the quiet one lacks.
busy-check: deps engine
	npm run --silent busy-check -- $(if $(QUIET),--quiet $(QUIET)) $(if $(LOADED),--loaded $(LOADED)) $(SCENARIO_ARGS)

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

# The README's findings list and findings.md's table, written again from the finding records
# between their generated markers (scenarios/findings-docs.ts); a unit test fails until they are.
.PHONY: findings-docs
findings-docs: deps
	npm exec --offline -- node scenarios/findings-docs.ts

# Seconds per scenario for the shard split, from run folders (default: the newest run).
costs: deps
	npm run --silent fleetlab -- costs $(RUNS)

# Past one machine (docs/guides/nightly-and-engines.md): a second Docker engine beside the first, with its own socket, data
# root, bridge and address pool (lab/host/engine2.sh; root). DOCKER_HOST=unix:///run/fleetlab-engine2.sock
# make lab RUNNER=container then runs there; FLEETLAB_IMAGES_FROM=unix:///var/run/docker.sock
# copies the images from the first engine instead of building them.
# The lab's own state: this checkout's run folders and state (.lab/), the per-user cache
# (~/.cache/fleetlab: the openclaw package per version, snapshots, probes, the operator identity)
# and every fleetlab image on the engine. Lab containers of live runs are left alone (make prune ALL=1).
# The cache and the images serve every clone on the machine, so it asks first: on a terminal it
# shows what it would remove and asks y/N; without one it refuses (exit 2) unless YES=1.
CACHE_DIR = $(or $(FLEETLAB_CACHE),$(if $(FLEETLAB_STATE),$(FLEETLAB_STATE)/cache,$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/fleetlab))
STATE_DIR = $(or $(FLEETLAB_STATE),.lab)
clean:
	@imgs=$$(docker images --filter reference='fleetlab/*' --format '{{.Repository}}:{{.Tag}}' 2>/dev/null); \
	  echo "make clean removes:"; \
	  echo "  $(STATE_DIR)/ (run folders, last-exit, logs; $$(du -sh $(STATE_DIR) 2>/dev/null | cut -f1 || echo 0))"; \
	  echo "  $(CACHE_DIR)/ (shared by every clone on this machine: package cache, snapshots, probes, operator identity; $$(du -sh $(CACHE_DIR) 2>/dev/null | cut -f1 || echo 0))"; \
	  echo "  $$(echo "$$imgs" | grep -c . ) fleetlab image(s) on the engine (every clone's)"; \
	  if [ "$(YES)" != 1 ]; then \
	    if [ -t 0 ]; then \
	      read -r -p "remove all of this? [y/N] " answer; \
	      case "$$answer" in y|Y|yes|YES) ;; *) echo "make clean: nothing removed"; exit 0;; esac; \
	    else \
	      echo "make clean: not on a terminal, so nothing removed; make clean YES=1 removes it without asking" >&2; exit 2; \
	    fi; \
	  fi; \
	  if [ -n "$$imgs" ]; then docker rmi $$imgs >/dev/null || echo "make clean: some images are in use (make prune ALL=1 first)"; fi; \
	  rm -rf "$(STATE_DIR)" "$(CACHE_DIR)"; echo "make clean: done"

engine2:
	@bash lab/host/engine2.sh start
engine2-stop:
	@bash lab/host/engine2.sh stop
