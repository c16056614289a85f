import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { codeFiles, engineSocket } from "./runner-container.ts";
import { engineAt } from "../engine/images.ts";

describe("runner container", () => {
  // engineSocket's defaults are the caller's DOCKER_HOST and FLEETLAB_ENGINE_SOCKET (rootless
  // Docker sets DOCKER_HOST): the test sets both, whatever the shell it runs in has.
  beforeEach(() => {
    vi.stubEnv("DOCKER_HOST", undefined);
    vi.stubEnv("FLEETLAB_ENGINE_SOCKET", undefined);
  });
  afterEach(() => vi.unstubAllEnvs());

  it("bind-mounts the socket the engine's own host has", () => {
    expect(engineSocket("unix:///run/fleetlab-engine2.sock", undefined)).toBe("/run/fleetlab-engine2.sock");
    expect(engineSocket(undefined, undefined)).toBe("/var/run/docker.sock");
    expect(engineSocket("ssh://lab@build-2", undefined)).toBe("/var/run/docker.sock");
    expect(engineSocket("tcp://127.0.0.1:2375", "/run/other.sock")).toBe("/run/other.sock");
  });

  it("defaults to the caller's DOCKER_HOST and FLEETLAB_ENGINE_SOCKET", () => {
    vi.stubEnv("DOCKER_HOST", "unix:///run/user/1000/docker.sock");
    expect(engineSocket()).toBe("/run/user/1000/docker.sock");
    vi.stubEnv("FLEETLAB_ENGINE_SOCKET", "/run/other.sock");
    expect(engineSocket()).toBe("/run/other.sock");
  });

  it("puts the lab's code in the image, without dependencies or state", () => {
    const files = codeFiles();
    for (const f of ["package.json", "lab/run/runner-container.ts", "scenarios/main.ts", "docker/runner/Dockerfile", "docker/mcp/server.ts"]) expect(files).toContain(f);
    expect(files.filter((f) => f.includes("node_modules") || f.startsWith(".lab"))).toEqual([]);
  });

  it("reads DOCKER_HOST-style engine addresses and refuses others", () => {
    const modem = (address: string) => engineAt(address).modem as unknown as { socketPath?: string; host?: string; port?: number };
    expect(modem("unix:///run/fleetlab-engine2.sock").socketPath).toBe("/run/fleetlab-engine2.sock");
    expect(modem("tcp://127.0.0.1:2376")).toMatchObject({ host: "127.0.0.1", port: 2376 });
    expect(() => engineAt("http://127.0.0.1:2375")).toThrow(/expected unix/);
  });
});
