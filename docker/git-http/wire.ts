// What git-http's control API answers, defined once: the server builds these and
// lab/clients/git.ts reads them through `import type`.

export interface RepoInfo {
  name: string;
  /** Symbolic HEAD, e.g. refs/heads/main. */
  head: string | null;
  /** Commit HEAD resolves to; null while the repo is empty. */
  headCommit: string | null;
  /** Ref name -> object id. */
  refs: Record<string, string>;
}

export interface CreatedRepo extends RepoInfo {
  /** False when the repo already existed. */
  created: boolean;
}

/** One request as the access log holds it (also printed as {"event":"request",...}). */
export interface AccessLogEntry {
  seq: number;
  time: string;
  method: string;
  /** Request target including the query string. */
  path: string;
  status: number;
  /** Response body bytes sent. */
  bytes: number;
  remote: string;
  agent: string;
  ms: number;
  /** The connection closed before the response was complete. */
  aborted?: boolean;
}

/** Every control route: "METHOD /path" -> query, body and reply. Errors are plain text. */
export interface GitHttpControlApi {
  /** Every bare repository under GIT_ROOT. */
  "GET /_control/repos": { reply: { repos: RepoInfo[] } };
  /** Create an empty bare repo: 201, or 200 if it existed. */
  "POST /_control/repos": { body: { name: string }; reply: CreatedRepo };
  /** Entries with seq > since (the most recent 10 000 are kept). */
  "GET /_control/log": { query: { since?: number }; reply: { entries: AccessLogEntry[] } };
}
