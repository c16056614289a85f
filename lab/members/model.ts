// The scripted model: a real HTTP server speaking the OpenAI Responses API, answering from
// fixtures/model/*.json, with a control API (lab/clients/model.ts). Ready on /healthz.
import path from "node:path";
import { ModelControl } from "../clients/model.ts";
import { FIXTURES } from "../core/paths.ts";
import { MemberContainer, type LabContext, type LabMembers } from "./member.ts";

export class ModelContainer extends MemberContainer {
  constructor(lab: LabContext) {
    const { model } = lab.spec;
    super(lab, "model", model.alias, lab.images.model.tag);
    this.withEnvironment({ MODEL_PORT: String(model.port), MODEL_SCRIPTS: "/fixtures/model", MODEL_DEFAULT_SCRIPT: model.script })
      .withCopyDirectoriesToContainer([{ source: path.join(FIXTURES, "model"), target: "/fixtures/model" }])
      .withWaitStrategy(this.httpReady(model.port, "/healthz").withStartupTimeout(20_000));
  }
}

export function modelControl(lab: LabMembers): ModelControl {
  return new ModelControl(`http://${lab.member(lab.spec.model.alias).ip}:${lab.spec.model.port}`);
}
