import http from "node:http";
import type { AddressInfo } from "node:net";
import type Dockerode from "dockerode";
import { afterEach, describe, expect, it } from "vitest";
import { StopWaiting, WaitTimeout } from "../core/wait.ts";
import { HttpOnLabNetwork } from "./wait-http.ts";

// A real HTTP server on loopback stands in for the member; the container is what the engine
// would say about it (running or exited, its address on the lab network, its log).
let server: http.Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

async function serve(status: () => number): Promise<number> {
  server = http.createServer((req, res) => res.writeHead(req.url === "/healthz" ? status() : 404).end());
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

function container(state: { running: boolean; exitCode?: number; ip?: string; log?: string[] }): Dockerode.Container {
  const frame = (line: string) => {
    const body = Buffer.from(`${line}\n`);
    const head = Buffer.alloc(8);
    head[0] = 2;
    head.writeUInt32BE(body.length, 4);
    return Buffer.concat([head, body]);
  };
  return {
    id: "c0ffee",
    inspect: async () => ({
      State: { Running: state.running, ExitCode: state.exitCode ?? 0 },
      NetworkSettings: { Networks: state.ip ? { lab: { IPAddress: state.ip } } : {} },
    }),
    logs: async () => Buffer.concat((state.log ?? []).map(frame)),
  } as unknown as Dockerode.Container;
}

const strategy = (port: number, onFail?: () => Promise<void>) => new HttpOnLabNetwork({ network: "lab", port, path: "/healthz", what: "model /healthz", onFail });

describe("readiness over the lab network (HTTP 200 from the container's address)", () => {
  it("waits until the member answers 200", async () => {
    let calls = 0;
    const port = await serve(() => (++calls < 3 ? 503 : 200));
    const ms = await strategy(port).waitOn(container({ running: true, ip: "127.0.0.1" }), { timeoutMs: 5_000 });
    expect(calls).toBe(3);
    expect(ms).toBeGreaterThanOrEqual(400); // two polls of 250 ms before the third answered
  });

  it("fails at once when the container exits, quoting its exit code and last log lines, after saving its logs", async () => {
    let saved = 0;
    // "At once": the first look at the container ends the wait (one inspect, no poll after it,
    // not the 10 s timeout), whatever the machine's load makes of the wall clock.
    const exited = container({ running: false, exitCode: 137, ip: "127.0.0.1", log: ["", "listening", "out of memory"] });
    let looks = 0;
    const inspect = exited.inspect.bind(exited);
    exited.inspect = (async () => (looks++, inspect())) as typeof exited.inspect;
    const err = await strategy(1, async () => void saved++)
      .withStartupTimeout(10_000)
      .waitUntilReady(exited)
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(StopWaiting);
    expect(err).not.toBeInstanceOf(WaitTimeout);
    expect((err as Error).message).toMatch(/model \/healthz: the container exited \(code 137\); last log lines:\n {4}listening\n {4}out of memory/);
    expect(looks).toBe(1);
    expect(saved).toBe(1);
  });

  it("ends when the container is removed under it", async () => {
    const gone = { id: "c0ffee", inspect: async () => Promise.reject(Object.assign(new Error("no such container"), { statusCode: 404 })) } as unknown as Dockerode.Container;
    await expect(strategy(1).waitOn(gone, { timeoutMs: 10_000 })).rejects.toThrow("model /healthz: the container was removed");
  });

  it("times out naming what it last saw", async () => {
    const port = await serve(() => 503);
    const s = strategy(port).withStartupTimeout(600);
    expect(s.isStartupTimeoutSet()).toBe(true);
    const err = await s.waitUntilReady(container({ running: true, ip: "127.0.0.1" })).catch((e: Error) => e);
    expect(err).toBeInstanceOf(WaitTimeout);
    expect((err as Error).message).toContain(`waiting for model /healthz (http://127.0.0.1:${port}/healthz answered 503)`);
  });

  it("stops when its signal is aborted", async () => {
    const port = await serve(() => 503);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(new Error("scenario over")), 300);
    await expect(strategy(port).waitOn(container({ running: true, ip: "127.0.0.1" }), { timeoutMs: 10_000, signal: ctl.signal })).rejects.toThrow("scenario over");
  });
});
