import { describe, expect, it } from "vitest";
import { codeFiles, engineSocket } from "./runner-container.ts";
import { engineAt } from "./images.ts";

describe("runner container", () => {
  it("bind-mounts the socket the engine's own host has", () => {
    expect(engineSocket("unix:///run/fleetlab-engine2.sock", undefined)).toBe("/run/fleetlab-engine2.sock");
    expect(engineSocket(undefined, undefined)).toBe("/var/run/docker.sock");
    expect(engineSocket("ssh://lab@build-2", undefined)).toBe("/var/run/docker.sock");
    expect(engineSocket("tcp://127.0.0.1:2375", "/run/other.sock")).toBe("/run/other.sock");
  });

  it("puts the lab's code in the image, without dependencies or state", () => {
    const files = codeFiles();
    for (const f of ["package.json", "lab/engine/runner-container.ts", "scenarios/main.ts", "docker/runner/Dockerfile", "docker/mcp/server.ts"]) expect(files).toContain(f);
    expect(files.filter((f) => f.includes("node_modules") || f.startsWith(".lab"))).toEqual([]);
  });

  it("reads DOCKER_HOST-style engine addresses and refuses others", () => {
    const modem = (address: string) => engineAt(address).modem as unknown as { socketPath?: string; host?: string; port?: number };
    expect(modem("unix:///run/fleetlab-engine2.sock").socketPath).toBe("/run/fleetlab-engine2.sock");
    expect(modem("tcp://127.0.0.1:2376")).toMatchObject({ host: "127.0.0.1", port: 2376 });
    expect(() => engineAt("http://127.0.0.1:2375")).toThrow(/expected unix/);
  });
});
