// The unit project's setup file (vitest.config.ts): each test file gets a temporary folder of its
// own as TMPDIR (os.tmpdir() in the file, in the code it tests and in the processes it starts),
// removed with everything in it when the file's tests are done. What a test or the code under test
// makes with mkdtemp (fleetlab-build-*, fleetlab-cli-*, ...) is not left behind, passed or failed.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll } from "vitest";

const before = process.env.TMPDIR;
const own = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-unit-"));
process.env.TMPDIR = own;

afterAll(() => {
  if (before === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = before;
  fs.rmSync(own, { recursive: true, force: true, maxRetries: 3 });
});
