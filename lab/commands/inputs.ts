// A command's input, checked without the engine, the scenarios' code or the network: the settings
// (flags written to their variables first), the topology, the seed, the lanes, the shard, a given
// run id, a replay, and each command's own numbers and versions. scenarios/main.ts calls
// checkInput before the lab loads, so bad input is refused in a fraction of a second with nothing
// created; the commands (lab/commands/cli.ts) take their values from the same functions, so a
// check is written once. What needs more (the scenarios themselves, npm, the engine) is checked
// by the command, still before the engine or a run folder.
import fs from "node:fs";
import { LabError, info } from "../core/log.ts";
import { applyFlags, env, isNamePattern, lanesFromEnv, selectNames, setting } from "../core/settings.ts";
import { parseTopology, topologyFromEnv, type TopologySpec } from "../definitions/spec.ts";
import { checkGivenRunId, readRunRecord } from "../evidence/run.ts";
import { REDACTED } from "../evidence/redact.ts";
import { parseShard, type Shard } from "../run/shard.ts";
import { buildsIn } from "../definitions/build.ts";
import { checkGoodBad } from "./bisect.ts";
import { soakFromDirs } from "./soak.ts";
import type { parseCli } from "./usage.ts";

type Values = ReturnType<typeof parseCli>["values"];

/** The topology and seed of a run: from the settings, or from the run.json a replay names (settings beside it refused by name). */
export function specFor(seedArg?: string, replay?: string, say = true): { spec: TopologySpec; seed?: number } {
  if (replay) {
    if (!fs.existsSync(replay)) throw new LabError(`--replay ${replay}: no such file (give the run.json of an earlier run)`);
    // The replayed run's topology and version are the point of a replay: an override would be silently ignored, so it is refused by name.
    const overrides = ["NODES", "OPENCLAW_VERSION", "OPENCLAW_PACKAGE", "TOPOLOGY"].filter((k) => setting(k));
    if (overrides.length) throw new LabError(`--replay ${replay} runs that run's own topology and version, so ${overrides.map((k) => `${k}=${setting(k)}`).join(" ")} would be ignored: unset ${overrides.join(", ")} (or drop the replay)`);
    const rec = readRunRecord(replay);
    if (say) info(`replaying ${replay}: seed ${rec.seed}`);
    // run.json keeps the gateway token hidden (lab/evidence/run.ts): the replay gets the default one.
    const topology = structuredClone((rec.topology ?? {}) as { gateway?: { token?: unknown } });
    if (topology.gateway?.token === REDACTED) delete topology.gateway.token;
    return { spec: parseTopology(topology, `topology in ${replay}`), seed: rec.seed };
  }
  const spec = topologyFromEnv();
  const seedText = seedArg ?? (spec.seed !== undefined ? String(spec.seed) : undefined);
  if (seedText !== undefined && !/^\d+$/.test(seedText)) throw new LabError(`--seed ${seedText}: must be a non-negative integer`);
  return { spec, seed: seedText === undefined ? undefined : Number(seedText) };
}

/** SHARD=K/N (--shard is written there by applyFlags), checked; none: undefined. */
export function shardSetting(): (Shard & { text: string }) | undefined {
  const text = (setting("SHARD") ?? "").trim();
  return text ? { ...parseShard(text), text } : undefined;
}

/** FLEETLAB_RUN_ID, when a launcher names the run: checked (its form, and that no run has it). */
export function givenRunId(): string | undefined {
  const given = env("FLEETLAB_RUN_ID");
  return given === undefined ? undefined : checkGivenRunId(given);
}

/**
 * The one scenario `repro` or `bisect` takes: a name, or a pattern that matches exactly one (a
 * pattern that matches several is refused naming them; one that matches none is refused before,
 * in usage.ts refuseUnknownScenarios).
 */
function oneScenario(word: string, known: string[], form: string): string {
  if (!isNamePattern(word)) return word;
  const { names } = selectNames([word], known);
  if (names.length > 1) throw new LabError(`${form}: '${word}' matches ${names.length} scenarios (${names.join(", ")}); name one of them`);
  return names[0] ?? word;
}

/** `repro`'s scenario (exactly one) and attempts. */
export function reproInput(rest: string[], values: Values, known: string[]): { name: string; n: number; aimOff: boolean; premise?: string } {
  const [word, ...extra] = rest;
  if (!word || extra.length) throw new LabError(`repro needs exactly one scenario: fleetlab repro SCENARIO --n 20 (make repro NAME=SCENARIO N=20). Known scenarios: ${known.join(", ")}`);
  const name = oneScenario(word, known, "repro needs exactly one scenario");
  const n = values.n === undefined ? 10 : Number(values.n);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new LabError(`--n ${values.n}: must be a whole number of attempts from 1 to 1000 (N=20)`);
  const aimOff = !!values["aim-off"];
  if (aimOff && values.until) throw new LabError("--aim-off with --until: a premise self-test runs every attempt (drop --until / UNTIL=1)");
  const premise = values.premise === undefined ? undefined : String(values.premise);
  if (premise !== undefined && !aimOff) throw new LabError(`--premise ${premise} without --aim-off: it names the one premise the self-test aims off (make repro NAME=... AIM_OFF=${premise})`);
  if (premise !== undefined && !/^P-[\w.-]+$/.test(premise)) throw new LabError(`--premise '${premise}': a premise id reads P-<name>, e.g. P-103079-invoke-withheld (docs/reference/scenarios.md lists them)`);
  return { name, n, aimOff, ...(premise !== undefined ? { premise } : {}) };
}

/** `soak`'s rounds (ROUNDS; --rounds is written there by applyFlags). */
export function soakRounds(): number {
  const text = setting("ROUNDS");
  const rounds = text === undefined || text === "" ? 5 : Number(text);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 100) throw new LabError(`--rounds ${text}: must be a whole number of rounds from 1 to 100 (make soak ROUNDS=5)`);
  return rounds;
}

/** `matrix`'s versions as given (VERSIONS; --versions is written there by applyFlags). */
export function matrixVersionsText(): string {
  const text = (setting("VERSIONS") ?? "").trim();
  if (!text) throw new LabError(`matrix needs versions: --versions "2026.9.4 2026.9.6" (make matrix VERSIONS=...), newest, or lastN (e.g. last3)`);
  return text;
}

const BISECT_FORM = "fleetlab bisect SCENARIO --good 2026.9.4 --bad 2026.9.6 [--n 3] [--pre] (make bisect NAME=SCENARIO GOOD=2026.9.4 BAD=2026.9.6 [N=3] [PRE=1])";

/** `bisect`'s scenario, versions (their form and order; npm is asked later) and attempts per step. */
export function bisectInput(rest: string[], values: Values, known: string[]): { name: string; good: string; bad: string; n: number; pre: boolean } {
  const [word, ...extra] = rest;
  if (!word || extra.length) throw new LabError(`bisect needs exactly one scenario: ${BISECT_FORM}. Known scenarios: ${known.join(", ")}`);
  const name = oneScenario(word, known, "bisect needs exactly one scenario");
  const good = values.good?.trim();
  const bad = values.bad?.trim();
  if (!good || !bad) throw new LabError(`bisect needs --good and --bad: ${BISECT_FORM}`);
  const n = values.n === undefined ? 3 : Number(values.n);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new LabError(`--n ${values.n}: must be a whole number of attempts per step from 1 to 20 (make bisect ... N=3)`);
  const pre = !!values.pre;
  checkGoodBad(good, bad, pre); // the form and order: before npm is asked
  // The versions under test are GOOD..BAD: one named besides them would be ignored, so it is refused by name.
  const version = setting("OPENCLAW_VERSION");
  if (version) throw new LabError(`OPENCLAW_VERSION=${version} would be ignored: bisect runs the versions from GOOD to BAD; unset OPENCLAW_VERSION`);
  return { name, good, bad, n, pre };
}

/** `merge --shards N`. */
export function mergeShards(values: Values): number | undefined {
  const shards = values.shards === undefined ? undefined : Number(values.shards);
  if (shards !== undefined && !(Number.isInteger(shards) && shards > 0)) throw new LabError(`--shards ${values.shards}: must be a positive integer`);
  return shards;
}

/**
 * Every check of `argv`'s input that needs no more than the settings and the scenarios' names
 * (`known`), in the order the command makes them: a LabError names what is wrong. Help, unknown
 * commands, options and scenario names are answered before this (lab/commands/usage.ts).
 */
export function checkInput(values: Values, positionals: string[], known: string[]): void {
  const [cmd, ...rest] = positionals;
  applyFlags(values); // a flag wins over its environment variable
  switch (cmd) {
    case "run":
      specFor(values.seed, values.replay, false);
      shardSetting();
      lanesFromEnv();
      givenRunId();
      return;
    case "repro":
      reproInput(rest, values, known);
      specFor(values.seed, values.replay, false);
      return;
    case "soak":
      if (values.from) return void soakFromDirs(rest);
      soakRounds();
      shardSetting();
      lanesFromEnv();
      specFor(values.seed, undefined, false);
      return;
    case "up":
      specFor(values.seed, values.replay, false);
      return;
    case "matrix":
      buildsIn(matrixVersionsText()); // a package's path: checked and named as its build
      specFor(values.seed, undefined, false);
      lanesFromEnv();
      return;
    case "bisect": {
      bisectInput(rest, values, known);
      const { spec } = specFor(values.seed, undefined, false);
      if (spec.openclawBuild) throw new LabError("bisect runs published versions only: unset OPENCLAW_PACKAGE");
      return;
    }
    case "merge":
      mergeShards(values);
      return;
  }
}
