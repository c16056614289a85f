import { PassThrough, Readable } from "node:stream";
import { finished } from "node:stream/promises";
import Modem from "docker-modem";
import { describe, expect, it } from "vitest";
import { splitMultiplexed } from "./logs.ts";

const frame = (type: 1 | 2, text: string) => {
  const body = Buffer.from(text);
  const h = Buffer.alloc(8);
  h[0] = type;
  h.writeUInt32BE(body.length, 4);
  return Buffer.concat([h, body]);
};

/** What docker-modem's demuxStream makes of the same bytes (the reference it replaces). */
async function modemSplit(buf: Buffer): Promise<{ stdout: string; stderr: string }> {
  const o = new PassThrough();
  const e = new PassThrough();
  const chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  o.on("data", (c: Buffer) => chunks.stdout.push(c));
  e.on("data", (c: Buffer) => chunks.stderr.push(c));
  const src = Readable.from([buf]);
  new Modem().demuxStream(src, o, e);
  await finished(src);
  return { stdout: Buffer.concat(chunks.stdout).toString(), stderr: Buffer.concat(chunks.stderr).toString() };
}

describe("splitMultiplexed: Docker's log stream into stdout and stderr in one pass", () => {
  const lines = (n: number) => {
    const parts: Buffer[] = [];
    for (let i = 0; i < n; i++) parts.push(frame(i % 7 === 0 ? 2 : 1, `2026-11-30T15:00:00.${String(i).padStart(6, "0")}Z line ${i} ${"x".repeat(i % 50)}\n`));
    return Buffer.concat(parts);
  };

  it("splits as docker-modem does, frame by frame", async () => {
    const buf = lines(1_000);
    const mine = splitMultiplexed(buf);
    const ref = await modemSplit(buf);
    expect(mine.stdout.toString()).toBe(ref.stdout);
    expect(mine.stderr.toString()).toBe(ref.stderr);
  });

  it("keeps every line of a long log (docker-modem recurses once per frame and overflows its stack on a few thousand)", () => {
    const r = splitMultiplexed(lines(50_000));
    expect(r.stderr.toString().trimEnd().split("\n")).toHaveLength(Math.ceil(50_000 / 7));
    expect(r.stdout.toString().trimEnd().split("\n")).toHaveLength(50_000 - Math.ceil(50_000 / 7));
    expect(r.stdout.toString().trimEnd().split("\n").at(-1)).toMatch(/line 49999 /);
  });

  it("an empty log is two empty files; an unframed (TTY) log is all stdout; a torn tail is kept", () => {
    expect(splitMultiplexed(Buffer.alloc(0))).toEqual({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) });
    expect(splitMultiplexed(Buffer.from("plain text log\n")).stdout.toString()).toBe("plain text log\n");
    const torn = Buffer.concat([frame(1, "whole\n"), frame(2, "cut short").subarray(0, 12)]);
    const r = splitMultiplexed(torn);
    expect(r.stdout.toString()).toBe("whole\n");
    expect(r.stderr.toString()).toBe("cut ");
  });
});
