// Faults at protocol points (no Docker): the scripted model server runs as a loopback child
// process, the same program the lab's model container runs; the fault is an in-memory one so
// the test measures the trigger, not an engine.
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ModelControl } from "../clients/model.ts";
import { listeningOnPort, startServerProcess, type ServerProcess } from "../testing/server-process.ts";
import { TeardownStack } from "../topology/teardown.ts";
import { Fault, type Detail, type FaultOptions } from "./fault.ts";
import { after, injectWhen, modelToolCalls, poll, stream, thenBeforeInject } from "./trigger.ts";

const SERVER = fileURLToPath(new URL("../../docker/model/server.ts", import.meta.url));
const SCRIPTS = fileURLToPath(new URL("../../fixtures/model/", import.meta.url));

/** The teardown stack of the lab these faults belong to; drained after each test. */
const lab = new TeardownStack();

class FlagFault extends Fault {
  readonly kind = "flag";
  on = false;
  onAt = 0;
  constructor(target: string, opts: FaultOptions = {}) {
    super(target, opts, lab);
  }
  protected async doInject() {
    this.on = true;
    this.onAt = performance.now();
  }
  protected async inEffect(): Promise<Detail | undefined> {
    return this.on ? {} : undefined;
  }
  protected async doHeal() {
    this.on = false;
  }
  protected async isHealed() {
    return {};
  }
}

let server: ServerProcess<number>;
let model: ModelControl;
let base: string;

beforeAll(async () => {
  server = await startServerProcess("model server", SERVER, { MODEL_PORT: "0", MODEL_HOST: "127.0.0.1", MODEL_SCRIPTS: SCRIPTS, MODEL_DEFAULT_SCRIPT: "default" }, listeningOnPort);
  base = `http://127.0.0.1:${server.ready}`;
  model = new ModelControl(base);
});

afterAll(async () => {
  await server?.stop();
});

afterEach(async () => {
  await lab.drain();
});

describe("injectWhen", () => {
  it("injects when the model has streamed the second tool call, not before, and records trigger and inject", async () => {
    await model.reset();
    await model.setScript([
      {
        id: "two-tools",
        match: "go two tools",
        chunkDelayMs: 150,
        reply: [{ toolCall: { name: "read", arguments: { path: "a" } }, chunks: 2 }, { toolCall: { name: "read", arguments: { path: "b" } }, chunks: 2 }, { text: "done", chunks: 2 }],
      },
    ]);
    const f = new FlagFault("node-1", {});
    const armed = await injectWhen(modelToolCalls(model, 2), f);
    // A turn as the gateway sends it: one streamed Responses call.
    const turn = fetch(`${base}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", stream: true, input: [{ role: "user", content: [{ type: "input_text", text: "go two tools" }] }] }),
    }).then((r) => r.text());
    // First call done (~300 ms), second not yet: no fault.
    await model.waitForRequest((r) => r.output.some((o) => o.type === "function_call"), 5000);
    expect(f.on).toBe(false);
    const res = await armed.injected;
    const secondDone = performance.now();
    expect(f.on).toBe(true);
    expect(res.value.toolCalls).toBe(2);
    const body = await turn;
    expect(body).toContain("response.completed");
    // The fault went in while the text after the second call was still streaming.
    expect(f.onAt).toBeLessThan(secondDone + 1);
    expect(res.reactionMs).toBeLessThan(500);
    const steps = f.timeline.of(f.id);
    expect(steps.map((s) => s.step)).toEqual(["prepare", "trigger", "inject", "in-effect"]);
    expect(steps[1]!.detail).toMatchObject({ what: "model streamed 2 tool call(s)", met: true });
    expect(steps[2]!.t).toBeGreaterThanOrEqual(steps[1]!.t + steps[1]!.ms - 1);
  });

  it("an async stream of observations: injects at the first that satisfies the predicate", async () => {
    async function* frames() {
      for (let i = 0; ; i++) {
        await new Promise((r) => setTimeout(r, 10));
        yield { seq: i, method: i === 7 ? "worker.launch.v1" : "tick" };
      }
    }
    const f = new FlagFault("node-1", {});
    const armed = await injectWhen(
      stream("worker.launch.v1", frames(), (x) => x.method === "worker.launch.v1"),
      f,
    );
    const res = await armed.injected;
    expect(res.value.seq).toBe(7);
    expect(f.on).toBe(true);
  });

  it("a polled condition; heal before the trigger fires cancels the watch and the fault is never injected", async () => {
    let ready = false;
    const f = new FlagFault("gw", {});
    const armed = await injectWhen(poll("ready", () => ready), f);
    await f.heal();
    ready = true;
    await expect(armed.injected).rejects.toThrow(/never fired \(fault healed first\)/);
    expect(f.on).toBe(false);
    expect(f.timeline.of(f.id).map((s) => s.step).sort()).toEqual(["cleanup", "prepare", "trigger"]);
  });

  it("an armed fault is registered on the lab's teardown from the start: draining it cancels the watch", async () => {
    const f = new FlagFault("gw", {});
    const armed = await injectWhen(poll("never", () => false), f);
    expect(lab.pending).toEqual([`heal ${f}`]);
    await lab.drain();
    await expect(armed.injected).rejects.toThrow(/never fired \(fault healed first\)/);
    expect(f.done).toBe(true);
  });

  it("a polled condition that throws ends the watch with its error", async () => {
    const f = new FlagFault("x", {});
    const armed = await injectWhen(
      poll("broken", () => {
        throw new Error("model server gone");
      }),
      f,
    );
    await expect(armed.injected).rejects.toThrow(/trigger 'broken' never fired \(model server gone\)/);
    expect(f.on).toBe(false);
  });

  it("cancel and timeout end the watch with the reason in the timeline", async () => {
    const f = new FlagFault("a", {});
    const armed = await injectWhen(poll("never", () => false), f);
    armed.cancel();
    await expect(armed.injected).rejects.toThrow(/cancelled/);
    const g = new FlagFault("b", {});
    const t0 = performance.now();
    const timed = await injectWhen(after(10_000), g, { timeoutMs: 100 });
    await expect(timed.injected).rejects.toThrow(/timed out/);
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(g.timeline.of(g.id).at(-1)).toMatchObject({ step: "trigger", detail: { met: false, why: "timed out" } });
  });
});

describe("thenBeforeInject", () => {
  it("runs its step once the trigger is met and before the fault is injected, with the trigger's value", async () => {
    const f = new FlagFault("node-1", {});
    const seen: { value: string; faultOn: boolean }[] = [];
    let ready: string | undefined;
    const trigger = thenBeforeInject(poll("ready", () => ready), async (value) => {
      seen.push({ value, faultOn: f.on });
    });
    expect(trigger.what).toBe("ready");
    const armed = await injectWhen(trigger, f);
    expect(seen).toEqual([]);
    ready = "held";
    const res = await armed.injected;
    expect(res.value).toBe("held");
    expect(seen).toEqual([{ value: "held", faultOn: false }]);
    expect(f.on).toBe(true);
  });
});
