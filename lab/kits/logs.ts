// A member's container log while the lab runs (stdout and stderr, with the engine's timestamps),
// from a moment on: what a repro quotes as evidence of what OpenClaw said ("reconnect paused",
// "getaddrinfo EAI_AGAIN"). The whole logs are saved into the run folder when the lab goes down.
import { demux, docker } from "../engine/docker.ts";
import { labStep } from "../definitions/verdict.ts";
import type { Lab } from "../topology/lab.ts";

/** Lines of `alias`'s log written at or after `sinceMs` (epoch ms), each with its time. */
export async function memberLog(lab: Lab, alias: string, sinceMs = 0): Promise<{ at: number; line: string }[]> {
  const raw = await labStep(`reading ${alias}'s log`, async () =>
    (await docker().getContainer(lab.member(alias).id).logs({ stdout: true, stderr: true, timestamps: true, follow: false, since: Math.max(0, Math.floor(sinceMs / 1000) - 1) })) as unknown as Buffer,
  );
  return demux(raw)
    .split("\n")
    .flatMap((l) => {
      const sp = l.indexOf(" ");
      const at = Date.parse(l.slice(0, sp));
      return Number.isFinite(at) && at >= sinceMs ? [{ at, line: l.slice(sp + 1) }] : [];
    });
}

/** The same lines as text, each starting with the engine's ISO timestamp. */
export async function memberLogLines(lab: Lab, alias: string, sinceMs = 0): Promise<string[]> {
  return (await memberLog(lab, alias, sinceMs)).map((l) => `${new Date(l.at).toISOString()} ${l.line}`);
}
