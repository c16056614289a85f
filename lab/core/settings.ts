// Every setting of a run, in one table: its flag, its environment variable (prefixed, so a stray
// NODES or SEED in a CI environment changes nothing) and what it does. `make` passes its
// variables (make lab NODES=4) as the prefixed names; the unprefixed names are still read from
// the environment, with a notice, so scripts that set them keep working for now. Every other
// variable the lab's process reads (the engine's, the machine's, the bench's, its own hand-offs)
// is in the second table, ENVIRONMENT: the environment is read here and nowhere else (a test,
// lab/ci/settings.test.ts).
import { LabError } from "./errors.ts";

export interface Setting {
  /** The make variable and the old environment name. */
  name: string;
  /** The environment variable read first. */
  env: string;
  /** The CLI flag (commands that take it: run, repro, matrix, up). */
  flag?: string;
  what: string;
}

/**
 * Every environment variable the lab's process reads besides the settings above, with what it is
 * for. Read with env(NAME); a name not here is a type error.
 */
export const ENVIRONMENT = {
  DOCKER_HOST: "the Docker engine to use (default the local socket /var/run/docker.sock)",
  TESTCONTAINERS_RYUK_DISABLED: "Testcontainers' reaper: the lab sets it to true (its own clean-up removes what it made)",
  TESTCONTAINERS_HOST_OVERRIDE: "where Testcontainers reaches mapped ports: the lab sets it to localhost",
  PATH: "where child processes find their programs (git, npm)",
  HOME: "the home of child processes (git)",
  TERM: "dumb: no live progress line",
  XDG_CACHE_HOME: "the cache's parent folder (default ~/.cache)",
  CHROMIUM: "the Chromium binary for the report check (default /usr/bin/chromium)",
  FLEETLAB_STATE: "the lab's state folder (default .lab in the checkout)",
  FLEETLAB_CACHE: "the shared cache: OpenClaw packages, snapshots, capabilities (default ~/.cache/fleetlab, or <state>/cache)",
  FLEETLAB_QUIET: "1: no progress lines on stderr",
  FLEETLAB_DEBUG: "set: stack traces with the bench's errors",
  FLEETLAB_RUN_ID: "the run id to use (the runner container hands its own on)",
  FLEETLAB_IN_NETWORK: "set inside the runner container: its own container id, to join each lab network",
  FLEETLAB_ENGINE_SOCKET: "the engine socket the runner container mounts (default from DOCKER_HOST)",
  FLEETLAB_CLEANUP_TIMEOUT_S: "how long clean-up may take before it gives up (default 180 s)",
  FLEETLAB_IMAGE_SALT: "a salt in every image tag: images built again (the bench's cold builds)",
  FLEETLAB_IMAGES_FROM: "a folder of saved images to load instead of building",
  FLEETLAB_DEBIAN_SOURCES: "the apt sources file handed to image builds",
  FLEETLAB_START_ORDER: "how a lab starts its members (lab/topology/lab.ts startOrder)",
  FLEETLAB_SNAPSHOT: "0/off: every lab pairs from scratch instead of restoring a snapshot",
  FLEETLAB_PACE: "a fixed pace for the lab's deadlines instead of the measured one",
  FLEETLAB_CPU_SHARE: "0/off: the lab claims no CPU share of its own",
  BENCH_TRIALS: "make bench: trials per figure (default 2)",
  BENCH_SCALE_TRIALS: "make bench: trials per scale step (default 1)",
  BENCH_SCALE: "make bench: node counts of the scale sweep",
  BENCH_SNAPSHOT: "make bench: 0 leaves the snapshot figures out",
  BENCH_COLD: "make bench: 0 leaves the cold image builds out",
  BENCH_FIRST: "make bench: 0 leaves the first-time set-up out",
  BENCH_STARTS: "make bench: 0 leaves the start figures out",
  BENCH_ORDER: "make bench: 0 leaves the start-order comparison out",
  BENCH_FAULTS: "make bench: 0 leaves the fault figures out",
  BENCH_FAULT_TRIALS: "make bench: trials per fault (default 5)",
  BENCH_WIRE: "make bench: 0 leaves the wire timing out",
  BENCH_SUITE: "make bench: 0 leaves the suite's figures out",
  BENCH_SUITE_SCENARIOS: "make bench: the scenarios of the suite's figures",
  BENCH_FLEET: "make bench-fleet: the fleet sizes of the sweep",
} as const;

export type EnvName = keyof typeof ENVIRONMENT;

/** An environment variable of ENVIRONMENT (empty counts as set: callers that treat it as unset say so). */
export function env(name: EnvName, from: NodeJS.ProcessEnv = process.env): string | undefined {
  return from[name];
}

/** Set (or with undefined remove) one of ENVIRONMENT for this process and its children. */
export function setEnv(name: EnvName, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/** The whole environment: a child process inherits it, and the readers that take an environment default to it. */
export function environment(): NodeJS.ProcessEnv {
  return process.env;
}

/** The fleet scenarios' scripted nodes unless FLEET says otherwise: 200 beside the 2 real node hosts, on 2 cores. */
export const DEFAULT_FLEET = 200;

export const SETTINGS: Setting[] = [
  { name: "NODES", env: "FLEETLAB_NODES", flag: "nodes", what: "node hosts in the standard topology (default 2)" },
  { name: "OPENCLAW_VERSION", env: "FLEETLAB_OPENCLAW_VERSION", flag: "openclaw-version", what: "the exact OpenClaw version under test (default the pinned one, lab/definitions/spec.ts)" },
  { name: "OPENCLAW_PACKAGE", env: "FLEETLAB_OPENCLAW_PACKAGE", flag: "openclaw-package", what: "your own build under test in place of a published version: a .tgz from npm pack / pnpm pack, a folder holding one, or an unpacked package (named <version>+<hash>)" },
  { name: "SEED", env: "FLEETLAB_SEED", flag: "seed", what: "the seed of every random choice (default random, printed)" },
  { name: "TOPOLOGY", env: "FLEETLAB_TOPOLOGY", flag: "topology", what: `topology overrides as JSON, e.g. '{"nodes":{"capacity":1}}'` },
  { name: "LANES", env: "FLEETLAB_LANES", flag: "lanes", what: "scenarios side by side, 1 to 8 (default 3)" },
  { name: "SHARD", env: "FLEETLAB_SHARD", flag: "shard", what: "run only shard K of N, K/N" },
  { name: "VERSIONS", env: "FLEETLAB_VERSIONS", flag: "versions", what: "make matrix: exact versions, newest, lastN, or paths of packed builds" },
  { name: "REPROS", env: "FLEETLAB_REPROS", what: "make test: 1 also runs scenarios/repro" },
  { name: "ROUNDS", env: "FLEETLAB_ROUNDS", flag: "rounds", what: "make soak: rounds of the suite (default 5)" },
  { name: "FLEET", env: "FLEETLAB_FLEET", what: `the fleet scenarios' scripted nodes (scenarios/fleet/; default ${DEFAULT_FLEET}, 1 to 1000)` },
];

/** FLEET: how many scripted nodes each fleet scenario brings up (1 to 1000). */
export function fleetSize(from: NodeJS.ProcessEnv = process.env): number {
  const raw = (setting("FLEET", from) ?? "").trim();
  if (!raw) return DEFAULT_FLEET;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new LabError(`FLEET=${raw}: give a whole number of scripted nodes for the fleet scenarios, 1 to 1000 (default ${DEFAULT_FLEET})`);
  return n;
}

const noticed = new Set<string>();

/** A setting's value: FLEETLAB_<NAME>, else the unprefixed name (said once per process). Empty counts as unset. */
export function setting(name: string, from: NodeJS.ProcessEnv = process.env): string | undefined {
  const s = SETTINGS.find((x) => x.name === name);
  if (!s) throw new Error(`no setting ${name}`);
  const v = from[s.env];
  if (v !== undefined && v !== "") return v;
  const old = from[s.name];
  if (old === undefined || old === "") return undefined;
  if (from === process.env && !noticed.has(s.name)) {
    noticed.add(s.name);
    // A warning, not progress: said even when progress is quiet.
    process.stderr.write(`fleetlab: ${s.name}=${old} is read from the environment as ${s.env}; set ${s.env} (or make ... ${s.name}=...) instead, the unprefixed name will go\n`);
  }
  return old;
}

/** Flags given on the command line, written to their environment variables before anything reads them. */
export function applyFlags(values: Record<string, unknown>, to: NodeJS.ProcessEnv = process.env): void {
  for (const s of SETTINGS) {
    const v = s.flag ? values[s.flag] : undefined;
    if (typeof v === "string") to[s.env] = v;
  }
}

/** The settings table for help texts and docs. */
export function settingsTable(): string {
  const w = Math.max(...SETTINGS.map((s) => `${s.flag ? `--${s.flag}` : ""}`.length));
  const e = Math.max(...SETTINGS.map((s) => s.env.length));
  const m = Math.max(...SETTINGS.map((s) => s.name.length)) + 1;
  return SETTINGS.map((s) => `  ${(s.flag ? `--${s.flag}` : "").padEnd(w)}  ${s.env.padEnd(e)}  ${`${s.name}=`.padEnd(m)}  ${s.what}`).join("\n");
}

/**
 * Three lanes: measured on 2 cores (openclaw 2026.9.6, the full make lab) two lanes used 58% of
 * the CPU (the rest idle while scenarios wait on OpenClaw's timers and windows) in 27 min 50 s;
 * three used 69% in 20 min 56 s with the same verdicts. Admission (lab/run/admission.ts) still
 * brings a lab up only with the headroom it plans for, so a busier machine narrows them.
 */
export const DEFAULT_LANES = 3;

/** LANES (--lanes is written there by applyFlags): how many scenarios run at once, 1 to 8. */
export function lanesFromEnv(from: NodeJS.ProcessEnv = process.env): number {
  const raw = (setting("LANES", from) ?? "").trim();
  if (!raw) return DEFAULT_LANES;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 8) throw new LabError(`LANES=${raw}: give a whole number of scenarios to run at once, 1 to 8 (1 runs them one after another; default ${DEFAULT_LANES})`);
  return n;
}

/**
 * Scenario selection by name or pattern (`fleetlab run 'mcp-*'`, make lab SCENARIOS='repro-13*'):
 * a word with `*` (any characters), `?` (one character) or `[...]` (one of them; `[!...]` none of
 * them) is a pattern matched against the whole name, as the shell's globs match a file name (the
 * Makefile's check matches with bash's `[[ name == pattern ]]`, the same rules); any other word is
 * a name. Scenario names are `[a-z0-9-]`, so those three are all a pattern needs (Node's own
 * path.matchesGlob warns that it is experimental on every first use in Node 24).
 */
export const isNamePattern = (word: string): boolean => /[*?[]/.test(word);

/** A pattern as a RegExp over a whole name. */
export function namePattern(pattern: string): RegExp {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    const close = c === "[" ? pattern.indexOf("]", i + 2) : -1;
    if (c === "*") re += ".*";
    else if (c === "?") re += ".";
    else if (close > 0) {
      const set = pattern.slice(i + 1, close);
      re += `[${set.startsWith("!") ? `^${set.slice(1)}` : set}]`.replace(/\\/g, "\\\\");
      i = close;
    } else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/**
 * The names `words` select from `known`: each name, and each pattern's matches in `known`'s
 * order, once each; the plain words no scenario has (`unknown`) and the patterns that match none
 * (`unmatched`), for the caller to refuse.
 */
export function selectNames(words: string[], known: string[]): { names: string[]; unknown: string[]; unmatched: string[] } {
  const names: string[] = [];
  const unknown: string[] = [];
  const unmatched: string[] = [];
  for (const w of words) {
    const hits = isNamePattern(w) ? known.filter((k) => namePattern(w).test(k)) : known.includes(w) ? [w] : [];
    if (!hits.length) (isNamePattern(w) ? unmatched : unknown).push(w);
    for (const h of hits) if (!names.includes(h)) names.push(h);
  }
  return { names, unknown, unmatched };
}

/** The refusal of patterns that match no scenario: names them and where the names are. */
export function unmatchedText(unmatched: string[]): string {
  return `no scenario matches ${unmatched.map((p) => `'${p}'`).join(", ")} (a pattern: * any characters, ? one, [ab] one of them); see 'fleetlab list' for the names`;
}
