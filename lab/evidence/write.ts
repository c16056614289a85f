// The one writer of JSON evidence files: parent folders created, pretty-printed, one trailing
// newline, so every file in a run folder reads the same way. run.json goes through Run
// (lab/evidence/run.ts), which validates it first.
import fs from "node:fs";
import path from "node:path";

export function writeJson(file: string, data: unknown): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(data, null, 2) + "\n");
  return file;
}
