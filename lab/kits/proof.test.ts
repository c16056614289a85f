import { describe, expect, it } from "vitest";
import type { Frame } from "../clients/tap.ts";
import { judgeTurnOnNode, type NodeMarker } from "./proof.ts";

// A worker.launch.v1 as the tap records it (gw->node node.invoke.request, params as a JSON string).
const launch = (seq: number, environmentId: string, launchId = "l1"): Frame => ({
  kind: "frame",
  seq,
  t: 1_000 + seq,
  conn: "c1",
  path: "/",
  dir: "gw->node",
  opcode: 1,
  fin: true,
  len: 100,
  masked: false,
  action: "forward",
  type: "event",
  event: "node.invoke.request",
  command: "worker.launch.v1",
  text: JSON.stringify({ type: "event", event: "node.invoke.request", payload: { command: "worker.launch.v1", paramsJSON: JSON.stringify({ launchId, descriptor: { admission: { environmentId } } }) } }),
});

const marker: NodeMarker = {
  alias: "node-1",
  nonce: "mark-abc123",
  path: "fleetlab-marker-mark-abc123.txt",
  file: "/w/fleetlab-marker-mark-abc123.txt",
  text: "mark-abc123 written only on node-1",
  message: 'fleetlab-call read {"path":"fleetlab-marker-mark-abc123.txt"} mark-abc123',
  reply: "fleetlab-ok: read returned: mark-abc123 written only on node-1",
  environmentId: "worker:e1",
};
const base = { alias: "node-1", marker, tapSince: 10 };

describe("judgeTurnOnNode", () => {
  it("holds with the marker reply and a launch of the placement's environment", () => {
    const p = judgeTurnOnNode([launch(11, "worker:e1")], { ...base, reply: marker.reply });
    expect(p.holds).toBe(true);
    expect(p.observed).toEqual({ reply: "node-only marker", launches: 1 });
    expect(p.evidence.launches[0]).toMatchObject({ seq: 11, launchId: "l1", environmentId: "worker:e1" });
  });

  it("fails a reply without the node-only text (a gateway fallback), tokens normalised", () => {
    const p = judgeTurnOnNode([launch(11, "worker:e1")], { ...base, reply: "fleetlab-ok: read returned: ENOENT mark-abc123" });
    expect(p.holds).toBe(false);
    expect(p.observed.reply).toBe("fleetlab-ok: read returned: ENOENT <nonce>");
  });

  it("fails without a launch of this placement on the tap, and without a reply", () => {
    expect(judgeTurnOnNode([launch(11, "worker:other")], { ...base, reply: marker.reply })).toMatchObject({ holds: false, observed: { launches: 0 }, evidence: { otherLaunches: 1 } });
    expect(judgeTurnOnNode([], { ...base, reply: marker.reply }).holds).toBe(false);
    expect(judgeTurnOnNode([launch(11, "worker:e1")], { ...base, reply: undefined }).observed.reply).toBe("none");
  });

  it("a relaunch: exactly the expected launches, the last after the mark", () => {
    const two = [launch(11, "worker:e1"), launch(40, "worker:e1")];
    expect(judgeTurnOnNode(two, { ...base, reply: marker.reply, launches: 2, launchAfter: 30 })).toMatchObject({ holds: true, observed: { launches: 2, launchAfterMark: true } });
    expect(judgeTurnOnNode(two, { ...base, reply: marker.reply, launches: 2, launchAfter: 45 })).toMatchObject({ holds: false, observed: { launchAfterMark: false } });
    expect(judgeTurnOnNode([two[0]!], { ...base, reply: marker.reply, launches: 2, launchAfter: 5 }).holds).toBe(false);
  });
});
