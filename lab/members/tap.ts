// The wire tap (docker/faultproxy) between a node host and the gateway: the node's "gateway
// address". It forwards bytes unchanged, records every frame and HTTP exchange, and applies
// wire-fault rules; its control API (lab/clients/tap.ts) listens on its own port. Ready on
// that port's /healthz.
import { TapControl } from "../clients/tap.ts";
import { tapAlias } from "../topology/spec.ts";
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

/** The wire tap of a node host (frames, HTTP exchanges, fault rules). */
export function tapControl(lab: LabMembers, node: string): TapControl {
  if (!lab.spec.tap.enabled) throw new Error("this topology has no wire taps (tap.enabled is false)");
  return new TapControl(`http://${lab.member(tapAlias(node)).ip}:${lab.spec.tap.controlPort}`);
}
