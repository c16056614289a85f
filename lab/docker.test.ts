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
