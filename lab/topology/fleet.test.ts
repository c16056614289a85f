import { describe, expect, it } from "vitest";
import { closedBeforeAnswer, mapLimit, upgradeTurnedAway } from "./fleet.ts";

describe("the fleet's bulk connect (lab/topology/fleet.ts)", () => {
  it("mapLimit keeps at most `limit` in flight and the results in input order", async () => {
    let now = 0;
    let most = 0;
    const out = await mapLimit([5, 1, 4, 2, 3], 2, async (x) => {
      most = Math.max(most, ++now);
      await new Promise((r) => setTimeout(r, x));
      now--;
      return x * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
    expect(most).toBe(2);
  });

  it("tries again what a node host tries again: an upgrade turned away with 503, a connect closed unanswered; not a refusal", () => {
    expect(upgradeTurnedAway({ admitted: false, ms: 1, code: "HANDSHAKE_FAILED", message: "socket to ws://x failed: Unexpected server response: 503" })).toBe(true);
    expect(upgradeTurnedAway({ admitted: false, ms: 1, code: "HANDSHAKE_FAILED", message: "connect ECONNREFUSED" })).toBe(false);
    expect(closedBeforeAnswer({ admitted: false, ms: 1, code: "CONNECTION_CLOSED", message: "connection closed (code 1000)" })).toBe(true);
    expect(closedBeforeAnswer({ admitted: false, ms: 1, code: "NOT_PAIRED", detailsCode: "PAIRING_REQUIRED", requestId: "r", message: "pairing required" })).toBe(false);
    expect(upgradeTurnedAway({ admitted: true, ms: 1 })).toBe(false);
  });
});
