// A run killed outright in the middle of a fault leaves nothing behind after the next prune:
// no helper container, and no rule in any namespace that outlives the run.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { docker } from "../engine/docker.ts";
import { leftovers, prune } from "../engine/cleanup.ts";
import { Run } from "../evidence/run.ts";
import { ROOT } from "../core/paths.ts";
import { Testbed } from "../testing/testbed.ts";
import { Helper } from "./helper.ts";

type Dying = { runId: string; labId: string; members: Record<string, { id: string; ip: string }>; helpers: string[] };

/** Start dying-run.ts; resolve with what it reports once its faults are in effect. */
function dyingRun(...args: string[]): Promise<{ info: Dying; kill(): Promise<void> }> {
  const child = spawn(process.execPath, ["lab/testing/dying-run.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, FLEETLAB_QUIET: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const exited = new Promise<void>((r) => child.on("exit", () => r()));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve({ info: JSON.parse(line) as Dying, kill: async () => (child.kill("SIGKILL"), await exited) });
    });
    child.on("exit", (code) => reject(new Error(`dying-run exited (${code}) before its faults were in effect:\n${out}\n${err}`)));
  });
}

const exists = (id: string) =>
  docker()
    .getContainer(id)
    .inspect()
    .then(
      () => true,
      () => false,
    );

let bed: Testbed | undefined;
afterAll(async () => {
  await bed?.down();
});

describe("a run SIGKILLed mid-fault", () => {
  it("its lab, helper and partition are gone after prune (the rules went with the target's namespace)", { timeout: 120_000 }, async () => {
    const { info, kill } = await dyingRun("own");
    expect(info.helpers).toHaveLength(1);
    await kill(); // no heal ran: the partition is still in place
    expect(await exists(info.helpers[0]!)).toBe(true);
    const r = await prune();
    expect(r.runs).toContain(info.runId);
    expect(await leftovers({ run: info.runId })).toEqual([]);
    expect(await exists(info.helpers[0]!)).toBe(false);
    for (const m of Object.values(info.members)) expect(await exists(m.id)).toBe(false);
  });

  it("faults it set on containers that outlive it are healed by prune before it removes the helpers", { timeout: 120_000 }, async () => {
    const run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-faults-")) });
    bed = await Testbed.up(run, ["a", "b"]);
    const members = Object.fromEntries([...bed.members].map(([k, m]) => [k, { id: m.id, ip: m.ip }]));
    const { info, kill } = await dyingRun("attach", JSON.stringify({ network: bed.network, base: bed.images.base.tag, members }));
    expect(info.helpers).toHaveLength(2);
    await kill();
    // The dead run's faults still hold: a cannot reach b, b is shaped.
    expect((await bed.echo("a", "b", { timeoutMs: 400 })).ok).toBe(false);
    await prune();
    expect(await leftovers({ run: info.runId })).toEqual([]);
    // Our (live) run's containers are untouched, and clean.
    for (const m of ["a", "b"]) {
      const h = await Helper.start(bed.images.base.tag, bed.member(m).id, { run, lab: bed.id, faultId: "inspect", target: m });
      try {
        expect((await h.sh("iptables -w -S")).stdout.trim().split("\n")).toEqual(["-P INPUT ACCEPT", "-P FORWARD ACCEPT", "-P OUTPUT ACCEPT"]);
        expect((await h.sh("tc qdisc show")).stdout).not.toContain("tbf");
      } finally {
        await h.remove();
      }
    }
    expect((await bed.echo("a", "b")).ok).toBe(true);
  });
});
