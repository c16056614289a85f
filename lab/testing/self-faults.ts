// The lab's own fault table (docs/reference/faults.md "What was done to the lab itself"):
// a real `fleetlab run smoke` is hit at a phase (SIGKILL, SIGTERM, two Ctrl-C, its engine's
// dockerd killed or stopped, its disk filled), and what it did is measured: exit code, seconds
// from the hit to its exit, what it left on the engine and in processes, whether its run.json is
// valid, and whether the next run on that engine found nothing of it left and passed.
//
// Root, a warm engine (images built) and engine2's images (`make engine2`, then one run there
// with FLEETLAB_IMAGES_FROM) are needed. Not part of `make test`: about 15 minutes.
// usage: node_modules/.bin/node lab/testing/self-faults.ts [row...]   (prints a markdown table)
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readRunRecord } from "../evidence/run.ts";
import { CACHE, ROOT, STATE } from "../core/paths.ts";

const ENGINE2 = "unix:///run/fleetlab-engine2.sock";
const OUT = path.join(STATE, "self-faults");

interface Row {
  name: string;
  /** Where the run's phase shows: the first output line matching this starts the hit. */
  at: RegExp;
  /** Seconds after that line. */
  after?: number;
  hit: (pgid: number) => void;
  engine2?: boolean;
  env?: Record<string, string>;
  /** Before the run (a tmpfs) and after its exit (heal the engine). */
  before?: () => Record<string, string>;
  heal?: () => void;
  /** Something the row does while the run goes on (fills the disk). */
  during?: (runDir: () => string | undefined) => void;
}

const kill = (sig: NodeJS.Signals) => (pgid: number) => process.kill(-pgid, sig);
const dockerdPid = () => Number(fs.readFileSync("/run/fleetlab-engine2.pid", "utf8").trim());
let tmpfs: string | undefined;

const ROWS: Row[] = [
  { name: "SIGKILL during bring-up", at: /containers started \(/, hit: kill("SIGKILL") },
  { name: "SIGKILL during pairing", at: /pairing node-1, node-2/, after: 2, hit: kill("SIGKILL"), env: { FLEETLAB_SNAPSHOT: "0" } },
  { name: "SIGKILL during the scenario", at: /scenario smoke \.\.\./, after: 3, hit: kill("SIGKILL") },
  { name: "SIGKILL during teardown", at: /scenario smoke: \w+ in/, hit: kill("SIGKILL") },
  { name: "SIGTERM during the scenario", at: /scenario smoke \.\.\./, after: 3, hit: kill("SIGTERM") },
  {
    name: "two Ctrl-C during the scenario",
    at: /scenario smoke \.\.\./,
    after: 3,
    hit: (pgid) => {
      process.kill(-pgid, "SIGINT");
      setTimeout(() => {
        try {
          process.kill(-pgid, "SIGINT");
        } catch {
          /* gone already */
        }
      }, 1500);
    },
  },
  {
    name: "disk full during the scenario (run folder on a 48 MB tmpfs)",
    at: /scenario smoke \.\.\./,
    after: 1,
    hit: () => {
      try {
        execFileSync("dd", ["if=/dev/zero", `of=${path.join(tmpfs!, "filler")}`, "bs=1M", "count=64"], { stdio: "ignore" });
      } catch {
        /* full: that is the point */
      }
    },
    before: () => {
      tmpfs = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-full-"));
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=48m", "tmpfs", tmpfs]);
      return { FLEETLAB_STATE: tmpfs, FLEETLAB_CACHE: CACHE };
    },
  },
  {
    name: "engine2's dockerd killed (SIGKILL) during the scenario",
    engine2: true,
    at: /scenario smoke \.\.\./,
    after: 3,
    hit: () => process.kill(dockerdPid(), "SIGKILL"),
    heal: () => void execFileSync("bash", ["lab/host/engine2.sh", "start"], { cwd: ROOT, stdio: "ignore" }),
  },
  {
    name: "engine2's dockerd stopped (SIGSTOP, a hung engine), then Ctrl-C",
    engine2: true,
    at: /scenario smoke \.\.\./,
    after: 3,
    hit: (pgid) => {
      const pid = dockerdPid();
      process.kill(pid, "SIGSTOP");
      setTimeout(() => process.kill(-pgid, "SIGINT"), 10_000);
    },
    heal: () => process.kill(dockerdPid(), "SIGCONT"),
  },
];

interface Result {
  row: string;
  runId?: string;
  code: number | string;
  seconds?: number;
  left: string[];
  evidence: string;
  next?: string;
  output: string;
}

function docker(engine2: boolean, args: string[]): string {
  // A hung engine must not hang the measurement: 10 s, then "did not answer".
  return execFileSync("docker", [...(engine2 ? ["-H", ENGINE2] : []), ...args], { encoding: "utf8", timeout: 10_000 }).trim();
}

function leftOnEngine(engine2: boolean, runId: string): string[] {
  const f = ["--filter", `label=fleetlab.run=${runId}`];
  const n = (what: string, out: string) => (out ? [`${out.split("\n").length} ${what}`] : []);
  try {
    return [...n("container(s)", docker(engine2, ["ps", "-aq", ...f])), ...n("network(s)", docker(engine2, ["network", "ls", "-q", ...f])), ...n("volume(s)", docker(engine2, ["volume", "ls", "-q", ...f]))];
  } catch (err) {
    return [`(engine did not answer: ${(err as Error).message.split("\n")[0]})`];
  }
}

function runOne(row: Row, extraEnv: Record<string, string>): Promise<Result> {
  const env: NodeJS.ProcessEnv = { ...process.env, FLEETLAB_CLEANUP_TIMEOUT_S: "30", ...row.env, ...extraEnv };
  if (row.engine2) env.DOCKER_HOST = ENGINE2;
  // The pinned Node of this checkout (the host's may be older than the lab's libraries allow).
  const pinned = path.join(ROOT, "node_modules", ".bin", "node");
  const node = fs.existsSync(pinned) ? fs.realpathSync(pinned) : process.execPath;
  const args = ["scenarios/main.ts", "run", "smoke"];
  const child = row.engine2 ? spawn("ip", ["netns", "exec", "fleetlab-engine2", node, ...args], { cwd: ROOT, env, detached: true }) : spawn(node, args, { cwd: ROOT, env, detached: true });
  let output = "";
  let runId: string | undefined;
  let hitAt: number | undefined;
  const onData = (d: Buffer) => {
    output += d;
    runId ??= /fleetlab run (\S+) /.exec(output)?.[1];
    if (hitAt === undefined) {
      const line = output.split("\n").find((l) => row.at.test(l));
      if (line) {
        hitAt = -1;
        setTimeout(() => {
          hitAt = performance.now();
          row.hit(child.pid!);
        }, (row.after ?? 0) * 1000);
      }
    }
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  return new Promise((resolve) => {
    child.on("exit", (code, sig) => {
      const end = performance.now();
      const stateDir = env.FLEETLAB_STATE ?? STATE;
      const left = runId ? leftOnEngine(!!row.engine2, runId) : [];
      let procs = "";
      try {
        procs = execFileSync("pgrep", ["-g", String(child.pid)], { encoding: "utf8" }).trim();
      } catch {
        /* none */
      }
      if (procs) left.push(`${procs.split("\n").length} process(es) of its group`);
      let evidence = "no run folder";
      if (runId) {
        const file = path.join(stateDir, "runs", runId, "run.json");
        if (tmpfs) fs.rmSync(path.join(tmpfs, "filler"), { force: true });
        try {
          const rec = readRunRecord(file);
          evidence = `run.json valid (${rec.scenarios.length} verdict(s)${rec.endedAt ? ", ended" : ", not ended"})`;
        } catch (err) {
          evidence = `run.json NOT valid: ${(err as Error).message.split("\n")[0]}`;
        }
      }
      resolve({
        row: row.name,
        runId,
        code: code ?? `signal ${sig}`,
        seconds: hitAt && hitAt > 0 ? Math.round((end - hitAt) / 100) / 10 : undefined,
        left,
        evidence,
        output,
      });
    });
  });
}

/** A plain smoke run on that engine: does it pass, and is the last hit run's debris gone after its start? */
async function nextRun(engine2: boolean, prev: string | undefined): Promise<string> {
  const r = await runOne({ name: "next", at: /^$/, hit: () => {}, engine2 }, {});
  const still = prev ? leftOnEngine(engine2, prev) : [];
  return `exit ${r.code}; ${still.length ? `left of the hit run: ${still.join(", ")}` : "nothing of the hit run left"}`;
}

const wanted = process.argv.slice(2);
const rows = ROWS.filter((r) => !wanted.length || wanted.some((w) => r.name.includes(w)));
fs.mkdirSync(OUT, { recursive: true });
const results: Result[] = [];
for (const row of rows) {
  process.stderr.write(`self-faults: ${row.name} ...\n`);
  const extra = row.before?.() ?? {};
  let r: Result;
  try {
    r = await runOne(row, extra);
  } finally {
    if (tmpfs) {
      execFileSync("umount", ["-l", tmpfs]);
      fs.rmSync(tmpfs, { recursive: true, force: true });
      tmpfs = undefined;
    }
  }
  row.heal?.();
  r.next = await nextRun(!!row.engine2, r.runId);
  fs.writeFileSync(path.join(OUT, `${row.name.replace(/\W+/g, "-")}.log`), r.output);
  results.push(r);
  process.stderr.write(`self-faults: ${row.name}: exit ${r.code} in ${r.seconds ?? "?"} s; left: ${r.left.join(", ") || "nothing"}; ${r.evidence}; next: ${r.next}\n`);
}
fs.writeFileSync(path.join(OUT, "results.json"), JSON.stringify(results.map(({ output: _o, ...r }) => r), null, 2));
process.stdout.write("| what was done | exit | seconds to exit | left at exit | evidence | next run on that engine |\n|---|---|---|---|---|---|\n");
for (const r of results) process.stdout.write(`| ${r.row} | ${r.code} | ${r.seconds ?? "-"} | ${r.left.join(", ") || "nothing"} | ${r.evidence} | ${r.next} |\n`);
