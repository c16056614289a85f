// The one writer of JSON evidence files: parent folders created, pretty-printed, one trailing
// newline, whole or not at all (temp file and rename), so every file in a run folder reads the same way. run.json goes through Run
// (lab/evidence/run.ts), which validates it first.
import fs from "node:fs";
import path from "node:path";

export function writeJson(file: string, data: unknown): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeAtomic(file, JSON.stringify(data, null, 2) + "\n");
  return file;
}

/**
 * Write a whole file or nothing: into a temporary file beside it, then renamed over it (a kill or
 * a full disk mid-write leaves the old file whole and at most a temporary one, removed on error).
 */
export function writeAtomic(file: string, text: string, opts: { mode?: number } = {}): void {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    fs.writeFileSync(tmp, text, opts.mode === undefined ? undefined : { mode: opts.mode });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
