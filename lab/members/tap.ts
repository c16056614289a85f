// The wire tap (docker/faultproxy) between a node host and the gateway: the node's "gateway
// address". It forwards bytes unchanged, records every frame and HTTP exchange, and applies
// wire-fault rules; its control API (lab/clients/tap.ts) listens on its own port. Ready on
// that port's /healthz.
import { readFile, writeFile } from "node:fs/promises";
import { TapControl, redactTapLines } from "../clients/tap.ts";
import { Redactor } from "../evidence/redact.ts";
import type { TopologySpec } from "../definitions/spec.ts";
import { tapAlias } from "../definitions/spec.ts";
import { MemberContainer, type LabContext, type LabMembers } from "./member.ts";

export class TapContainer extends MemberContainer {
  constructor(lab: LabContext, node: string) {
    const spec = lab.spec;
    super(lab, "tap", tapAlias(node), lab.images.faultproxy.tag);
    this.withEnvironment({
      TAP_LISTEN_PORT: String(spec.gateway.port),
      TAP_UPSTREAM: `${spec.gateway.alias}:${spec.gateway.port}`,
      TAP_CONTROL_PORT: String(spec.tap.controlPort),
    }).withWaitStrategy(this.httpReady(spec.tap.controlPort, "/healthz").withStartupTimeout(20_000));
  }
}

/** The wire tap of a node host (frames, HTTP exchanges, fault rules), credentials redacted. */
export function tapControl(lab: LabMembers, node: string): TapControl {
  if (!lab.spec.tap.enabled) throw new Error("this topology has no wire taps (tap.enabled is false)");
  return new TapControl(`http://${lab.member(tapAlias(node)).ip}:${lab.spec.tap.controlPort}`, { redactor: tapRedactor(lab) });
}

// One redactor per lab (its spec), shared by every handle on its taps: a device token learnt
// from one node's hello-ok is hidden wherever it turns up later.
const redactors = new WeakMap<TopologySpec, Redactor>();

/** The lab's redactor for what its taps saw: knows the shared gateway token from the start. */
export function tapRedactor(lab: Pick<LabMembers, "spec">): Redactor {
  let r = redactors.get(lab.spec);
  if (!r) redactors.set(lab.spec, (r = new Redactor([lab.spec.gateway.token])));
  return r;
}

/** A saved tap log (the tap prints every record on stdout) rewritten with its credentials redacted. */
export async function redactTapLog(lab: Pick<LabMembers, "spec">, files: string[]): Promise<void> {
  for (const file of files) {
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text === undefined) continue;
    await writeFile(file, redactTapLines(text.split("\n"), tapRedactor(lab)).join("\n"));
  }
}
