/** Error classes, and the one place Azure and Cosmos errors are classified (by `name`, `code`, `statusCode`: no SDK imports). */
import type { LookupErrorDetails } from "./retrievalError";
import { errorCodeLabel, shortMessage } from "./retrievalError";
import { goToLower } from "./goStrings";
import { azureErrorCode } from "./azureErrorCode";
import { isAbortError } from "./abort";
import { clusterMessage, serviceProviderClusterDocumentLabel } from "./clusterMessage";

export interface IdentityLookupFailure {
  readonly resourceId: string;
  readonly error: LookupErrorDetails;
}

/** Thrown after the status was persisted when identity lookups failed; the message names each identity and its error. */
export class UserAssignedIdentityReadError extends Error {
  readonly failures: readonly IdentityLookupFailure[];
  readonly documentId: string;

  constructor(options: {
    documentId: string;
    clusterName?: string;
    failures: readonly IdentityLookupFailure[];
    persisted: boolean;
    total?: number;
    status?: { readonly identities?: Readonly<Record<string, { readonly clientId?: string; readonly principalId?: string }>> };
  }) {
    const keptIds = (resourceId: string): boolean => {
      const entry = options.status?.identities?.[goToLower(resourceId)];
      return entry !== undefined && (entry.clientId !== undefined || entry.principalId !== undefined);
    };
    const lines = options.failures.map(
      (failure) =>
        `  - ${failure.resourceId}: ${errorCodeLabel(failure.error)}: ${failure.error.message}` +
        (options.persisted && options.status !== undefined ? (keptIds(failure.resourceId) ? " [stored IDs kept]" : " [no IDs stored]") : ""),
    );
    const count = options.failures.length;
    const others =
      count === options.total ? "every entry carries a retrievalError" : "the other identities were written; the failed entries carry a retrievalError";
    const outcome = options.persisted ? others : "nothing was written";
    const codes = [...new Set(options.failures.map(({ error }) => errorCodeLabel(error)))];
    super(
      clusterMessage({
        cause: `${count === 1 ? "a data plane operator managed identity" : `${count} data plane operator managed identities`} could not be read: ${codes.join(", ")}`,
        ...(options.clusterName === undefined ? {} : { clusterName: options.clusterName }),
        outcome,
        reference: serviceProviderClusterDocumentLabel(options.documentId),
      }) + `\n${lines.join("\n")}`,
    );
    this.failures = options.failures;
    this.documentId = options.documentId;
  }
}
// On the prototype, like Error's own `name`: not an enumerable field of every instance.
UserAssignedIdentityReadError.prototype.name = "UserAssignedIdentityReadError";

/** Thrown when a Cosmos document cannot be read, waited for or written as required. */
export class CosmosDocumentError extends Error {
  readonly documentId: string;
  readonly statusCode: number | undefined;
  /** Set when the settings, not the document, are at fault; taken over from a `cause` that has one, so it never reads as "document absent". */
  readonly configurationProblem: string | undefined;

  constructor(options: { documentId: string; message: string; statusCode?: number; cause?: unknown; configurationProblem?: string }) {
    super(options.message);
    this.configurationProblem = options.configurationProblem ?? (isCosmosConfigurationError(options.cause) ? options.cause.configurationProblem : undefined);
    setCause(this, options.cause);
    this.documentId = options.documentId;
    this.statusCode = options.statusCode;
  }
}
CosmosDocumentError.prototype.name = "CosmosDocumentError";

/** Sets an error's `cause` as Error's options bag does (ES2022; consumers compile against ES2020): non-enumerable. */
export function setCause(error: Error, cause: unknown): void {
  if (cause !== undefined) Object.defineProperty(error, "cause", { value: cause, writable: true, configurable: true, enumerable: false });
}

/** The CosmosDocumentError of a pass that ends with nothing written: the cause, the cluster and the document (`reference`). */
export function nothingWrittenError(
  documentId: string,
  message: { readonly cause: string; readonly clusterName: string; readonly reference: string; readonly details?: readonly string[] },
  options: { readonly statusCode?: number; readonly cause?: unknown } = {},
): CosmosDocumentError {
  return new CosmosDocumentError({ documentId, ...options, message: clusterMessage({ ...message, outcome: "nothing was written" }) });
}

/** Guards by name, so errors revived from another module instance still match. */
export function isCosmosDocumentError(error: unknown): error is CosmosDocumentError {
  return error instanceof Error && error.name === "CosmosDocumentError";
}

export function isCosmosConfigurationError(error: unknown): error is CosmosDocumentError & { readonly configurationProblem: string } {
  return isCosmosDocumentError(error) && typeof error.configurationProblem === "string";
}

interface ErrorLike {
  readonly name?: unknown;
  readonly code?: unknown;
  readonly statusCode?: unknown;
  readonly message?: unknown;
  readonly body?: unknown;
}

function asErrorLike(error: unknown): ErrorLike {
  return typeof error === "object" && error !== null ? error : { message: String(error) };
}

/**
 * `notFound`: Azure code `ResourceNotFound` whatever the status (upstream's IsResourceNotFoundErr).
 * `identity`: a failure about this identity only; its entry records a retrievalError.
 * `global`: no lookup can be trusted (no token, ARM 401, ARM unreachable); the pass writes nothing.
 */
export type LookupErrorKind = "notFound" | "identity" | "global";

const credentialErrorNames = new Set(["CredentialUnavailableError", "AuthenticationError", "AggregateAuthenticationError", "AuthenticationRequiredError"]);

const unreachableCodes = new Set(["ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH"]);

const tlsFailureCode = /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_VERIFY_LEAF_SIGNATURE$|UNABLE_TO_GET_ISSUER_CERT|EPROTO$)|CERT/;

export function isEndpointUnreachableCode(code: string): boolean {
  return unreachableCodes.has(code) || tlsFailureCode.test(code);
}

export function classifyLookupError(error: unknown): { readonly kind: LookupErrorKind; readonly details: LookupErrorDetails } {
  const like = asErrorLike(error);
  const name = typeof like.name === "string" ? like.name : "Error";
  const statusCode = typeof like.statusCode === "number" ? like.statusCode : undefined;
  const rawMessage = typeof like.message === "string" ? like.message : String(error);
  // core-rest-pipeline keeps Node's code on the RestError, or on some paths only on its cause.
  const causeCode = (like as { cause?: { code?: unknown } }).cause?.code;
  const ownCode = typeof like.code === "string" && like.code !== "REQUEST_SEND_ERROR" ? like.code : undefined;
  const nodeCode = ownCode ?? (typeof causeCode === "string" ? causeCode : undefined);
  const answeredCode = statusCode === undefined ? undefined : azureErrorCode(like);
  let code: string;
  let kind: LookupErrorKind = "identity";
  if (isAbortError(error)) {
    code = "Timeout";
  } else if (credentialErrorNames.has(name)) {
    code = "CredentialUnavailable";
    kind = "global";
  } else if (nodeCode !== undefined && isEndpointUnreachableCode(nodeCode)) {
    code = nodeCode;
    kind = "global";
  } else if (answeredCode !== undefined) {
    code = answeredCode || `HTTP${statusCode ?? ""}`;
  } else if (typeof like.code === "string" && like.code.length > 0) {
    code = like.code === "REQUEST_SEND_ERROR" ? "ConnectionFailed" : like.code;
  } else {
    code = statusCode === undefined ? name : `HTTP${statusCode}`;
  }
  if (statusCode === 401) {
    kind = "global";
  } else if (code === "ResourceNotFound") {
    kind = "notFound";
  }
  const fallback = answeredCode === "" ? "the answer carries no Azure error code" : name;
  const message = code === "Timeout" ? "the lookup did not complete within the configured lookup timeout" : shortMessage(rawMessage) || fallback;
  return { kind, details: statusCode === undefined ? { code, message } : { code, statusCode, message } };
}

export function cosmosStatusCode(error: unknown): number | undefined {
  const like = asErrorLike(error);
  if (typeof like.code === "number") return like.code;
  return typeof like.statusCode === "number" ? like.statusCode : undefined;
}

export function describeCosmosError(error: unknown): string {
  if (isCosmosConfigurationError(error)) {
    // Its advice (which settings to check) is the point: kept whole.
    return error.configurationProblem;
  }
  const like = asErrorLike(error);
  const status = cosmosStatusCode(error);
  const body = like.body;
  let code: string | undefined;
  let message = typeof like.message === "string" ? like.message : String(error);
  if (typeof body === "object" && body !== null) {
    const bodyRecord = body as { code?: unknown; message?: unknown };
    if (typeof bodyRecord.code === "string") code = bodyRecord.code;
    if (typeof bodyRecord.message === "string") message = bodyRecord.message;
  }
  if (code === undefined && typeof like.code === "string") code = like.code;
  // Cosmos messages carry JSON fragments and activity IDs on later lines; keep the first sentence.
  const text = shortMessage(message.replace(/^Message:\s*/i, "").replace(/^\{"Errors":\["?/, "")).slice(0, 300);
  return `${code ?? "CosmosError"}${status === undefined ? "" : ` (HTTP ${status})`}: ${text}`;
}
