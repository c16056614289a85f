// kill: send a signal that ends the container's process (default SIGKILL); heal starts the
// same container again, on its state volume.
import { ContainerFault } from "./container.ts";
import type { Detail, FaultLab, FaultOptions } from "./fault.ts";
import { anywhere, defineFault } from "./kind.ts";

export class KillFault extends ContainerFault {
  readonly kind: string;
  readonly signal: string;
  constructor(lab: FaultLab, alias: string, signal = "SIGKILL", opts: FaultOptions = {}) {
    super(lab, alias, opts);
    this.signal = signal;
    this.kind = signal === "SIGKILL" ? "kill" : `kill.${signal}`;
  }
  protected async doInject(): Promise<Detail> {
    await this.container.kill({ signal: this.signal });
    return { signal: this.signal };
  }
  protected async inEffect(): Promise<Detail | undefined> {
    const st = await this.st();
    return st.Running ? undefined : { exitCode: st.ExitCode };
  }
}

export const kill = defineFault({
  name: "kill",
  family: "process",
  describe: "SIGKILL (or another signal that ends it) the member's process; heal starts the same container again",
  available: anywhere,
  make: (lab: FaultLab, alias: string, opts: FaultOptions & { signal?: string } = {}) => new KillFault(lab, alias, opts.signal ?? "SIGKILL", opts),
  bench: [{ label: "kill (SIGKILL; heal: start)", observedBy: "engine: not running / running", make: (bed) => new KillFault(bed.lab, "b") }],
});
