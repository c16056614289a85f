// Bare repositories over smart (/smart/<repo>.git) and dumb (/dumb/<repo>.git) HTTP, with a
// control API to publish them (lab/clients/git.ts). Ready on /healthz.
import { GitHttpControl } from "../clients/git.ts";
import { MemberContainer, type LabContext, type LabMembers } from "./member.ts";

export class GitContainer extends MemberContainer {
  constructor(lab: LabContext) {
    const { git } = lab.spec;
    super(lab, "git", git.alias, lab.images["git-http"].tag);
    this.withEnvironment({ GIT_HTTP_PORT: String(git.port), GIT_ROOT: "/srv/git" })
      .withWaitStrategy(this.httpReady(git.port, "/healthz").withStartupTimeout(20_000));
  }
}

export function gitControl(lab: LabMembers): GitHttpControl {
  return new GitHttpControl(`http://${lab.member(lab.spec.git.alias).ip}:${lab.spec.git.port}`);
}
