import fs from "node:fs";
import { docker } from "../engine/docker.ts";

/**
 * Save a container's whole stdout and stderr (every start of it: the engine keeps one log
 * across restarts of a container) into two files. Called before the container is removed.
 */
export async function saveContainerLogs(containerId: string, stdoutFile: string, stderrFile: string): Promise<void> {
  const raw = (await docker().getContainer(containerId).logs({ stdout: true, stderr: true, timestamps: true, follow: false })) as unknown as Buffer;
  const { stdout, stderr } = splitMultiplexed(raw);
  await Promise.all([fs.promises.writeFile(stdoutFile, stdout), fs.promises.writeFile(stderrFile, stderr)]);
}

/**
 * Docker's multiplexed log stream (no TTY: 8-byte frame headers, stream type at byte 0, size
 * at bytes 4-7) split into stdout and stderr in one pass. (docker-modem's demuxStream copies
 * the rest of its buffer at every frame: quadratic, measured at 31 s of the lab's process
 * blocked for a tap's 6 MB log, which stalled every other lane's timing.) A buffer that does
 * not start with a valid header (a TTY container) is all stdout.
 */
export function splitMultiplexed(buf: Buffer): { stdout: Buffer; stderr: Buffer } {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let i = 0;
  for (; i + 8 <= buf.length; ) {
    const type = buf[i]!;
    if (type > 2 || buf[i + 1] !== 0 || buf[i + 2] !== 0 || buf[i + 3] !== 0) break;
    const n = buf.readUInt32BE(i + 4);
    (type === 2 ? err : out).push(buf.subarray(i + 8, Math.min(buf.length, i + 8 + n)));
    i += 8 + n;
  }
  if (i === 0 && buf.length) return { stdout: buf, stderr: Buffer.alloc(0) };
  if (i < buf.length) out.push(buf.subarray(i)); // a torn or unframed tail is kept, not dropped
  return { stdout: Buffer.concat(out), stderr: Buffer.concat(err) };
}
