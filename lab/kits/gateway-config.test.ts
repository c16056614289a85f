import { describe, expect, it } from "vitest";
import { reloadVerdict } from "./gateway-config.ts";

// Lines as the gateway's config watcher logs them (openclaw@2026.9.6, colours removed).
describe("reloadVerdict", () => {
  it("applied: the changed paths, sorted", () => {
    expect(reloadVerdict(["[reload] config change detected; evaluating reload", "[reload] config hot reload applied (tools.deny, tools.alsoAllow)"])).toEqual({ verdict: "applied", detail: "tools.alsoAllow, tools.deny" });
  });
  it("refused: why the change was skipped", () => {
    expect(reloadVerdict(["[reload] config reload skipped (invalid config): : Include path escapes config directory: /w/p.json (root: /c)"])).toEqual({
      verdict: "refused",
      detail: "invalid config: : Include path escapes config directory: /w/p.json (root: /c)",
    });
  });
  it("failed: the error", () => {
    expect(reloadVerdict(["[reload] config reload failed: Plugin x still has active retained work"])).toEqual({ verdict: "failed", detail: "Plugin x still has active retained work" });
  });
  it("the first outcome counts; none yet is undefined", () => {
    expect(reloadVerdict(["config reload failed: first", "config hot reload applied (tools)"])?.verdict).toBe("failed");
    expect(reloadVerdict(["[reload] config change detected; evaluating reload"])).toBeUndefined();
  });
});
