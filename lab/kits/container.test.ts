import { describe, expect, it, vi } from "vitest";
import type { Lab } from "../topology/lab.ts";
import { LabInfraError } from "../definitions/verdict.ts";

const inspect = vi.fn();
vi.mock("../engine/docker.ts", () => ({ docker: () => ({ getContainer: (id: string) => ({ inspect: () => inspect(id) }) }) }));
const { containerState, stateOf } = await import("./container.ts");

const lab = { member: (alias: string) => ({ id: `id-${alias}` }) } as unknown as Lab;

describe("containerState: a member's container as the engine sees it", () => {
  it("a running container: no exit code, no finish time (Docker's zero time is no time)", async () => {
    inspect.mockResolvedValueOnce({ State: { Running: true, Status: "running", ExitCode: 0, StartedAt: "2026-12-03T10:00:00.5Z", FinishedAt: "0001-01-01T00:00:00Z" }, RestartCount: 0 });
    expect(await containerState(lab, "node-1")).toEqual({ running: true, status: "running", paused: false, exitCode: null, startedAt: Date.parse("2026-12-03T10:00:00.5Z"), finishedAt: undefined, oomKilled: false, restartCount: 0 });
    expect(inspect).toHaveBeenLastCalledWith("id-node-1");
  });

  it("an exited container: its exit code and when it finished", () => {
    const st = stateOf({ State: { Running: false, Status: "exited", ExitCode: 137, StartedAt: "2026-12-03T10:00:00Z", FinishedAt: "2026-12-03T10:01:00Z", OOMKilled: false }, RestartCount: 2 });
    expect(st).toMatchObject({ running: false, status: "exited", exitCode: 137, finishedAt: Date.parse("2026-12-03T10:01:00Z"), restartCount: 2 });
  });

  it("an engine that does not answer is the lab's failure (unknown), not OpenClaw's", async () => {
    inspect.mockRejectedValueOnce(new Error("connect ENOENT /var/run/docker.sock"));
    await expect(containerState(lab, "gateway")).rejects.toThrow(LabInfraError);
  });
});
