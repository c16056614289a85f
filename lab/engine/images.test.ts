import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { checkOpenclawVersion, hashDir } from "./images.ts";

describe("images", () => {
  const known = async () => ["0.0.1", "2026.9.5", "2026.9.6", "2026.9.7"];

  it("accepts a version npm has", async () => {
    await expect(checkOpenclawVersion("2026.9.6", known)).resolves.toBeUndefined();
  });

  it("names a version that does not exist and lists recent ones", async () => {
    await expect(checkOpenclawVersion("2026.13.1", known)).rejects.toThrow(
      "OPENCLAW_VERSION=2026.13.1 does not exist: npm has no openclaw@2026.13.1. Recent versions: 2026.9.5, 2026.9.6, 2026.9.7.",
    );
  });

  it("refuses ranges and tags before asking npm", async () => {
    const never = async () => {
      throw new Error("npm must not be asked");
    };
    await expect(checkOpenclawVersion("latest", never)).rejects.toThrow(/not an exact version/);
    await expect(checkOpenclawVersion("^2026.9.0", never)).rejects.toThrow(/not an exact version/);
  });

  it("keys images by content: any change to a file changes the hash, node_modules does not", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-hash-"));
    fs.writeFileSync(path.join(dir, "server.mjs"), "a");
    const h1 = hashDir(dir);
    fs.mkdirSync(path.join(dir, "node_modules"));
    fs.writeFileSync(path.join(dir, "node_modules", "x.js"), "x");
    expect(hashDir(dir)).toBe(h1);
    fs.writeFileSync(path.join(dir, "server.mjs"), "b");
    expect(hashDir(dir)).not.toBe(h1);
    fs.rmSync(dir, { recursive: true });
  });
});

describe("a build that cannot fit is refused before it starts", () => {
  it("names what is short, where, and how much is free", async () => {
    const { requireFreeSpace } = await import("./images.ts");
    const os = await import("node:os");
    await expect(requireFreeSpace({ dir: os.tmpdir(), bytes: 2 ** 60, what: "the openclaw@2026.9.6 package" })).rejects.toThrow(
      /^not enough free disk for the openclaw@2026\.9\.6 package: it needs about \d+\.\d GB in .+, and \d+\.\d GB is free there\. Free some space \(make clean/,
    );
    await expect(requireFreeSpace({ dir: os.tmpdir(), bytes: 1, what: "x" })).resolves.toBeUndefined();
  });
});
