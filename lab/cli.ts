// fleetlab up | run | down | prune | report | list | images (a library: scenarios/main.ts runs it)
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { leftovers, prune, pruneDeadRuns } from "./cleanup.ts";
import { requireEngine } from "./docker.ts";
import { Run, readRunRecord } from "./evidence/run.ts";
import { findRun, verdictTable } from "./evidence/report.ts";
import { junitXml } from "./evidence/junit.ts";
import { writeReportHtml } from "./evidence/report-html.ts";
import { ensureImages } from "./images.ts";
import { findingsTable } from "./findings/findings.ts";
import { LabError, info } from "./log.ts";
import { resolveScenarios, runScenarios } from "./runner.ts";
import type { Scenario } from "./scenario.ts";
import { Lab } from "./topology/lab.ts";
import { parseTopology, topologyFromEnv, type TopologySpec } from "./topology/spec.ts";
import { exitCodeOf } from "./verdict.ts";

const USAGE = `usage: fleetlab <command> [options]

  run [scenario...]   bring up labs, run scenarios (all when none named), print verdicts
        --seed N          seed every random choice (default: random, printed)
        --replay FILE     re-run with the seed and topology of an earlier run.json
  up                  bring up the standard topology and keep it until Ctrl-C
  down RUN_ID         remove one run's containers, network and volumes
  prune [--all]       remove what dead runs left (--all: every lab resource, live runs too)
  report [RUN_ID]     print the verdict table of a run (default: the newest) and write its
                      report.html and junit.xml again
  list                list the scenarios and what each proves
  images              build (or find cached) every image and print their tags

Topology overrides come from the environment: NODES=4, OPENCLAW_VERSION=2026.9.6, SEED=7,
TOPOLOGY='{"nodes":{"capacity":1}}'. Exit codes: 0 pass, 1 fail, 2 bad input or setup, 3 unknown.`;

/**
 * The CLI is handed the scenarios it can run, as Jepsen's -main hands cli/run! its test:
 * the entry point is scenarios/main.ts (`npm run fleetlab`), which loads scenarios/index.ts.
 */
export async function main(argv: string[], scenarios: Scenario[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { seed: { type: "string" }, replay: { type: "string" }, all: { type: "boolean" }, help: { type: "boolean", short: "h" } },
  });
  const [cmd, ...rest] = positionals;
  if (values.help || !cmd) {
    process.stdout.write(USAGE + "\n");
    return cmd || values.help ? 0 : 2;
  }
  switch (cmd) {
    case "list":
      for (const s of scenarios) process.stdout.write(`${s.name.padEnd(20)} [${s.topology}] ${s.proves}\n`);
      return 0;
    case "run": {
      const { spec, seed } = specFor(values.seed, values.replay);
      const chosen = resolveScenarios(rest, scenarios); // bad names fail before anything is created
      const run = Run.create({ seed });
      process.stdout.write(`fleetlab run ${run.id}  seed=${run.record.seed}  openclaw@${spec.openclawVersion}  nodes=${spec.nodes.count}\n`);
      const results = await runScenarios(chosen, { ...spec, seed: run.record.seed }, run);
      process.stdout.write(`\n${verdictTable(results)}\n`);
      const checks = results.flatMap((r) => r.checks);
      const shortfalls = findingsTable(checks.filter((c) => c.kind === "shortfall"), "findings (what OpenClaw did short of the expectation):");
      const differs = findingsTable(checks.filter((c) => c.kind === "differs-from-reference"), "differs from reference:");
      for (const t of [shortfalls, differs]) if (t) process.stdout.write(`\n${t}\n`);
      const shown = path.relative(process.cwd(), run.dir) || run.dir;
      process.stdout.write(`\nevidence: ${shown}\n`);
      for (const [label, f] of [["report:", "report.html"], ["junit:", "junit.xml"]]) if (fs.existsSync(path.join(run.dir, f!))) process.stdout.write(`${label!.padEnd(9)} ${path.join(shown, f!)}\n`);
      const code = exitCodeOf(results.map((r) => r.verdict));
      if (code !== 0) process.stdout.write(`reproduce with: make lab SEED=${run.record.seed} SCENARIOS="${results.filter((r) => r.verdict !== "pass").map((r) => r.name).join(" ")}"\n`);
      return code;
    }
    case "up": {
      const { spec, seed } = specFor(values.seed, values.replay);
      await requireEngine();
      await pruneDeadRuns();
      const run = Run.create({ seed });
      const lab = await Lab.up(spec, run);
      process.stdout.write(`lab ${lab.id} is up (run ${run.id}; Ctrl-C to take it down)\n  gateway  ${lab.gatewayUrl}  token ${spec.gateway.token}\n`);
      for (const m of lab.members.values()) process.stdout.write(`  ${m.alias.padEnd(8)} ${m.ip}  container ${m.container.getName().replace(/^\//, "")}\n`);
      process.stdout.write(`  evidence ${run.dir}\n`);
      await new Promise<void>(() => {}); // the interrupt handler takes the lab down and exits
      return 0;
    }
    case "down": {
      if (!rest[0]) throw new LabError("down needs a run id (see .lab/runs/ or 'docker ps --filter label=fleetlab.run')");
      await requireEngine();
      const r = await prune({ runId: rest[0] });
      process.stdout.write(`removed ${r.containers} containers, ${r.networks} networks, ${r.volumes} volumes of run ${rest[0]}\n`);
      return 0;
    }
    case "prune": {
      await requireEngine();
      const r = await prune({ all: values.all });
      process.stdout.write(`removed ${r.containers} containers, ${r.networks} networks, ${r.volumes} volumes of ${r.runs.length} run(s)\n`);
      for (const id of r.runs) if ((await leftovers({ run: id })).length) process.stdout.write(`  run ${id}: some resources could not be removed\n`);
      return 0;
    }
    case "report": {
      const { dir, record } = findRun(rest[0]);
      // Written again from the run folder: junit.xml, and report.html with the evidence as it is now.
      fs.writeFileSync(path.join(dir, "junit.xml"), junitXml(record));
      const page = writeReportHtml(dir, record);
      process.stdout.write(`run ${record.id}  seed=${record.seed}\n\n${verdictTable(record.scenarios)}\n\nevidence: ${dir}\n`);
      process.stdout.write(`report:   ${page.file} (${(page.bytes / 2 ** 20).toFixed(1)} MiB, ${page.frames.embedded} of ${page.frames.total} frames, built in ${page.ms} ms)\njunit:    ${path.join(dir, "junit.xml")}\n`);
      const missing = (record.plan ?? []).filter((n) => !record.scenarios.some((r) => r.name === n));
      if (missing.length) process.stdout.write(`never ran (the run was cut): ${missing.join(", ")}\n`);
      return missing.length ? 3 : exitCodeOf(record.scenarios.map((r) => r.verdict));
    }
    case "images": {
      await requireEngine();
      const set = await ensureImages(topologyFromEnv().openclawVersion);
      for (const i of Object.values(set)) process.stdout.write(`${i.name.padEnd(13)} ${i.tag}  ${i.cached ? "cached" : "built"} ${i.seconds.toFixed(1)} s\n`);
      return 0;
    }
    default:
      throw new LabError(`unknown command '${cmd}'.\n${USAGE}`);
  }
}

function specFor(seedArg?: string, replay?: string): { spec: TopologySpec; seed?: number } {
  if (replay) {
    if (!fs.existsSync(replay)) throw new LabError(`--replay ${replay}: no such file (give the run.json of an earlier run)`);
    const rec = readRunRecord(replay);
    info(`replaying ${replay}: seed ${rec.seed}`);
    return { spec: parseTopology(rec.topology ?? {}, `topology in ${replay}`), seed: rec.seed };
  }
  const spec = topologyFromEnv();
  const seedText = seedArg ?? (spec.seed !== undefined ? String(spec.seed) : undefined);
  if (seedText !== undefined && !/^\d+$/.test(seedText)) throw new LabError(`--seed ${seedText}: must be a non-negative integer`);
  return { spec, seed: seedText === undefined ? undefined : Number(seedText) };
}

/** Run the CLI as a process: its exit code, and a clear message for bad input. */
export function runCli(argv: string[], load: () => Promise<Scenario[]>): void {
  load()
    .then((scenarios) => main(argv, scenarios))
    .then(
      (code) => process.exit(code),
      (err: unknown) => {
        if (err instanceof LabError) {
          process.stderr.write(`fleetlab: ${err.message}\n`);
          process.exit(err.exitCode);
        }
        process.stderr.write(`fleetlab: ${(err as Error).stack ?? err}\n`);
        process.exit(3);
      },
    );
}
