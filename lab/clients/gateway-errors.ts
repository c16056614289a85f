// The gateway client's errors (lab/clients/gateway.ts): the gateway's own codes as they came, and
// the client's local ones (a time-out, a closed connection, a refused handshake).
import type { ErrorShape } from "./gateway-frames.ts";
// ---------------------------------------------------------------------------------------
// Errors

/** Error codes the client itself produces (the gateway's own codes pass through as-is). */
export type LocalErrorCode = "TIMEOUT" | "CONNECTION_CLOSED" | "NOT_CONNECTED" | "HANDSHAKE_FAILED" | "BAD_RESPONSE" | "PAYLOAD_TOO_LARGE";

export class GatewayError extends Error {
  /** The gateway's error.message (or the client's own reason for local codes). */
  readonly gatewayMessage: string;
  readonly retryable: boolean | undefined;
  readonly retryAfterMs: number | undefined;

  readonly method: string;
  readonly code: string;
  readonly details?: unknown;
  constructor(
    method: string,
    code: string,
    gatewayMessage: string,
    details?: unknown,
    extra: { retryable?: boolean; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(GatewayError.#describe(method, code, gatewayMessage, details), extra.cause === undefined ? undefined : { cause: extra.cause });
    this.method = method;
    this.code = code;
    this.details = details;
    this.name = "GatewayError";
    this.gatewayMessage = gatewayMessage;
    this.retryable = extra.retryable;
    this.retryAfterMs = extra.retryAfterMs;
  }

  static fromShape(method: string, error: ErrorShape): GatewayError {
    return new GatewayError(method, error.code, error.message, error.details, {
      retryable: error.retryable,
      retryAfterMs: error.retryAfterMs,
    });
  }

  /** error.details.code, e.g. "PAIRING_REQUIRED", "MISSING_SCOPE", "AUTH_TOKEN_MISMATCH". */
  get detailsCode(): string | undefined {
    return detailString(this.details, "code");
  }
  /** error.details.reason, e.g. "not-paired", "scope-upgrade", "startup-sidecars". */
  get reason(): string | undefined {
    return detailString(this.details, "reason");
  }
  /** The pending pairing request to approve (`openclaw devices approve <requestId>`). */
  get requestId(): string | undefined {
    return detailString(this.details, "requestId");
  }
  get isPairingRequired(): boolean {
    return this.detailsCode === "PAIRING_REQUIRED";
  }

  static #describe(method: string, code: string, message: string, details: unknown): string {
    const dc = detailString(details, "code");
    const reason = detailString(details, "reason");
    const requestId = detailString(details, "requestId");
    const bits = [dc, reason && `reason ${reason}`, requestId && `requestId ${requestId}`].filter(Boolean);
    return `gateway ${method} failed: ${code}: ${message}${bits.length ? ` (${bits.join(", ")})` : ""}`;
  }
}

function detailString(details: unknown, key: string): string | undefined {
  if (details && typeof details === "object" && key in details) {
    const v = (details as Record<string, unknown>)[key];
    return typeof v === "string" && v.length > 0 ? v : undefined;
  }
  return undefined;
}

