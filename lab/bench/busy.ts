// The busy-machine check (`make busy-check`): the same scenarios run on a quiet machine and with
// load beside them (CPU busy loops at twice the cores, plus a disk-heavy job writing and syncing
// 1 GiB over and over), and their verdict tables compared. A verdict must not depend on what else
// the machine was doing: the check fails when the loaded run has a FAIL or an UNKNOWN that the
// quiet run lacks. The load seen through the loaded run (1-minute load average every 10 s) is
// printed with the tables and kept in busy-<id>.json beside the run folders.
//
//   npm run --silent busy-check -- [--quiet <run id|dir>] [--loaded <run id|dir>] [scenario...]
//
// --quiet reuses a quiet run of the same commit (else one is run first); --loaded compares two
// stored runs without running anything.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { RUNS, STATE } from "../core/paths.ts";
import { readRunRecord } from "../evidence/run.ts";

export interface Row {
  name: string;
  quiet?: string;
  loaded?: string;
  /** The loaded run is worse: a fail or unknown the quiet run lacks, a fixed? where the quiet run saw the known finding (a claim it does not make), or the scenario missing. */
  worse: boolean;
}

/**
 * The two tables side by side (pure: unit-tested). `planned`: the scenarios the loaded run was
 * asked to run; a stored quiet run of the whole suite is then compared on those only (a scenario
 * planned and missing from the loaded run is still worse).
 */
export function compareVerdicts(quiet: Record<string, string>, loaded: Record<string, string>, planned?: string[]): Row[] {
  const names = planned?.length ? [...new Set([...planned, ...Object.keys(loaded)])] : [...new Set([...Object.keys(quiet), ...Object.keys(loaded)])];
  return names.map((name) => {
    const q = quiet[name];
    const l = loaded[name];
    const worse = l === undefined || ((l === "fail" || l === "unknown") && l !== q) || (l === "fixed?" && q === "known-finding");
    return { name, quiet: q, loaded: l, worse };
  });
}

export function verdictTable(rows: Row[]): string {
  const w = Math.max(8, ...rows.map((r) => r.name.length));
  const line = (a: string, b: string, c: string, d: string) => `${a.padEnd(w)}  ${b.padEnd(13)}  ${c.padEnd(13)}  ${d}`;
  return [line("scenario", "quiet", "loaded", ""), line("-".repeat(8), "-----", "------", ""), ...rows.map((r) => line(r.name, (r.quiet ?? "-").toUpperCase(), (r.loaded ?? "-").toUpperCase(), r.worse ? "WORSE under load" : r.quiet === r.loaded ? "same" : "differs (accepted)"))].join("\n");
}

function runDir(ref: string): string {
  const dir = fs.existsSync(path.join(ref, "run.json")) ? ref : path.join(RUNS, ref);
  if (!fs.existsSync(path.join(dir, "run.json"))) throw new Error(`${ref}: no run.json there or in ${RUNS}/${ref}; give a run id or a run folder`);
  return dir;
}

function verdicts(dir: string): Record<string, string> {
  return Object.fromEntries(readRunRecord(path.join(dir, "run.json")).scenarios.map((s) => [s.name, s.verdict]));
}

/** `fleetlab run <scenarios>` as a child; resolves with its run folder (from its "evidence:" line). */
function labRun(scenarios: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "--silent", "fleetlab", "--", "run", ...scenarios], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      process.stderr.write(b);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const m = /^evidence:\s+(\S+)/m.exec(out);
      if (m) resolve(m[1]!);
      else reject(new Error(`the lab run ended (exit ${code}) without naming its run folder`));
    });
  });
}

/** CPU busy loops at twice the cores and a disk-heavy job, each its own process group; stop() ends them all. */
export function startLoad(dir: string): { stop: () => void; what: string } {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, "busy-disk.bin");
  const loops = 2 * os.cpus().length;
  const kids: ChildProcess[] = [];
  for (let i = 0; i < loops; i++) kids.push(spawn("sh", ["-c", "while :; do :; done"], { stdio: "ignore", detached: true }));
  kids.push(spawn("sh", ["-c", `while :; do dd if=/dev/zero of='${file}' bs=1M count=1024 conv=fsync status=none; rm -f '${file}'; done`], { stdio: "ignore", detached: true }));
  const stop = () => {
    for (const k of kids) {
      try {
        process.kill(-k.pid!, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    fs.rmSync(file, { force: true });
  };
  return { stop, what: `${loops} CPU busy loops (sh 'while :; do :; done', twice the ${os.cpus().length} cores) and a disk-heavy job (dd of 1 GiB with conv=fsync, over and over)` };
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({ options: { quiet: { type: "string" }, loaded: { type: "string" }, help: { type: "boolean", short: "h" } }, allowPositionals: true });
  if (values.help) {
    process.stdout.write("npm run --silent busy-check -- [--quiet <run id|dir>] [--loaded <run id|dir>] [scenario...]\n(make busy-check SCENARIOS='smoke pair-and-run' [QUIET=<run id>] [LOADED=<run id>])\n");
    return 0;
  }
  // Check what was given before anything runs.
  const quietGiven = values.quiet ? runDir(values.quiet) : undefined;
  const loadedGiven = values.loaded ? runDir(values.loaded) : undefined;
  const quiet = quietGiven ?? (process.stderr.write(`busy-check: the quiet run (${positionals.join(" ") || "every scenario"}) ...\n`), await labRun(positionals));
  let loaded = loadedGiven;
  const loadSeen: number[] = [];
  let what = "none (a stored run)";
  if (!loaded) {
    const load = startLoad(STATE);
    what = load.what;
    const onSignal = () => {
      load.stop();
      process.exit(130);
    };
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    const sampler = setInterval(() => loadSeen.push(Math.round(os.loadavg()[0]! * 100) / 100), 10_000);
    process.stderr.write(`busy-check: the loaded run, with ${what} beside it ...\n`);
    try {
      loaded = await labRun(positionals);
    } finally {
      clearInterval(sampler);
      load.stop();
    }
  }
  const rows = compareVerdicts(verdicts(quiet), verdicts(loaded), readRunRecord(path.join(loaded, "run.json")).plan);
  const sorted = [...loadSeen].sort((a, b) => a - b);
  const seen = sorted.length ? `load average (1 min, ${os.cpus().length} cores) through the loaded run: min ${sorted[0]}, median ${sorted[Math.floor(sorted.length / 2)]}, max ${sorted.at(-1)} (${sorted.length} readings)` : "";
  const worse = rows.filter((r) => r.worse);
  const out = [`quiet run:  ${quiet}`, `loaded run: ${loaded}`, `load beside it: ${what}`, seen, "", verdictTable(rows), "", worse.length ? `${worse.length} scenario(s) read worse under load: ${worse.map((r) => r.name).join(", ")}` : `same verdicts loaded as quiet (${rows.length} scenario(s))`].filter((l, i) => l || i > 3).join("\n");
  process.stdout.write(`${out}\n`);
  const id = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  fs.mkdirSync(RUNS, { recursive: true });
  fs.writeFileSync(path.join(RUNS, `busy-${id}.json`), JSON.stringify({ quiet, loaded, load: what, loadSeen, rows }, null, 2));
  return worse.length ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`busy-check: ${(err as Error).message}\n`);
      process.exit(2);
    },
  );
}
