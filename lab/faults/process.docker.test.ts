// Process faults on cheap containers: the engine's view and traffic to the target show each
// in effect and healed; heal brings back the same container (same id, same filesystem).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { docker } from "../engine/docker.ts";
import { Run } from "../evidence/run.ts";
import { Testbed } from "../testing/testbed.ts";
import { waitFor } from "../core/wait.ts";
import { faults } from "./index.ts";

let bed: Testbed;

beforeAll(async () => {
  const run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-faults-")) });
  bed = await Testbed.up(run, ["a", "b"]);
});
afterEach(async () => {
  // A failing test leaves its fault in place: heal it so the next test starts clean.
  await bed.teardown.drain();
});
afterAll(async () => {
  await bed?.down();
});

const state = async (alias: string) => (await docker().getContainer(bed.member(alias).id).inspect()).State;

describe("process faults", () => {
  it("kill: SIGKILL stops the container at once; heal starts the same container with its files", async () => {
    await bed.exec("b", ["sh", "-c", "echo kept > /var/tmp/state"]);
    const idBefore = bed.member("b").id;
    const f = faults.kill(bed, "b");
    const inj = await f.inject();
    expect(inj.detail).toMatchObject({ signal: "SIGKILL", exitCode: 137 });
    expect(inj.totalMs).toBeLessThan(2000);
    expect((await state("b")).Running).toBe(false);
    expect((await bed.echo("a", "b", { timeoutMs: 400 })).ok).toBe(false);
    await f.heal();
    expect((await state("b")).Running).toBe(true);
    expect(bed.member("b").id).toBe(idBefore);
    expect((await bed.exec("b", ["cat", "/var/tmp/state"])).stdout.trim()).toBe("kept");
    // The engine says running; the server inside needs a moment more (healedWhen waits for that).
    expect((await bed.echoSoon("a", "b")).ok).toBe(true);
  });

  it("kill with healedWhen: healed only once the extra observation holds (the server answers again)", async () => {
    const seen: boolean[] = [];
    const f = faults.kill(bed, "b", { healedWhen: async () => (seen.push((await bed.echo("a", "b", { timeoutMs: 300 })).ok), seen.at(-1)!) });
    await f.inject();
    await f.heal();
    expect(seen.at(-1)).toBe(true);
  });

  it("stop: SIGTERM, the process exits on its own (graceful); heal starts it again", async () => {
    const f = faults.stop(bed, "b", { timeoutSeconds: 5 });
    const inj = await f.inject();
    expect(inj.detail).toMatchObject({ exitCode: 143, graceful: true });
    expect(inj.totalMs).toBeLessThan(4000);
    await f.heal();
    expect((await bed.echoSoon("a", "b")).ok).toBe(true);
  });

  it("pause: the container freezes (connections accepted by the kernel, no answers); unpause releases the held reply", async () => {
    const f = faults.pause(bed, "b");
    await f.inject();
    expect((await state("b")).Paused).toBe(true);
    // A request sent while paused is answered after heal (in a burst), not lost. The kernel
    // still completes the handshake for the frozen server: wait for that, then hold 500 ms.
    const pending = bed.echo("a", "b", { timeoutMs: 5000 });
    await waitFor("a's connection to the paused b established", async () => (await bed.exec("a", ["ss", "-Htn", "state", "established", "dst", bed.member("b").ip])).stdout.trim(), {
      timeoutMs: 5000,
      intervalMs: 25,
    });
    await new Promise((r) => setTimeout(r, 500));
    const h = await f.heal();
    const r = await pending;
    expect(r.ok).toBe(true);
    expect(r.ms).toBeGreaterThan(400);
    expect(h.totalMs).toBeLessThan(1000);
    expect((await state("b")).Paused).toBe(false);
  });

  it("restart: in effect once the container runs again with a new start; nothing is left to heal", async () => {
    const before = (await state("b")).StartedAt;
    const f = faults.restart(bed, "b", { timeoutSeconds: 5 });
    await f.inject();
    const st = await state("b");
    expect(st.Running).toBe(true);
    expect(st.StartedAt).not.toBe(before);
    const h = await f.heal();
    expect(h.detail).toMatchObject({ alreadyRunning: true });
  });

  it("heal of a container that was removed meanwhile counts as healed (gone), it does not fail the run's end", async () => {
    const extra = await Testbed.up({ id: `${bed.run.id}-x` }, ["z"]);
    try {
      const f = faults.kill(extra, "z");
      await f.inject();
      expect(extra.teardown.pending).toEqual([`heal ${f}`]);
      await docker().getContainer(extra.member("z").id).remove({ force: true });
      const res = await extra.teardown.drain();
      expect(res.failed).toEqual([]);
      expect(res.done).toEqual([`heal ${f}`]);
      expect(f.timeline.of(f.id).find((e) => e.step === "heal")?.detail).toMatchObject({ gone: true });
    } finally {
      await extra.down();
    }
  });
});
