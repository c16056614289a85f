import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REDACTED, Redactor, sealFolder } from "./redact.ts";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-seal-"));

describe("Redactor", () => {
  it("replaces key=value forms under a credential key and remembers the value", () => {
    const r = new Redactor();
    const out = r.text("connecting ws://gw:18789/?token=abcdefgh12345&x=1 OPENCLAW_GATEWAY_TOKEN=zzzzyyyyxxxx apiKey=sk-live-0001 inputTokens=12");
    expect(out).toBe(`connecting ws://gw:18789/?token=${REDACTED}&x=1 OPENCLAW_GATEWAY_TOKEN=${REDACTED} apiKey=${REDACTED} inputTokens=12`);
    // Learnt: the same value elsewhere goes too.
    expect(r.text("echo abcdefgh12345 and zzzzyyyyxxxx")).toBe(`echo ${REDACTED} and ${REDACTED}`);
  });

  it("learn() finds credentials in JSON lines, in JSON held inside strings, and in key=value text, without changing anything", () => {
    const r = new Redactor();
    const lines = [
      JSON.stringify({ dir: "in", frame: { payload: { auth: { deviceToken: "dev-token-AAAA1111" } } } }),
      JSON.stringify({ text: JSON.stringify({ params: { auth: { token: "gw-token-BBBB2222" } } }) }),
      "plain password=hunter2hunter2 here",
    ].join("\n");
    r.learn(lines);
    expect(r.known("a dev-token-AAAA1111 b gw-token-BBBB2222 c hunter2hunter2")).toBe(`a ${REDACTED} b ${REDACTED} c ${REDACTED}`);
  });

  it("every Redactor's credentials are known to the process-wide one the final pass uses", () => {
    Redactor.credential("issued-credential-CCCC3333");
    expect(Redactor.ofProcess().known("x issued-credential-CCCC3333 y")).toBe(`x ${REDACTED} y`);
  });
});

describe("sealFolder (the final pass over a run folder)", () => {
  it("removes a credential learnt in one file from every other file, keeps JSON valid and file modes, leaves clean files alone", () => {
    const dir = tmp();
    fs.mkdirSync(path.join(dir, "lab", "logs"), { recursive: true });
    fs.mkdirSync(path.join(dir, "lab", "transcripts"), { recursive: true });
    const token = "node-device-token-DDDD4444";
    // A container log written before anyone knew the token was one.
    fs.writeFileSync(path.join(dir, "lab", "logs", "node-1.log"), `2026-12-01T10:00:00Z stored ${token}\nAuthorization: Bearer sk-abc\n`);
    // The tap transcript where it was issued (under a credential key).
    fs.writeFileSync(path.join(dir, "lab", "transcripts", "tap.jsonl"), JSON.stringify({ frame: { auth: { deviceToken: token } } }) + "\n");
    fs.writeFileSync(path.join(dir, "verdict.json"), JSON.stringify({ detail: `saw ${token}` }), { mode: 0o600 });
    fs.writeFileSync(path.join(dir, "clean.log"), "nothing secret\n");
    fs.writeFileSync(path.join(dir, "shot.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const sealed = sealFolder(dir);
    expect(sealed.files).toBe(4);
    expect(sealed.rewritten.sort()).toEqual(["lab/logs/node-1.log", "lab/transcripts/tap.jsonl", "verdict.json"]);
    const all = ["lab/logs/node-1.log", "lab/transcripts/tap.jsonl", "verdict.json"].map((f) => fs.readFileSync(path.join(dir, f), "utf8")).join("\n");
    expect(all).not.toContain(token);
    expect(all).not.toContain("sk-abc");
    expect(JSON.parse(fs.readFileSync(path.join(dir, "verdict.json"), "utf8"))).toEqual({ detail: `saw ${REDACTED}` });
    expect(fs.statSync(path.join(dir, "verdict.json")).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir).filter((f) => f.includes(".tmp-"))).toEqual([]);
    // A second pass has nothing left to do.
    expect(sealFolder(dir).rewritten).toEqual([]);
  });
});
