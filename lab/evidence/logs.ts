import fs from "node:fs";
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { docker } from "../docker.ts";

/**
 * Save a container's whole stdout and stderr (every start of it: the engine keeps one log
 * across restarts of a container) into two files. Called before the container is removed.
 */
export async function saveContainerLogs(containerId: string, stdoutFile: string, stderrFile: string): Promise<void> {
  const raw = (await docker().getContainer(containerId).logs({ stdout: true, stderr: true, timestamps: true, follow: false })) as unknown as Buffer;
  const o = fs.createWriteStream(stdoutFile);
  const e = fs.createWriteStream(stderrFile);
  const src = Readable.from([raw]);
  docker().modem.demuxStream(src, o, e);
  await finished(src);
  o.end();
  e.end();
  await Promise.all([finished(o), finished(e)]);
}
