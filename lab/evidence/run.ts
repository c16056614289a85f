// One folder per run: run.json (topology, versions, image ids, seed, timings, verdicts,
// findings), container logs, frame transcripts, scenario verdicts. run.json has one schema
// (zod, below): every writer goes through Run, which validates before it writes, and every
// reader (report, replay) parses with the same schema, so a cut or hand-edited run.json is
// named as such instead of being trusted.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { RUNS } from "../core/paths.ts";
import { LabError } from "../core/log.ts";
import { writeAtomic } from "./write.ts";
import { REDACTED } from "./redact.ts";

const Verdict = z.enum(["pass", "fail", "unknown", "known-finding", "fixed?", "n/a"]);

/**
 * One named phase of a life cycle (a lab's bring-up, a scenario's run: lab/evidence/phases.ts), in the
 * order it ran: how long it took and whether it ended without an error of its own (a phase
 * that failed is the last one run, but for the clean-up phases after it; a scenario body that
 * failed is its verdict, not its phase's).
 */
export const PhaseRow = z.object({ name: z.string(), ms: z.number(), ok: z.boolean() });

export const ScenarioRow = z.object({
  name: z.string(),
  verdict: Verdict,
  seconds: z.number(),
  detail: z.string().optional(),
  /** When it started and ended (ISO), and its evidence folder inside the run folder. */
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  evidence: z.string().optional(),
  /** Its phases (needs, lab, body, drain, evidence checks, lab after); absent in run folders written before they were recorded. */
  phases: z.array(PhaseRow).optional(),
  /** What its body proved of its premises (lab/judge/judging.ts): met or not, with what was seen. */
  premises: z.array(z.object({ id: z.string(), what: z.string(), met: z.boolean(), observed: z.unknown().optional() })).optional(),
  /**
   * Earlier attempts of it in this run (lab/run/runner.ts): a scenario the lab could not judge
   * because the machine was busier than it plans for is run again once there is headroom; each
   * attempt before the one this row judges, with its verdict and why.
   */
  attempts: z.array(z.object({ verdict: Verdict, seconds: z.number(), detail: z.string().optional(), evidence: z.string().optional() })).optional(),
  /** Labs whose start OpenClaw gave up because the machine starved it, started again (lab/run/admission.ts): each failed start. */
  startAttempts: z.array(z.object({ lab: z.string(), attempt: z.number().int().positive(), reason: z.string(), evidence: z.string().optional() })).optional(),
  /** The machine's pace while it ran (lab/core/pace.ts): the worst reading, and why it was busier than planned if it was. */
  pace: z.object({ worst: z.number(), load: z.number(), own: z.number().optional(), busy: z.string().optional() }).optional(),
  /**
   * Where its body's time went (lab/core/waits.ts): the body's seconds, and of them the waits that
   * ran a whole window out (an expectation's bound), that ended when OpenClaw did what was awaited,
   * requests to the gateway awaiting their answers, and the scenario's own pauses; the rest is the
   * lab's own work (faults, commands in containers, reading evidence).
   */
  waits: z.object({ bodyS: z.number(), windowS: z.number(), observedS: z.number(), requestS: z.number().optional(), pauseS: z.number() }).optional(),
});

/** One judged expectation (lab/findings/findings.ts CheckResult). */
export const CheckRow = z.object({
  findingId: z.string(),
  scenario: z.string(),
  expectation: z.string(),
  outcome: z.enum(["pass", "fail", "known-finding", "fixed?"]),
  observed: z.unknown().optional(),
  registered: z.unknown().optional(),
  kind: z.enum(["shortfall", "differs-from-reference"]),
  note: z.string().optional(),
});

const ImageRow = z.object({ tag: z.string(), id: z.string(), cached: z.boolean(), seconds: z.number() });

/** A lab's part of run.json (written by Lab as it comes up and goes down). */
export const LabRow = z.object({
  evidence: z.string(),
  spec: z.unknown(),
  network: z.object({ name: z.string(), id: z.string(), subnet: z.string() }),
  images: z.record(z.string(), ImageRow).optional(),
  members: z.array(z.object({ alias: z.string(), kind: z.string(), container: z.string(), ip: z.string(), volume: z.string().optional() })),
  timings: z.record(z.string(), z.number()),
  /** Its bring-up's phases (images, network, members, operator, restore, pairing, snapshot) and down; absent in older run folders. */
  phases: z.array(PhaseRow).optional(),
  /** CPU seconds its containers had used when it was taken down, by kind of member (a restarted container counts from its last start); with the CPU share claimed. */
  cpuS: z.record(z.string(), z.number()).optional(),
  /** What its OpenClaw version offers (lab/engine/capabilities.ts): CLI options, and the hello-ok's methods and events. */
  capabilities: z.object({ image: z.string(), nodeRunOptions: z.array(z.string()), gatewayRunOptions: z.array(z.string()) }).optional(),
  protocol: z.object({ methods: z.array(z.string()), events: z.array(z.string()) }).optional(),
  /** How the lab got its paired state (lab/topology/snapshot.ts): restored from a snapshot, paired and taken, or paired from scratch. */
  snapshot: z.object({ path: z.enum(["restored", "taken", "fresh"]), key: z.string(), seconds: z.number(), reason: z.string().optional() }).optional(),
  /** A scripted fleet paired at bring-up (spec.scripted.paired): how many the gateway knew, were paired then, refused or lost, in how long. */
  fleet: z.object({ count: z.number(), admitted: z.number(), paired: z.number(), refused: z.number(), lost: z.number(), seconds: z.number() }).optional(),
});

export const ShardInfo = z.object({
  index: z.number().int().positive(),
  total: z.number().int().positive(),
  partition: z.array(z.array(z.string())),
  estimatedSeconds: z.array(z.number()).optional(),
  sharedGroups: z.number().int().nonnegative().optional(),
});

export const ShardRow = z.object({
  index: z.number().int().positive(),
  total: z.number().int().positive(),
  /** complete: every planned scenario ran; cut: some never ran; missing: no run folder came back. */
  status: z.enum(["complete", "cut", "missing"]),
  runId: z.string().optional(),
  seed: z.number().optional(),
  /** Its folder inside the merged run (a copy of the shard's run folder). */
  dir: z.string().optional(),
  /** The scenarios it was to run, and those of them that never ran. */
  planned: z.array(z.string()),
  neverRan: z.array(z.string()),
  seconds: z.number().optional(),
});

const StallCauseSchema = z.object({ cpuMs: z.number(), gcMs: z.number(), queuedMs: z.number(), blockedMs: z.number() });

export const RunRecordSchema = z.strictObject({
  id: z.string(),
  startedAt: z.string(),
  endedAt: z.string().optional(),
  seed: z.number().int().nonnegative(),
  host: z.object({ platform: z.string(), cpus: z.number(), memGiB: z.number(), node: z.string() }),
  engine: z.object({ version: z.string(), apiVersion: z.string() }).optional(),
  /** The machine's pace when the run started (lab/core/pace.ts): what its bring-up deadlines were multiplied by. */
  pace: z.object({ factor: z.number(), calibrationMs: z.number(), referenceMs: z.number(), load: z.number(), cores: z.number(), own: z.number().optional(), source: z.enum(["measured", "FLEETLAB_PACE"]) }).optional(),
  /** The lab's CPU share (lab/core/cpu-share.ts): whether its process and containers were weighted before the work beside them, and how or why not. */
  cpuShare: z.object({ claimed: z.boolean(), how: z.string() }).optional(),
  /** The machine's pace as it was sampled through the run (lab/core/pace.ts): [ms since start, load, unclamped factor], every 10th sample. */
  paceTrace: z.array(z.tuple([z.number(), z.number(), z.number()])).optional(),
  /** The lab's own process: its event loop's late ticks of 250 ms or more and of 1 s or more, the longest, and its delay percentiles (lab/core/stalls.ts). */
  stalls: z
    .object({
      over250ms: z.number(),
      over1s: z.number(),
      longestMs: z.number(),
      delayMs: z.object({ p50: z.number(), p99: z.number(), max: z.number() }),
      /** Where the main thread was through the counted stalls (ms): on a CPU (of it GC), waiting for one, blocked in a system call. */
      where: StallCauseSchema.optional(),
      /** The longest counted stalls (up to 10), each with where the thread was. */
      longest: z.array(z.object({ from: z.string(), ms: z.number(), where: StallCauseSchema.optional() })).optional(),
    })
    .optional(),
  /**
   * The CPU the run used (lab/run/runner.ts cpuSpent): its wall time and the machine's cores, the
   * lab's containers (with the CPU share claimed: all of them, removed and restarted ones included)
   * and its own process; by kind of member as read at each lab's teardown.
   */
  cpu: z.object({ wallS: z.number(), cores: z.number(), containersS: z.number().optional(), labProcessS: z.number(), byKind: z.record(z.string(), z.number()).optional() }).optional(),
  topology: z.unknown().optional(),
  /** The scenarios this run was asked to run, in order (a cut run shows what never ran). */
  plan: z.array(z.string()).optional(),
  timings: z.record(z.string(), z.number()),
  scenarios: z.array(ScenarioRow),
  findings: z.array(CheckRow).optional(),
  labs: z.record(z.string(), LabRow).optional(),
  faults: z.object({ timeline: z.string() }).optional(),
  /** Every finding id some check judged in this run (any outcome), for the records never judged. */
  exercised: z.array(z.string()).optional(),
  /**
   * Finding records no check judged: a scenario's own (its body ran to the end without judging
   * them) or, with no scenario, a lab-wide one (lab/checks/findings.ts) no scenario of the run judged.
   */
  unexercised: z.array(z.object({ id: z.string(), scenario: z.string().optional() })).optional(),
  /** A shard's run (lab/run/shard.ts): which shard, and the whole partition it was cut from. */
  shard: ShardInfo.optional(),
  /** Lanes run side by side in this process (lab/run/runner.ts runLanes): each lane's scenarios and the estimate it was split by. */
  lanes: z.object({ partition: z.array(z.array(z.string())), estimatedSeconds: z.array(z.number()) }).optional(),
  /** A reproduction loop (lab/commands/repro.ts): the scenario, attempts asked and made, how many reproduced. */
  repro: z
    .object({
      scenario: z.string(),
      asked: z.number().int().positive(),
      until: z.boolean(),
      /** The premise self-test (`--aim-off`): the fault aimed off its path; `caught` attempts read unknown with the aimed premise unmet. */
      aimOff: z.boolean().optional(),
      /** Under --aim-off: the premises aimed off, one at a time, `asked / aimed.length` attempts each. */
      aimed: z.array(z.string()).optional(),
      /** The scenario's premises with no aim-off: never self-tested. */
      notSelfTested: z.array(z.string()).optional(),
      caught: z.number().int().nonnegative().optional(),
      letThrough: z.number().int().nonnegative().optional(),
      couldNotTell: z.number().int().nonnegative().optional(),
      ran: z.number().int().nonnegative().optional(),
      /** With the registered signature (lab/commands/repro.ts classify). */
      reproduced: z.number().int().nonnegative().optional(),
      /** Matched a differs-from-reference record: what it is, never counted as reproduced. */
      differs: z.number().int().nonnegative().optional(),
      newSignature: z.number().int().nonnegative().optional(),
      failedOtherwise: z.number().int().nonnegative().optional(),
      notReproduced: z.number().int().nonnegative().optional(),
      unknown: z.number().int().nonnegative().optional(),
      /** Attempts that showed the bug (registered or new signature). */
      hits: z.array(z.number().int()).optional(),
      attempts: z
        .array(
          z.object({
            index: z.number().int(),
            verdict: z.string(),
            class: z.enum(["reproduced", "differs from reference", "new signature", "failed otherwise", "not reproduced", "could not tell"]),
            why: z.string().optional(),
            /** Under --aim-off: whether the premise check caught the miss, and what it saw. */
            aimOff: z.object({ premise: z.string().optional(), caught: z.boolean(), outcome: z.enum(["caught", "let through", "could not tell"]).optional(), why: z.string() }).optional(),
          }),
        )
        .optional(),
    })
    .optional(),
  /** A merged run (lab/evidence/merge.ts): each shard folder it was made of, or the one missing. */
  shards: z.array(ShardRow).optional(),
});

export type RunRecord = z.infer<typeof RunRecordSchema>;
export type ScenarioRow = z.infer<typeof ScenarioRow>;
export type LabRow = z.infer<typeof LabRow>;
export type PhaseRow = z.infer<typeof PhaseRow>;

/** A moment as run ids and judged/ folders name it: yyyymmdd-hhmmss (UTC). */
export function timeStamp(now = new Date()): string {
  return now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15).toLowerCase();
}

export function newRunId(now = new Date()): string {
  const t = timeStamp(now);
  // 64 random bits: two runs started in the same second never share an id (labels, folders).
  return `${t}-${randomBytes(8).toString("hex")}`;
}

/**
 * A run id given from outside (FLEETLAB_RUN_ID: the runner container's launcher names its run):
 * used as a folder name and a Docker label, so only [A-Za-z0-9._-], at most 64 characters, and
 * never one a run folder already has (two runs with one id would tear down each other's labs).
 */
export function checkGivenRunId(id: string, runs = RUNS): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(id)) throw new LabError(`FLEETLAB_RUN_ID=${JSON.stringify(id)}: a run id is 1-64 of A-Z a-z 0-9 . _ - (starting with a letter or digit); unset it to get a fresh one`);
  if (id === LATEST) throw new LabError(`FLEETLAB_RUN_ID=${LATEST}: that name is the link to the newest run (${path.join(runs, LATEST)}); give another id or unset it to get a fresh one`);
  if (fs.existsSync(path.join(runs, id))) throw new LabError(`FLEETLAB_RUN_ID=${id}: a run with this id exists already (${path.join(runs, id)}); unset it to get a fresh one`);
  return id;
}

/** The name of the link, in the runs folder, to the newest run folder (`.lab/runs/latest`). */
export const LATEST = "latest";

/**
 * Point `<runs>/latest` at the run folder `id` (relative, so the runs folder can be moved or
 * copied whole): a link made under a temporary name, then renamed over the old one, so a reader
 * never meets a missing or half-made link, and of two runs created at once the later rename wins.
 * A link that cannot be made (a file system without symbolic links) is said, never a failed run.
 */
export function linkLatest(runs: string, id: string): void {
  const tmp = path.join(runs, `.${LATEST}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`);
  try {
    fs.symlinkSync(id, tmp);
    fs.renameSync(tmp, path.join(runs, LATEST));
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    process.stderr.write(`fleetlab: could not point ${path.join(runs, LATEST)} at ${id}: ${(err as Error).message}\n`);
  }
}

export class Run {
  readonly record: RunRecord;
  readonly id: string;
  readonly dir: string;
  constructor(
    id: string,
    dir: string,
    seed: number,
  ) {
    this.id = id;
    this.dir = dir;
    fs.mkdirSync(dir, { recursive: true });
    this.record = {
      id,
      startedAt: new Date().toISOString(),
      seed,
      host: { platform: `${os.platform()}-${os.arch()}`, cpus: os.cpus().length, memGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
      timings: {},
      scenarios: [],
    };
    this.save();
  }

  static create(opts: { seed?: number; id?: string; root?: string } = {}): Run {
    const id = opts.id ?? newRunId();
    const seed = opts.seed ?? randomBytes(4).readUInt32BE() >>> 1;
    const root = opts.root ?? RUNS;
    const run = new Run(id, path.join(root, id), seed);
    linkLatest(root, id); // the folder and its run.json exist: `latest` never points at nothing
    return run;
  }

  /** A path inside the run folder (its parent folders created). */
  file(rel: string): string {
    const p = path.join(this.dir, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    return p;
  }

  /** Record how long a named step took, in seconds. */
  time(name: string, seconds: number): void {
    this.update((r) => void (r.timings[name] = Math.round(seconds * 1000) / 1000));
  }

  /** Change the record and write it (validated first; an invalid change is rolled back). */
  update(change: (r: RunRecord) => void): void {
    const before = structuredClone(this.record);
    change(this.record);
    try {
      this.save();
    } catch (err) {
      for (const k of Object.keys(this.record)) delete (this.record as Record<string, unknown>)[k];
      Object.assign(this.record, before);
      throw err;
    }
  }

  /** Write run.json; a writer that put something the schema does not allow fails here, naming the field. */
  save(): void {
    const ok = RunRecordSchema.safeParse(this.record);
    if (!ok.success) throw new Error(`run.json of ${this.id} would be invalid: ${describeIssues(ok.error)}`);
    writeAtomic(path.join(this.dir, "run.json"), JSON.stringify(redactRecord(this.record), null, 2) + "\n");
  }
}

/**
 * run.json as written: the gateway's shared token of the run's topology and of each lab's spec
 * hidden (it was the one credential in clear in a run folder). A replay does not need it: the
 * lab's token is the lab's own, and a replayed run gets the default one.
 */
export function redactRecord(record: RunRecord): RunRecord {
  const out = structuredClone(record);
  const hide = (spec: unknown) => {
    const gw = (spec as { gateway?: { token?: unknown } } | undefined)?.gateway;
    if (gw && typeof gw.token === "string") gw.token = REDACTED;
  };
  hide(out.topology);
  for (const lab of Object.values(out.labs ?? {})) hide(lab.spec);
  return out;
}

/** Read and validate a run.json (report, replay). */
export function readRunRecord(file: string): RunRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new LabError(`${file} is not readable JSON (${(err as Error).message}); was the run cut while writing it?`);
  }
  const ok = RunRecordSchema.safeParse(raw);
  if (!ok.success) throw new LabError(`${file} is not a fleetlab run record: ${describeIssues(ok.error)}`);
  return ok.data;
}

function describeIssues(err: z.ZodError): string {
  return err.issues
    .slice(0, 5)
    .map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`)
    .join("; ");
}
