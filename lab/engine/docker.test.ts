import { afterEach, describe, expect, it } from "vitest";

describe("engine check", () => {
  const saved = process.env.DOCKER_HOST;
  afterEach(() => {
    if (saved === undefined) delete process.env.DOCKER_HOST;
    else process.env.DOCKER_HOST = saved;
  });

  it("says what to do when no engine answers", async () => {
    process.env.DOCKER_HOST = "unix:///nonexistent/fleetlab-test.sock";
    const { requireEngine } = await import("./docker.ts");
    await expect(requireEngine()).rejects.toThrow(/no Docker engine answers at DOCKER_HOST=unix:\/\/\/nonexistent\/fleetlab-test\.sock[\s\S]*make engine/);
  });
});

describe("an engine that dies while it answers", () => {
  it("rejects the API call with the engine's error, instead of hanging and ending the process uncaught", async () => {
    const { default: Docker } = await import("dockerode");
    const { guardEngineResponses } = await import("./docker.ts");
    guardEngineResponses(); // idempotent: docker.ts did it at load
    const net = await import("node:net");
    const os = await import("node:os");
    const path = await import("node:path");
    const sock = path.join(os.tmpdir(), `fleetlab-dying-engine-${process.pid}.sock`);
    // Headers and half a JSON body, then the socket goes: what a killed dockerd leaves a reader with.
    const server = net.createServer((c) => {
      c.once("data", () => {
        c.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"Version\":");
        setTimeout(() => c.destroy(), 50);
      });
    });
    await new Promise<void>((r) => server.listen(sock, r));
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.prependListener("uncaughtException", onUncaught);
    try {
      const started = performance.now();
      await expect(new Docker({ socketPath: sock }).version()).rejects.toThrow(/aborted/);
      expect(performance.now() - started).toBeLessThan(5_000);
      await new Promise((r) => setTimeout(r, 100));
      expect(uncaught).toEqual([]);
    } finally {
      process.removeListener("uncaughtException", onUncaught);
      server.close();
    }
  });
});
