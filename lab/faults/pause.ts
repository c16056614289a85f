// pause: freeze every process of the container (cgroup freezer); heal unpauses. Sockets stay
// open: the kernel still completes handshakes, nothing answers.
import { ContainerFault, gone } from "./container.ts";
import type { Detail, FaultLab, FaultOptions } from "./fault.ts";
import { anywhere, defineFault } from "./kind.ts";

export class PauseFault extends ContainerFault {
  readonly kind = "pause";
  protected async doInject(): Promise<void> {
    await this.container.pause();
  }
  protected async inEffect(): Promise<Detail | undefined> {
    return (await this.st()).Paused ? {} : undefined;
  }
  protected async doHeal(): Promise<Detail> {
    try {
      if ((await this.st()).Paused) await this.container.unpause();
      return {};
    } catch (err) {
      if (gone(err)) return { gone: true };
      throw err;
    }
  }
  protected async isHealed(): Promise<Detail | undefined> {
    try {
      const st = await this.st();
      return st.Paused ? undefined : {};
    } catch (err) {
      if (gone(err)) return { gone: true };
      throw err;
    }
  }
}

export const pause = defineFault({
  name: "pause",
  family: "process",
  describe: "freeze the member's processes (sockets stay open, nothing answers); heal unpauses",
  available: anywhere,
  make: (lab: FaultLab, alias: string, opts: FaultOptions = {}) => new PauseFault(lab, alias, opts),
  bench: [{ label: "pause (freeze; heal: unpause)", observedBy: "engine: paused / not paused", make: (bed) => new PauseFault(bed.lab, "b") }],
});
