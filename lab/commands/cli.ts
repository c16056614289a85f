// fleetlab up | run | down | prune | report | list | images (a library: scenarios/main.ts runs it)
import fs from "node:fs";
import path from "node:path";
import { endEarly, exitWhenClean, interrupted, leftovers, onEarlyEnd, prune, pruneDeadRuns } from "../engine/cleanup.ts";
import { installEscapeTrap, isWriteFailure, onUnownedEscape, writeFailureText } from "../core/escapes.ts";
import { applyFlags, setting } from "../core/settings.ts";
import { helpFor, listText, parseCli } from "./usage.ts";
export { commandHelp, parseCli } from "./usage.ts";
import { requireEngine } from "../engine/docker.ts";
import { Run, newRunId } from "../evidence/run.ts";
import { findRun, notAcceptedLines, reportRows, runDir, runExitCode, runProblems, verdictTable } from "../evidence/report.ts";
import { junitXml } from "../evidence/junit.ts";
import { writeReportHtml } from "../evidence/report-html.ts";
import { checkOpenclawVersion, ensureImages, npmVersions, packageImageThere } from "../engine/images.ts";
import { findingsTable } from "../findings/findings.ts";
import { LabError, info } from "../core/log.ts";
import { lanesFromEnv } from "../core/settings.ts";
import { buildsIn } from "../definitions/build.ts";
import { resolveScenarios, runLanes, recordRunEnd, sealRun, writeRunReports, type ScenarioResult } from "../run/runner.ts";
import { aimablePremises, aimOffExitCode, aimTargets, notSelfTested, aimOffLine, bugChecks, reproDocument, reproExitCode, reproLoop, tallyLine } from "./repro.ts";
import { roundFromRunDir, scenarioOf, soakDocument, soakExitCode, soakFromDirs, soakTable, writeSoak, type SoakRecord, type SoakRound } from "./soak.ts";
import { cellBugChecks, cellOf, matrixDocument, matrixExitCode, matrixTable, resolveVersions, writeMatrix, type MatrixRecord } from "./matrix.ts";
import { bisect, bisectAgain, bisectDocument, bisectExitCode, bisectVersions, maxSteps, answerLine, stepLine, writeBisect, type BisectRecord, type StepAttempt } from "./bisect.ts";
import { CACHE, RUNS } from "../core/paths.ts";
import { writeExcerpts } from "../findings/excerpt.ts";
import { issueCommand } from "./issue-report.ts";
import { labFindings } from "../checks/findings.ts";
import { changesText, judgeRun, keepFixtures, writeJudged } from "./judge.ts";
import { runInNetwork } from "../run/runner-container.ts";
import { COSTS_FILE, costsFromRuns, loadCosts, selectShard, shardRecord, type Shard, type ShardPlan } from "../run/shard.ts";
import { bisectInput, givenRunId, matrixVersionsText, mergeShards, reproInput, shardSetting, soakRounds, specFor } from "./inputs.ts";
import { mergeRuns } from "../evidence/merge.ts";
import { jsonText, listDocument, mergeDocument, mergeExitCode, runDocument, type JsonDocument } from "./json.ts";
import type { Scenario } from "../scenario.ts";
import { Lab } from "../topology/lab.ts";
import { buildInput, mergeSpec, parseTopology, topologyFromEnv, type TopologySpec } from "../definitions/spec.ts";


/**
 * Where a command's tables and lines go: stdout, or under --json stderr, so that stdout carries
 * the command's JSON document alone (lab/commands/json.ts), printed with printJson.
 */
let say = (t: string): void => void process.stdout.write(t);
const printJson = (doc: JsonDocument): void => void process.stdout.write(jsonText(doc));

export async function main(argv: string[], scenarios: Scenario[]): Promise<number> {
  const { values, positionals } = parseCli(argv);
  if (values.json) say = (t) => void process.stderr.write(t);
  applyFlags(values); // a flag wins over its environment variable: written there before anything reads it
  const help = helpFor({ values, positionals });
  if (help) {
    process.stdout.write(help.text + "\n");
    return help.code;
  }
  const [cmd, ...rest] = positionals as [string, ...string[]];
  const handler = HANDLERS[cmd];
  if (!handler) throw new LabError(`unknown command '${cmd}'; see 'fleetlab help'`);
  return handler({ rest, values, argv, scenarios });
}

/** What a command handler is given: its arguments after the command, the parsed options, the whole argv and the scenarios. */
interface CommandArgs {
  rest: string[];
  values: ReturnType<typeof parseCli>["values"];
  argv: string[];
  scenarios: Scenario[];
}

/** The scenarios handed in, with what each proves. */
function listCommand({ rest, scenarios, values }: CommandArgs): number {
  const chosen = rest.length ? resolveScenarios(rest, scenarios) : scenarios;
  if (values.json) printJson(listDocument(chosen));
  else say(listText(chosen));
  return 0;
}

/** Run scenarios (all when none are named) in lanes, print the verdicts and findings; exit code by the verdicts. */
async function runCommand({ rest, values, argv, scenarios }: CommandArgs): Promise<number> {
  const { spec, seed } = specFor(values.seed, values.replay);
  const { chosen, shard } = shardOf(resolveScenarios(rest, scenarios)); // bad names or SHARD: exit 2, nothing created
  // Past one machine: the same run in a runner container on the engine DOCKER_HOST names.
  if (values["in-network"]) return runInNetwork(argv.filter((a, i) => a !== "--in-network" && i !== argv.indexOf("run")));
  const lanes = lanesFromEnv(); // bad input: exit 2 before anything is created
  await checkUnderTest(spec);
  const run = Run.create({ seed, id: givenRunId() }); // the runner's launcher names its run
  if (shard) {
    shard.mark(run);
    say(`shard ${shard.index}/${shard.total}: ${chosen.length ? chosen.map((s) => s.name).join(" ") : "no scenarios"} (estimated ${shard.plan.seconds[shard.index - 1]} s; shards ${shard.plan.seconds.join(" / ")} s)\n`);
  }
  say(`fleetlab run ${run.id}  seed=${run.record.seed}  ${underTest(spec)}  ${topologyLine(spec, chosen)}\n`);
  // An early end (a signal, an error of the lab's own) still prints what was decided.
  const sofar: ScenarioResult[] = [];
  onEarlyEnd(() => {
    // Its folder is sealed as a finished run's is (the labs are down by now: their logs are in).
    sealEarly(run);
    say(`\nverdicts so far (the run ended early; not run: ${chosen.filter((s) => !sofar.some((r) => r.name === s.name)).map((s) => s.name).join(", ") || "-"}):\n${verdictTable(sofar)}\nevidence: ${path.relative(process.cwd(), run.dir) || run.dir}\n`);
    // The run folder as it was sealed: its planned scenarios that never ran read "not run".
    if (values.json) printJson(runDocument(run.record, path.relative(process.cwd(), run.dir) || run.dir));
  });
  const results = await runLanes(chosen, { ...spec, seed: run.record.seed }, run, { lanes, onResult: (r) => sofar.push(r) });
  say(`\n${verdictTable(results)}\n`);
  const checks = results.flatMap((r) => r.checks);
  const labWide = (c: (typeof checks)[number]) => c.scope === "lab" && c.outcome === "known-finding";
  const shortfalls = findingsTable(checks.filter((c) => c.kind === "shortfall" && !labWide(c)), "findings (what OpenClaw did short of the expectation):");
  const differs = findingsTable(checks.filter((c) => c.kind === "differs-from-reference" && !labWide(c)), "differs from reference:");
  for (const t of [shortfalls, differs]) if (t) say(`\n${t}\n`);
  // Lab-wide known findings (e.g. protocol drift) once for the run, not once per scenario.
  const wide = new Map<string, string[]>();
  for (const c of checks.filter(labWide)) wide.set(c.findingId, [...(wide.get(c.findingId) ?? []), c.scenario]);
  if (wide.size) {
    say(`\nlab-wide known findings (judged in every scenario's evidence; they leave its verdict alone):\n`);
    for (const [id, in_] of wide) say(`  KNOWN-FINDING ${id}  [${in_.length} scenario(s)]\n`);
  }
  const shown = path.relative(process.cwd(), run.dir) || run.dir;
  say(`\nevidence: ${shown}\n`);
  for (const [label, f] of [["report:", "report.html"], ["junit:", "junit.xml"]]) if (fs.existsSync(path.join(run.dir, f!))) say(`${label!.padEnd(9)} ${path.join(shown, f!)}\n`);
  // The code the stored run reads as (as `fleetlab report` reads it): the verdicts', every planned scenario having run.
  const code = runExitCode(run.record);
  const again = results.filter((r) => r.verdict !== "pass" && r.verdict !== "n/a").map((r) => r.name);
  if (code !== 0 || again.length) say(`reproduce with: ${reproduceCommand(spec, run.record.seed, again)}\n`);
  if (values.json) printJson(runDocument(run.record, shown));
  return code;
}

/** Run one scenario N times and say per attempt whether the bug showed (lab/commands/repro.ts). */
async function reproCommand({ rest, values, scenarios }: CommandArgs): Promise<number> {
  const { name, n, aimOff, premise } = reproInput(rest, values, scenarios.map((x) => x.name));
  const [s] = resolveScenarios([name], scenarios);
  if (aimOff && !aimablePremises(s!).length) {
    const can = scenarios.filter((x) => aimablePremises(x).length).map((x) => x.name);
    const untested = notSelfTested(s!);
    throw new LabError(`--aim-off: scenario ${s!.name} declares no premise it can aim its fault off (Premise.aimOff)${untested.length ? ` (its premises, not self-tested: ${untested.join(", ")})` : ""}; scenarios that can: ${can.join(", ") || "none"}`);
  }
  const targets = aimOff ? aimTargets(s!, premise) : [];
  const { spec, seed } = specFor(values.seed, values.replay);
  await checkUnderTest(spec);
  const run = Run.create({ seed });
  const total = n * Math.max(1, targets.length);
  const untested = notSelfTested(s!);
  const selfTest = aimOff
    ? ` (premise self-test: ${targets.map((p) => `${p} aimed off x${n}`).join(", then ")}${untested.length ? `; not self-tested, no aim-off: ${untested.join(", ")}` : ""})`
    : untested.length
      ? ` (premises not self-tested, no aim-off: ${untested.join(", ")})`
      : "";
  say(`fleetlab repro ${s!.name} x${total}${values.until ? " (until the first reproduction)" : ""}${selfTest}  run ${run.id}  seed=${run.record.seed}  ${underTest(spec)}  ${topologyLine(spec, [s!])}\n`);
  const shown = path.relative(process.cwd(), run.dir) || run.dir;
  const t = await reproLoop(s!, n, {
    spec: { ...spec, seed: run.record.seed },
    run,
    until: values.until,
    aimOff,
    premise,
    onAttempt: (a) => {
      // Under --aim-off an attempt is said by whether the check of the premise it aimed off caught the miss.
      const label = aimOff ? (a.aimOff?.caught ? "caught the miss" : a.aimOff?.outcome === "could not tell" ? "could not tell" : "NOT CAUGHT") : a.class;
      const why = aimOff ? `${a.aimOff?.premise} aimed off: ${a.aimOff?.why}` : a.why;
      say(`attempt ${String(a.index).padStart(String(total).length)}/${total}  ${a.verdict.toUpperCase().padEnd(13)}  ${label.padEnd(16)}  ${a.seconds.toFixed(1).padStart(6)} s  seed=${run.record.seed}  ${path.join(shown, a.evidence)}${why ? `\n    ${why.slice(0, 300)}` : ""}\n`);
    },
  });
  say(`\n${s!.name}: ${aimOff ? aimOffLine(t) : tallyLine(t)}\nevidence: ${shown}\nagain:    ${makeReproCommand(spec, run.record.seed, s!.name, n, values.until, aimOff, premise)}\n`);
  if (values.json) printJson(reproDocument(run.record, shown));
  return aimOff ? aimOffExitCode(t) : reproExitCode(t);
}

/** The scenarios on each OpenClaw version, as a scenario x version table (matrix.json). */
async function matrixCommand({ rest, values, scenarios }: CommandArgs): Promise<number> {
  const chosen = resolveScenarios(rest, scenarios);
  const text = matrixVersionsText();
  const published = await npmVersions().catch((e: Error) => {
    info(`could not ask npm for published versions (${e.message}); exact versions are taken as given`);
    return undefined;
  });
  const versions = resolveVersions(text, published); // a package's path: checked and named as its build here
  const builds = buildsIn(text);
  const { spec, seed } = specFor(values.seed, undefined);
  await requireEngine();
  const id = `matrix-${newRunId()}`;
  const dir = path.join(RUNS, id);
  const m: MatrixRecord = { id, startedAt: new Date().toISOString(), versions, scenarios: chosen.map((x) => x.name), cells: {}, runs: {}, ...(builds.size ? { builds: Object.fromEntries([...builds].map(([k, b]) => [k, { source: b.source, sha256: b.sha256 }])) } : {}) };
  say(`fleetlab matrix ${id}: ${chosen.length} scenario(s) x ${versions.length} version(s): ${versions.join(", ")}\n`);
  for (const v of versions) {
    const t0 = performance.now();
    const run = Run.create({ seed });
    const build = builds.get(v);
    const onV = build ? { ...spec, ...buildInput(build) } : { ...spec, openclawVersion: v, openclawBuild: undefined };
    say(`\n== ${underTest(onV)}: run ${run.id}\n`);
    try {
      const results = await runLanes(chosen, { ...onV, seed: run.record.seed }, run, { lanes: lanesFromEnv() });
      // A repro's cell (or any scenario that names its bug checks) says what it showed of the bug.
      const bugOf = new Map(chosen.map((x) => [x.name, x.name.startsWith("repro-") || x.bug ? bugChecks(x) : []]));
      for (const r of results) (m.cells[r.name] ??= {})[v] = cellOf(r, run.id, cellBugChecks(r, bugOf.get(r.name) ?? [], r.name.startsWith("repro-")));
      m.runs[v] = { run: run.id, seconds: Math.round(performance.now() - t0) / 1000 };
      say(`${verdictTable(results)}\n`);
    } catch (err) {
      if (interrupted()) throw err;
      m.runs[v] = { run: run.id, error: (err as Error).message, seconds: Math.round(performance.now() - t0) / 1000 };
      say(`openclaw@${v} could not run: ${(err as Error).message}\n`);
    }
    writeMatrix(dir, m);
  }
  m.endedAt = new Date().toISOString();
  const file = writeMatrix(dir, m);
  say(`\n${matrixTable(m)}\n\nmatrix: ${path.relative(process.cwd(), file) || file}\n`);
  if (values.json) printJson(matrixDocument(m, path.relative(process.cwd(), dir) || dir));
  return matrixExitCode(m);
}

/**
 * SHARD=K/N (--shard is written there by applyFlags): the chosen scenarios of that shard, and the
 * shard with its plan and a way to record the split in a run; no SHARD: all of them.
 */
function shardOf(all: Scenario[]): { chosen: Scenario[]; shard?: Shard & { text: string; plan: ShardPlan; mark: (run: Run) => void } } {
  const shard = shardSetting(); // bad input: exit 2, nothing created
  if (!shard) return { chosen: all };
  const { chosen, plan } = selectShard(all, shard);
  return { chosen, shard: { ...shard, plan, mark: (run) => run.update((r) => void (r.shard = shardRecord(shard, plan))) } };
}

/** An early end's record of the machine (its pace trace, the lab's stalls, the end time) and redaction pass over a run folder; a failure is said, never thrown (the end goes on). */
function sealEarly(run: Run): void {
  try {
    recordRunEnd(run);
  } catch (err) {
    process.stderr.write(`fleetlab: could not record the end of ${run.dir}: ${(err as Error).message}\n`);
  }
  try {
    writeRunReports(run); // report.html is written only at a run's end (lab/run/runner.ts record())
  } catch (err) {
    process.stderr.write(`fleetlab: could not write the reports of ${run.dir}: ${(err as Error).message}\n`);
  }
  try {
    sealRun(run);
  } catch (err) {
    process.stderr.write(`fleetlab: the final redaction pass over ${run.dir} failed: ${(err as Error).message}\n`);
  }
}

/** The stability run: the suite R rounds, a table of what moved (lab/commands/soak.ts). */
async function soakCommand({ rest, values, scenarios }: CommandArgs): Promise<number> {
  if (values.from) return soakFrom(rest, !!values.json);
  const rounds = soakRounds();
  const { chosen, shard } = shardOf(resolveScenarios(rest, scenarios));
  const lanes = lanesFromEnv();
  const { spec, seed } = specFor(values.seed, undefined);
  await checkUnderTest(spec);
  await requireEngine();
  const id = `soak-${newRunId()}`;
  const dir = path.join(RUNS, id);
  const rec: SoakRecord = { id, startedAt: new Date().toISOString(), version: spec.openclawVersion, asked: rounds, scenarios: chosen.map((x) => x.name), ...(shard ? { shard: shard.text } : {}), rounds: [], table: [] };
  const seen: SoakRound[] = [];
  const shown = path.relative(process.cwd(), dir) || dir;
  say(`fleetlab soak ${id}: ${chosen.length} scenario(s) x ${rounds} round(s), openclaw@${spec.openclawVersion}${shard ? `, shard ${shard.text}` : ""}  ${topologyLine(spec, chosen)}
`);
  let current: Run | undefined;
  onEarlyEnd(() => {
    // The round in progress is sealed as a finished run's is (its folder may be uploaded as it is).
    if (current) sealEarly(current);
    if (seen.length) say(`\nthe soak ended early, after ${seen.length} of ${rounds} round(s):\n\n${writeSoak(dir, { ...rec, table: soakTable(seen) })}\nsoak: ${shown}\n`);
  });
  for (let k = 1; k <= rounds; k++) {
    const run = (current = Run.create({ seed: k === 1 ? seed : undefined }));
    shard?.mark(run);
    say(`\n== round ${k}/${rounds}: run ${run.id}  seed=${run.record.seed}\n`);
    const results = await runLanes(chosen, { ...spec, seed: run.record.seed }, run, { lanes });
    seen.push({ run: run.id, results });
    rec.rounds.push(run.id);
    rec.table = soakTable(seen);
    writeSoak(dir, rec);
    say(`${verdictTable(results)}\n`);
  }
  rec.endedAt = new Date().toISOString();
  say(`\n${writeSoak(dir, rec)}\nsoak: ${path.join(shown, "soak.md")} (soak.html beside it)\n`);
  if (values.json) printJson(soakDocument(rec, shown));
  return soakExitCode(rec);
}

/** The stability table again from soak folders, run folders or run ids (make soak FROM="..."). */
function soakFrom(args: string[], json: boolean): number {
  const rounds = soakFromDirs(args).map(roundFromRunDir);
  const versions = [...new Set(rounds.map((r) => r.version))];
  if (versions.length > 1) throw new LabError(`soak --from: the rounds ran different OpenClaw versions (${versions.join(", ")}); a stability table compares one version: give the rounds of one`);
  const id = `soak-${newRunId()}`;
  const dir = path.join(RUNS, id);
  const rec: SoakRecord = { id, startedAt: new Date().toISOString(), endedAt: new Date().toISOString(), version: versions[0]!, asked: rounds.length, scenarios: [...new Set(rounds.flatMap((r) => r.results.map((x) => scenarioOf(x.name))))], rounds: rounds.map((r) => r.run), table: soakTable(rounds) };
  say(`${writeSoak(dir, rec)}\nsoak: ${path.join(path.relative(process.cwd(), dir) || dir, "soak.md")}\n`);
  if (json) printJson(soakDocument(rec, path.relative(process.cwd(), dir) || dir));
  return soakExitCode(rec);
}

/** Bring the standard topology up and keep it until Ctrl-C (the interrupt handler takes it down). */
async function upCommand({ values }: CommandArgs): Promise<number> {
  const { spec, seed } = specFor(values.seed, values.replay);
  await checkUnderTest(spec);
  await requireEngine();
  await pruneDeadRuns();
  const run = Run.create({ seed });
  const lab = await Lab.up(spec, run);
  say(`lab ${lab.id} is up (run ${run.id}; Ctrl-C to take it down)\n  gateway  ${lab.gatewayUrl}  token ${spec.gateway.token}\n`);
  for (const m of lab.members.values()) say(`  ${m.alias.padEnd(8)} ${m.ip}  container ${m.container.getName().replace(/^\//, "")}\n`);
  say(`  evidence ${run.dir}\n`);
  await new Promise<void>(() => {}); // the interrupt handler takes the lab down and exits
  return 0;
}

/** Remove one run's containers, network and volumes. */
async function downCommand({ rest }: CommandArgs): Promise<number> {
  if (!rest[0]) throw new LabError("down needs a run id (see .lab/runs/ or 'docker ps --filter label=fleetlab.run'), or latest");
  const runId = path.basename(runDir(rest[0])); // `latest`: the run it points at
  await requireEngine();
  const r = await prune({ runId });
  say(`removed ${r.containers} containers, ${r.networks} networks, ${r.volumes} volumes of run ${runId}\n`);
  return 0;
}

/** Remove what dead runs left (--all: every lab resource). */
async function pruneCommand({ values }: CommandArgs): Promise<number> {
  await requireEngine();
  const r = await prune({ all: values.all });
  say(`removed ${r.containers} containers, ${r.networks} networks, ${r.volumes} volumes of ${r.runs.length} run(s), ${r.folders ?? 0} scripted node identity folder(s)\n`);
  for (const s of r.stuck) say(`  ${s}\n`);
  for (const id of r.runs) if ((await leftovers({ run: id })).length) say(`  run ${id}: some resources could not be removed\n`);
  return 0;
}

/** Write a run's reports again from its folder and print its verdict table. */
function reportCommand({ rest, values }: CommandArgs): number {
  const { dir, record } = findRun(rest[0]);
  if (values["not-accepted"]) {
    // Read only: a CI log's last lines, printed after a failed suite (package.json "test").
    const lines = notAcceptedLines(record, dir);
    say(`${lines.length ? lines.join("\n") : `run ${record.id}: every verdict accepted`}\n`);
    return runExitCode(record);
  }
  // Written again from the run folder: junit.xml, and report.html with the evidence as it is now.
  fs.writeFileSync(path.join(dir, "junit.xml"), junitXml(record));
  const page = writeReportHtml(dir, record);
  // run.json was validated by findRun (a corrupt one stops here, exit 3); a partial one is said, and what never ran is "not run".
  const rows = reportRows(record);
  say(`run ${record.id}  seed=${record.seed}\n\n${verdictTable(rows)}\n\nevidence: ${dir}\n`);
  say(`report:   ${page.file} (${(page.bytes / 2 ** 20).toFixed(1)} MiB, ${page.frames.embedded} of ${page.frames.total} frames, built in ${page.ms} ms)\njunit:    ${path.join(dir, "junit.xml")}\n`);
  for (const p of runProblems(record)) say(`run.json: ${p}\n`);
  for (const u of record.unexercised ?? []) say(`unexercised finding record ${u.id} [${u.scenario ?? "lab-wide"}]: no check judged it in this run\n`);
  if (values.json) printJson(runDocument(record, dir, "report"));
  // A scenario that never ran is never a pass, nor is a run folder that never ran: unknown (3) unless something failed (1).
  return runExitCode(record);
}

/** Judge a stored run again with today's checks and records (lab/commands/judge.ts); the new table and report beside the old. */
function judgeCommand({ rest, values, scenarios }: CommandArgs): number {
  const { dir, record } = findRun(rest[0]);
  const at = new Date();
  const j = judgeRun(dir, record, scenarios, labFindings, at);
  if (values.keep) {
    const kept = keepFixtures(dir, j, rest.slice(1));
    for (const k of kept) say(`${k.scenario.padEnd(28)} ${k.file ? path.relative(process.cwd(), k.file) : "-"}  ${(k.bytes / 1024).toFixed(1)} KB${k.skipped ? `  ${k.skipped}` : ""}\n`);
    say(`${kept.filter((k) => k.file).length} history fixture(s) from run ${record.id}\n`);
  }
  const out = writeJudged(dir, j, at);
  let page: string | undefined;
  try {
    page = writeReportHtml(dir, j.record, out).file;
  } catch (err) {
    say(`report.html could not be written: ${(err as Error).message}\n`);
  }
  const shown = path.relative(process.cwd(), out) || out;
  say(`run ${record.id} judged again with today's checks and finding records (nothing was run)\n\n${verdictTable(j.record.scenarios)}\n\n${changesText(j)}\n\njudged:   ${shown}/verdicts.md${page ? `\nreport:   ${path.relative(process.cwd(), page) || page}` : ""}\n`);
  return runExitCode(j.record);
}

/** Merge shard run folders into one run per version. */
function mergeCommand({ rest, values, scenarios }: CommandArgs): number {
  const [out, ...dirs] = rest;
  if (!out) throw new LabError("merge needs an output folder and the shard run folders: fleetlab merge OUT_DIR RUN_DIR...");
  const shards = mergeShards(values);
  const versions = values.versions?.split(/[\s,]+/).filter(Boolean);
  const m = mergeRuns(out, dirs, { shards, versions });
  for (const v of m.versions) {
    say(`openclaw@${v.version}: ${v.dir}\n${verdictTable(v.record.scenarios)}\n`);
    for (const s of v.record.shards ?? []) if (s.status !== "complete") say(`shard ${s.index}/${s.total} ${s.status}; never ran: ${s.neverRan.join(", ") || "-"}\n`);
    say("\n");
  }
  for (const p of m.problems) say(`problem: ${p}\n`);
  say(`summary: ${m.summaryFile}\n`);
  if (values.json) printJson(mergeDocument(m));
  return mergeExitCode(m);
}

/** Keep a trimmed excerpt of each finding a run saw, for the records to point to. */
function excerptCommand({ rest }: CommandArgs): number {
  const [runArg, ...ids] = rest;
  if (!runArg) throw new LabError("excerpt needs a run: fleetlab excerpt RUN_ID_OR_FOLDER [FINDING_ID...]");
  const { dir, record } = findRun(runArg);
  let written: ReturnType<typeof writeExcerpts>;
  try {
    written = writeExcerpts(dir, record, ids);
  } catch (err) {
    throw new LabError((err as Error).message);
  }
  for (const w of written) say(`${w.id.padEnd(44)} ${path.relative(process.cwd(), w.file)}  ${(w.bytes / 1024).toFixed(1)} KB${w.raw ? "" : "  NO RAW EVIDENCE (no frame or log line carries its signature in that run)"}\n`);
  say(`${written.length} excerpt(s) from run ${record.id}; point each record's evidence at its file\n`);
  return 0;
}

/** Refresh scenarios/costs.json (seconds per scenario) from run folders. */
function costsCommand({ rest, scenarios }: CommandArgs): number {
  const runs = (rest.length ? rest : [undefined]).map((id) => findRun(id).record);
  const known = new Map(scenarios.map((s) => [s.name, s.topology] as const));
  const before = loadCosts();
  const after = costsFromRuns(runs, before, (n) => known.get(n));
  for (const n of Object.keys(after.scenarios)) if (!known.has(n)) delete after.scenarios[n]; // a scenario the suite no longer has
  fs.writeFileSync(COSTS_FILE, JSON.stringify(after, null, 2) + "\n");
  for (const s of scenarios) say(`${s.name.padEnd(24)} ${String(before.scenarios[s.name] ?? "-").padStart(7)} -> ${String(after.scenarios[s.name] ?? `${after.defaultSeconds} (default)`).padStart(7)} s\n`);
  say(`shared lab bring-up ${before.sharedLab.seconds} -> ${after.sharedLab.seconds} s\nwrote ${path.relative(process.cwd(), COSTS_FILE)} from ${runs.map((r) => r.id).join(", ")}\n`);
  return 0;
}

/** Build (or find cached) every image and print their tags. */
async function imagesCommand({ values }: CommandArgs): Promise<number> {
  await requireEngine();
  const set = await ensureImages(topologyFromEnv().openclawVersion);
  for (const i of Object.values(set)) say(`${i.name.padEnd(13)} ${i.tag}  ${i.cached ? "cached" : "built"} ${i.seconds.toFixed(1)} s\n`);
  return 0;
}

/**
 * The first version that broke (lab/commands/bisect.ts): the scenario N times per step, each step
 * one version in a run folder of its own (a fresh lab per attempt, as repro runs them), halving
 * GOOD..BAD; bisect.json in .lab/runs/bisect-<id>/, rewritten after every step.
 */
async function bisectCommand({ rest, values, scenarios }: CommandArgs): Promise<number> {
  const { name, good, bad, n, pre } = bisectInput(rest, values, scenarios.map((x) => x.name));
  const [s] = resolveScenarios([name], scenarios);
  const { spec, seed } = specFor(values.seed, undefined);
  if (spec.openclawBuild) throw new LabError("bisect runs published versions only: unset OPENCLAW_PACKAGE");
  const versions = bisectVersions(await npmVersions(), good, bad, pre);
  await requireEngine();
  const id = `bisect-${newRunId()}`;
  const dir = path.join(RUNS, id);
  const shownDir = path.relative(process.cwd(), dir) || dir;
  const rec: BisectRecord = { id, startedAt: new Date().toISOString(), scenario: s!.name, good, bad, n, pre, versions, steps: [] };
  writeBisect(dir, rec);
  const width = Math.max(...versions.map((v) => v.length));
  say(
    `fleetlab bisect ${id}: ${s!.name} from GOOD ${good} to BAD ${bad}: ${versions.length} version(s)${pre ? " (pre-releases included)" : ""}, at most ${maxSteps(versions.length)} step(s) of ${n} attempt(s)  ${topologyLine(spec, [s!])}\n  versions: ${versions.join(" ")}\n`,
  );
  // Every step on one seed (the first step's, when none is given): the versions are what differs.
  let common = seed;
  let current: Run | undefined;
  onEarlyEnd(() => {
    if (current) sealEarly(current);
    say(`\nthe bisect ended early, after ${rec.steps.length} step(s):\n${rec.steps.map((x) => `  ${stepLine(x, width)}\n`).join("")}bisect: ${path.join(shownDir, "bisect.json")}\n`);
  });
  const runStep = async (v: string) => {
    const run = (current = Run.create({ seed: common }));
    common = run.record.seed;
    const shown = path.relative(process.cwd(), run.dir) || run.dir;
    say(`\n== openclaw@${v}: ${s!.name} x${n}  run ${run.id}  seed=${run.record.seed}\n`);
    const attempts: StepAttempt[] = [];
    try {
      await reproLoop(s!, n, {
        spec: { ...spec, openclawVersion: v, seed: run.record.seed },
        run,
        onAttempt: (a) => {
          attempts.push({ verdict: a.verdict, evidence: a.evidence });
          const why = a.verdict === "unknown" || a.verdict === "fail" ? a.detail?.split("\n")[0]?.slice(0, 200) : undefined;
          say(`attempt ${String(a.index).padStart(String(n).length)}/${n}  ${a.verdict.toUpperCase().padEnd(13)}  ${a.seconds.toFixed(1).padStart(6)} s  ${path.join(shown, a.evidence)}${why ? `\n    ${why}` : ""}\n`);
        },
      });
      return { attempts, run: run.id };
    } catch (err) {
      if (interrupted()) throw err;
      // The version could not be set up, or the lab broke before the attempts ended: this step cannot tell.
      return { attempts, run: run.id, error: (err as Error).message };
    }
  };
  const result = await bisect(versions, runStep, (step) => {
    rec.steps.push(step);
    rec.seed = common;
    writeBisect(dir, rec);
    say(`${stepLine(step, width)}\n`);
  });
  current = undefined;
  rec.answer = result.answer;
  rec.endedAt = new Date().toISOString();
  const file = writeBisect(dir, rec);
  const again = bisectAgain({ scenario: s!.name, good, bad, n, pre, seed: common!, nodes: setting("NODES"), topology: setting("TOPOLOGY") });
  say(
    `\nsteps (in the order run; each step's run folder in ${path.relative(process.cwd(), RUNS) || RUNS}):\n${result.steps.map((x) => `  ${stepLine(x, width)}\n`).join("")}\n${answerLine(result.answer, { scenario: s!.name, good, bad })}\nbisect: ${path.relative(process.cwd(), file) || file}\nagain:  ${again}\n`,
  );
  if (values.json) printJson(bisectDocument(rec, path.relative(process.cwd(), dir) || dir));
  return bisectExitCode(result.answer);
}

/** Every command but help, by name. */
const HANDLERS: Record<string, (c: CommandArgs) => number | Promise<number>> = {
  list: listCommand,
  run: runCommand,
  repro: reproCommand,
  matrix: matrixCommand,
  bisect: bisectCommand,
  soak: soakCommand,
  up: upCommand,
  down: downCommand,
  prune: pruneCommand,
  report: reportCommand,
  judge: judgeCommand,
  merge: mergeCommand,
  excerpt: excerptCommand,
  issue: ({ rest, values, scenarios }) => issueCommand(rest, !!values.all, scenarios, (t) => say(t)),
  costs: costsCommand,
  images: imagesCommand,
};

/** The topology the chosen scenarios run on: the standard lab's node count, and each own lab's that differs. */
export function topologyLine(spec: TopologySpec, chosen: Scenario[]): string {
  const parts: string[] = [];
  if (chosen.some((s) => s.topology === "shared")) parts.push(`shared lab nodes=${spec.nodes.count}`);
  const own = chosen.filter((s) => s.topology === "own").map((s) => ({ s, n: parseTopology(mergeSpec(spec, s.spec ?? {}), `topology of ${s.name}`).nodes.count }));
  const same = own.filter((o) => o.n === spec.nodes.count);
  if (same.length) parts.push(`${same.length} own lab(s) nodes=${spec.nodes.count}`);
  for (const o of own.filter((o) => o.n !== spec.nodes.count)) parts.push(`${o.s.name} nodes=${o.n}`);
  return parts.join(", ") || `nodes=${spec.nodes.count}`;
}

/** What is under test, as the run's first line says it: `openclaw@2026.9.6`, or a build with where it came from. */
export function underTest(spec: Pick<TopologySpec, "openclawVersion" | "openclawBuild">): string {
  return spec.openclawBuild ? `openclaw@${spec.openclawVersion} (build of ${spec.openclawBuild.source})` : `openclaw@${spec.openclawVersion}`;
}

/** The environment a run was given (version, nodes, topology), as make variables, so a pasted command runs the same lab. */
function envArgs(spec: TopologySpec, seed: number): string {
  const q = (v: string) => (/^[\w.\/:=-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);
  const out = [`SEED=${seed}`, spec.openclawBuild ? `OPENCLAW_PACKAGE=${q(spec.openclawBuild.source)}` : `OPENCLAW_VERSION=${spec.openclawVersion}`];
  const nodes = setting("NODES");
  const topology = setting("TOPOLOGY");
  if (nodes) out.push(`NODES=${q(nodes)}`);
  if (topology) out.push(`TOPOLOGY=${q(topology)}`);
  return out.join(" ");
}

export function reproduceCommand(spec: TopologySpec, seed: number, names: string[]): string {
  return `make lab ${envArgs(spec, seed)} SCENARIOS="${names.join(" ")}"`;
}

function makeReproCommand(spec: TopologySpec, seed: number, name: string, n: number, until?: boolean, aimOff?: boolean, premise?: string): string {
  return `make repro NAME=${name} N=${n}${until ? " UNTIL=1" : ""}${aimOff ? ` AIM_OFF=${premise ?? 1}` : ""} ${envArgs(spec, seed)}`;
}

/**
 * What is under test exists, before a run folder or the engine: a build's tarball is in the
 * cache; a published version is installed in the cache already, or npm lists it. When npm cannot
 * be asked the run goes on (cached images need no npm; a set-up that does will say so).
 */
async function checkUnderTest(spec: TopologySpec): Promise<void> {
  const v = spec.openclawVersion;
  if (spec.openclawBuild) return checkOpenclawVersion(v); // a build: its tarball in the cache (npm is not asked)
  if (fs.existsSync(path.join(CACHE, `openclaw-${v}`, ".installed"))) return;
  // Its image on the engine (or on the one images are copied from): neither npm nor the registry is needed.
  if (await packageImageThere(v)) return;
  const published = await npmVersions().catch((e: Error) => {
    info(`could not ask npm whether openclaw@${v} exists (${e.message}); going on`);
    return undefined;
  });
  if (published) await checkOpenclawVersion(v, async () => published);
}

/** A write that failed for want of space or disk: the run's evidence cannot be trusted (exit 3). */
function endOnWriteFailure(err: NodeJS.ErrnoException): void {
  endEarly(`the lab could not write its evidence (${writeFailureText(err)}): the run cannot be trusted, so it ends as unknown. Free space there (make clean removes old runs and caches) and run again.`, 3);
}

/** Run the CLI as a process: its exit code, and a clear message for bad input. */
export function runCli(argv: string[], load: () => Promise<Scenario[]>): void {
  // An error that escapes a scenario is charged to it (lab/run/runner.ts); one that no scenario owns
  // is a bug of the lab itself: labs removed, faults healed, the table so far, exit 3 (never 1).
  installEscapeTrap();
  onUnownedEscape((e) => (isWriteFailure(e.error) ? endOnWriteFailure(e.error) : endEarly(`an error escaped the lab itself (${e.kind}), a bug of fleetlab's: ${(e.error as Error)?.stack ?? e.error}`, 3)));
  load()
    .then((scenarios) => main(argv, scenarios))
    .then(
      // Through exitWhenClean: an interrupted run ends only when its teardown has (with 130/143).
      (code) => exitWhenClean(code),
      (err: unknown) => {
        if (err instanceof LabError) {
          process.stderr.write(`fleetlab: ${err.message}\n`);
          return exitWhenClean(err.exitCode);
        }
        if (isWriteFailure(err)) return endOnWriteFailure(err);
        if (!interrupted()) process.stderr.write(`fleetlab: ${(err as Error).stack ?? err}\n`);
        exitWhenClean(3);
      },
    );
}
