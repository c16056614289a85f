// The scenario suite under vitest: one test per scenario, run and judged by the same runner
// and the same verdict rule as `make lab` (so verdicts, evidence and clean-up are identical);
// then the run's report.html opened in headless Chromium and read back.
import { afterAll, describe, expect, it } from "vitest";
import { Run } from "../lab/evidence/run.ts";
import { lanesFromEnv } from "../lab/core/settings.ts";
import { LabPool, runLanes, runOrder, startRun, writeRunReports, type ScenarioResult } from "../lab/run/runner.ts";
import { faultScenario, lookAtReport } from "../lab/evidence/report-check.ts";
import { info } from "../lab/core/log.ts";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SNAPSHOTS } from "../lab/topology/snapshot.ts";
import { OPERATOR_DIR, STATE } from "../lab/core/paths.ts";
import { topologyFromEnv } from "../lab/definitions/spec.ts";
import { setting } from "../lab/core/settings.ts";
import { parseShard, selectShard, shardRecord } from "../lab/run/shard.ts";
import { accepted } from "../lab/definitions/verdict.ts";
import { loadScenarios } from "./index.ts";
import { installEscapeTrap, onUnownedEscape, type Escape } from "../lab/core/escapes.ts";

/**
 * Each node host's device token and private key, as its own state database holds them (the
 * snapshot of paired state kept for each lab's shape: lab/topology/snapshot.ts), by lab key.
 */
function nodeCredentials(keys: (string | undefined)[]): Map<string, string> {
  const out = new Map<string, string>();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-creds-"));
  try {
    for (const key of new Set(keys.filter((k): k is string => !!k))) {
      const dir = path.join(SNAPSHOTS, key);
      if (!fs.existsSync(dir)) continue;
      for (const tar of fs.readdirSync(dir).filter((f) => /^node-.+\.tar$/.test(f))) {
        const db = path.join(scratch, `${key}-${tar}.sqlite`);
        fs.writeFileSync(db, execFileSync("tar", ["-xOf", path.join(dir, tar), ".openclaw/state/openclaw.sqlite"], { maxBuffer: 256 * 2 ** 20 }));
        const sqlite = new DatabaseSync(db, { readOnly: true });
        try {
          for (const r of sqlite.prepare("select role, token from device_auth_tokens").all() as { role: string; token: string }[]) out.set(`${key.slice(0, 8)}/${tar}'s ${r.role} device token`, r.token);
          for (const r of sqlite.prepare("select private_key_pem from device_identities").all() as { private_key_pem: string }[])
            out.set(`${key.slice(0, 8)}/${tar}'s private key`, r.private_key_pem.split("\n").find((l) => l && !l.startsWith("-----"))!);
        } finally {
          sqlite.close();
        }
      }
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  return out;
}

const spec = topologyFromEnv();
const run = Run.create({ seed: spec.seed });
// Where this suite's run folder is, for the not-accepted lines printed after a failed suite
// (package.json "test": other docker tests make run folders of their own, so `latest` may not be it).
fs.writeFileSync(path.join(STATE, "last-suite"), `${run.dir}\n`);
// SHARD=K/N runs only shard K of N (lab/run/shard.ts: split by measured cost, as `make lab SHARD=K/N`).
const shardText = setting("SHARD")?.trim();
const shard = shardText ? parseShard(shardText) : undefined;
// The field-bug repros (scenarios/repro/) are reproduction targets run with make repro, make
// matrix and make lab (the nightly); `make test` keeps to the lab's own suite unless REPROS=1.
const all = runOrder(await loadScenarios(undefined, { repro: setting("REPROS") === "1" }));
const split = shard ? selectShard(all, shard) : undefined;
const scenarios = split?.chosen ?? all;
const lanes = lanesFromEnv();

// The scenarios run in lanes side by side (lab/run/runner.ts runLanes; LANES=1: one after another),
// started by the first test; each scenario's test waits for its own verdict.
function deferred<T>() {
  let resolve!: (v: T) => void, reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}
// Errors that escape the lab itself (no scenario owns them) are collected and fail a test below.
const unowned: Escape[] = [];
installEscapeTrap();
onUnownedEscape((e) => {
  unowned.push(e);
  info(`an error escaped the lab itself (${e.kind}): ${(e.error as Error)?.stack ?? e.error}`);
});
const verdicts = new Map(scenarios.map((s) => [s.name, deferred<ScenarioResult>()]));
for (const v of verdicts.values()) v.promise.catch(() => {}); // reported by its own test
let suite: Promise<unknown> | undefined;
/** Everything under way at the end: a test that failed early does not leave lanes running. */
const settled = () => suite ?? Promise.resolve();

describe(`scenarios${shard ? ` (shard ${shard.index}/${shard.total})` : ""} (evidence: ${run.dir})`, () => {
  afterAll(async () => {
    await settled().catch(() => {});
  });

  it("has a Docker engine", { timeout: 600_000 }, async () => {
    if (shard && split) run.update((r) => void (r.shard = shardRecord(shard, split.plan)));
    let started!: () => void;
    const start = new Promise<void>((r) => (started = r));
    let failure: unknown;
    suite = runLanes(scenarios, spec, run, {
      lanes,
      onResult: (r) => verdicts.get(r.name)?.resolve(r),
      pool: (i) => {
        const p = new LabPool(spec, run);
        // The run's start (engine, plan, prune) is the first lane's, and this test's.
        if (i === 0) p.opts.start = async (...a) => void (await startRun(...a), started());
        return p;
      },
    }).then(
      () => {
        for (const [name, v] of verdicts) v.reject(new Error(`${name} did not run (its lane ended without it)`));
      },
      (err: unknown) => {
        failure = err;
        for (const v of verdicts.values()) v.reject(err);
      },
    );
    await Promise.race([start, suite]);
    if (failure) throw failure; // no engine, bad input: the run could not start

  });

  for (const s of scenarios) {
    // Its lane may run others first: the timeout covers the whole suite, the scenario's own deadline is the runner's.
    it(`${s.name}: ${s.proves}`, { timeout: 60 * 60_000 }, async () => {
      const r = await verdicts.get(s.name)!.promise;
      expect(accepted(r.verdict), `${r.verdict}: ${r.detail ?? ""}\nevidence: ${run.dir}/${r.evidence}`).toBe(true);
    });
  }

  // An error that escaped with no scenario to charge (lab/core/escapes.ts) is a bug of the lab's own.
  it("no error escaped the lab outside a scenario", { timeout: 60 * 60_000 }, async () => {
    await settled().catch(() => {});
    expect(unowned.map((e) => `${e.kind}: ${(e.error as Error)?.stack ?? e.error}`)).toEqual([]);
  });

  // The nightly uploads run folders and people attach them to bug reports: no credential the run
  // issued or used may be in any file of it (read after every lab is down and report.html written).
  it("no credential the run knows is in any file of its folder (gateway token, the operator's device tokens and key)", { timeout: 60 * 60_000 }, async () => {
    await settled().catch(() => {});
    writeRunReports(run);
    const identity = JSON.parse(fs.readFileSync(path.join(OPERATOR_DIR, "identity.json"), "utf8")) as { privateKeyPem: string; deviceTokens: Record<string, { token: string }> };
    const secrets = new Map<string, string>([["the gateway token", spec.gateway.token]]);
    for (const [role, t] of Object.entries(identity.deviceTokens)) secrets.set(`the operator's ${role} device token`, t.token);
    secrets.set("the operator's private key", identity.privateKeyPem.split("\n")[1]!);
    // The node hosts' own credentials, read from where OpenClaw keeps them (their state database
    // in each lab's snapshot of paired state), not from anything the lab's redactors learnt.
    for (const [what, value] of nodeCredentials(Object.values(run.record.labs ?? {}).map((l) => (l.snapshot?.path === "fresh" ? undefined : l.snapshot?.key)))) secrets.set(what, value);
    const hits: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else {
          const text = fs.readFileSync(p).toString("latin1");
          for (const [what, value] of secrets) if (value.length >= 8 && text.includes(value)) hits.push(`${what} in ${path.relative(run.dir, p)}`);
        }
      }
    };
    walk(run.dir);
    expect(secrets.size).toBeGreaterThan(2); // the operator was issued a device token: there is something to look for
    info(`credential grep over ${run.dir}: ${secrets.size} credentials (${[...secrets.keys()].join("; ")})`);
    expect(hits).toEqual([]);
  });

  // Last: this run's report.html as a person sees it, in headless Chromium (lab/host/chromium.sh).
  it("report.html shows the recorded verdicts, a fault and frames on the timeline (headless Chromium)", { timeout: 300_000 }, async (t) => {
    await settled().catch(() => {}); // every lab down: its transcripts and container events are in the run folder
    // A shard may hold no scenario with a fault: then there is no fault to look for on its page.
    if (shard && !faultScenario(run.dir, run.record)) t.skip(`shard ${shard.index}/${shard.total} ran no scenario with a fault`);
    const page = writeRunReports(run);
    expect(page, "report.html was written").toBeDefined();
    const look = await lookAtReport(page!.file, run.record);
    info(`report: ${page!.file} (${(page!.bytes / 2 ** 20).toFixed(1)} MiB, built in ${page!.ms} ms); verdicts read back: ${Object.keys(look.reading.verdicts).length}; items drawn: ${JSON.stringify(look.reading.items)}`);
    info(`screenshots: ${look.screenshots.join(", ")}`);
  });
});
