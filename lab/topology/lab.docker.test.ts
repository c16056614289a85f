// Bring-up as a user meets it when a node host cannot start: OpenClaw's node host refuses a bad
// option and exits; the pairing wait sees the container gone at its first look and ends at once,
// quoting the node's exit code and its own words, instead of waiting out its 120 s; and the
// verdict is OpenClaw's (SystemUnderTestError: fail), not "the lab could not tell".
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { leftovers } from "../engine/cleanup.ts";
import { requireEngine } from "../engine/docker.ts";
import { Run } from "../evidence/run.ts";
import { MemberContainer } from "../members/member.ts";
import { SystemUnderTestError } from "../scenario.ts";
import { Lab } from "./lab.ts";
import { parseTopology } from "../definitions/spec.ts";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-bringup-"));
afterAll(() => {
  vi.restoreAllMocks();
  fs.rmSync(root, { recursive: true, force: true });
});

describe("bring-up with a node host that exits", () => {
  it("fails in seconds with the node's stderr quoted, as OpenClaw's failure, and leaves nothing behind", { timeout: 240_000 }, async () => {
    await requireEngine();
    // The bad option: `openclaw node run --port notaport` (the entrypoint passes GATEWAY_PORT
    // as --port). OpenClaw answers "Invalid --port ..." and exits 1 (node-cli in its dist).
    const start = MemberContainer.prototype.startMember;
    vi.spyOn(MemberContainer.prototype, "startMember").mockImplementation(function (this: MemberContainer) {
      if (this.kind === "node") this.withEnvironment({ GATEWAY_PORT: "notaport" });
      return start.call(this);
    });
    const run = Run.create({ root, seed: 1 });
    const spec = parseTopology({ nodes: { count: 1, devicePairing: "subnet" }, mcp: { servers: [] }, git: { enabled: false }, tap: { enabled: false } });

    const t0 = performance.now();
    // Paired from scratch: a node that fails on restored state would be the lab's unknown, not OpenClaw's fail.
    const err = (await Lab.up(spec, run, "lab", { snapshot: "fresh" }).then(
      (lab) => lab.down().then(() => new Error("the lab came up")),
      (e: unknown) => e,
    )) as Error;
    const seconds = (performance.now() - t0) / 1000;

    expect(err).toBeInstanceOf(SystemUnderTestError);
    expect(err.message).toMatch(/^pairing the node hosts: node host node-1: the container exited \(code 1\); last log lines:\n/);
    expect(err.message).toMatch(/Invalid --port/);
    // The gateway's /readyz (10-20 s here) and the operator's approval come first; the pairing
    // wait itself would take 120 s to time out. Well under that is "at once".
    expect(seconds).toBeLessThan(75);
    const pairing = run.record.labs ? Object.values(run.record.labs)[0]?.timings : undefined;
    expect(pairing?.ready, "a lab that did not come up records no ready time").toBeUndefined();
    // Its phases in run.json: the failing one last of bring-up, then the clean-up (down).
    const phases = run.record.labs ? Object.values(run.record.labs)[0]?.phases : undefined;
    expect(phases?.map((p) => (p.ok ? p.name : `${p.name} FAILED`))).toEqual(["images", "network", "members", "operator", "pairing FAILED", "down"]);
    expect(await leftovers({ run: run.id })).toEqual([]);
  });
});
