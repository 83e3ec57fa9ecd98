/** The one place Azure and Cosmos errors are classified and described (by `name`, `code`, `statusCode`: no SDK imports). */
import type { LookupErrorDetails } from "./retrievalError";
import { errorCodeLabel, shortMessage } from "./retrievalError";
import { isAbortError } from "./abort";
import { isCosmosConfigurationError } from "./errors";
import { isJsonObject, parsedJsonText } from "./json";

interface ErrorLike {
  readonly name?: unknown;
  readonly code?: unknown;
  readonly statusCode?: unknown;
  readonly message?: unknown;
  readonly body?: unknown;
  readonly cause?: { readonly code?: unknown };
  readonly response?: FailedResponse;
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
  const causeCode = like.cause?.code;
  const ownCode = typeof like.code === "string" && like.code !== "REQUEST_SEND_ERROR" ? like.code : undefined;
  const nodeCode = ownCode ?? (typeof causeCode === "string" ? causeCode : undefined);
  const answeredCode = statusCode === undefined ? undefined : azureErrorCode(like);
  const abort = isAbortError(error);
  const credential = !abort && credentialErrorNames.has(name);
  const unreachable = !abort && !credential && nodeCode !== undefined && isEndpointUnreachableCode(nodeCode);
  let code = statusCode === undefined ? name : `HTTP${statusCode}`;
  if (abort) code = "Timeout";
  else if (credential) code = "CredentialUnavailable";
  else if (unreachable) code = nodeCode;
  else if (answeredCode !== undefined) code = answeredCode || code;
  else if (typeof like.code === "string" && like.code.length > 0) code = like.code === "REQUEST_SEND_ERROR" ? "ConnectionFailed" : like.code;
  const kind: LookupErrorKind = credential || unreachable || statusCode === 401 ? "global" : code === "ResourceNotFound" ? "notFound" : "identity";
  const fallback = answeredCode === "" ? "the answer carries no Azure error code" : name;
  const message = code === "Timeout" ? "the lookup did not complete within the configured lookup timeout" : shortMessage(rawMessage) || fallback;
  return { kind, details: statusCode === undefined ? { code, message } : { code, statusCode, message } };
}

export function cosmosStatusCode(error: unknown): number | undefined {
  const like = asErrorLike(error);
  if (typeof like.code === "number") return like.code;
  return typeof like.statusCode === "number" ? like.statusCode : undefined;
}

/** Codes of a request that may have reached Cosmos but brought no answer: the connection reset or closed under it, or the SDK's own timeout. */
const unansweredCodes = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "ETIMEDOUT", "TimeoutError"]);

/**
 * Whether a Cosmos request failed with no answer after it may have reached Cosmos, so that a write may
 * or may not have landed. Not a refused connection, a name that does not resolve or a TLS failure:
 * those never reached Cosmos.
 */
export function isUnansweredCosmosRequest(error: unknown): boolean {
  if (cosmosStatusCode(error) !== undefined || isCosmosConfigurationError(error)) return false;
  const like = asErrorLike(error);
  const code = typeof like.code === "string" ? like.code : like.cause?.code;
  return typeof code === "string" && unansweredCodes.has(code);
}

export function describeCosmosError(error: unknown): string {
  if (isCosmosConfigurationError(error)) {
    // Its advice (which settings to check) is the point: kept whole.
    return error.configurationProblem;
  }
  const like = asErrorLike(error);
  const status = cosmosStatusCode(error);
  const body = isJsonObject(like.body) ? like.body : {};
  const code = typeof body.code === "string" ? body.code : typeof like.code === "string" ? like.code : undefined;
  const message = typeof body.message === "string" ? body.message : typeof like.message === "string" ? like.message : String(error);
  // Cosmos messages carry JSON fragments and activity IDs on later lines; keep the first sentence.
  const text = shortMessage(message.replace(/^Message:\s*/i, "").replace(/^\{"Errors":\["?/, "")).slice(0, 300);
  return `${errorCodeLabel({ code: code ?? "CosmosError", statusCode: status })}: ${text}`;
}

/**
 * The Azure error code of a failed answer as upstream's azcore reads it (x-ms-error-code header, else the
 * JSON body's, else an XML `<Code>`; `""` when none; undefined without an answer): "the identity is gone"
 * is decided on upstream's code, not on @azure/core-client's `code` (the body's, of any type).
 */
export function azureErrorCode(error: unknown): string | undefined {
  const response = asErrorLike(error).response;
  if (typeof response !== "object" || response === null) return undefined;
  const header = headerOf(response, "x-ms-error-code");
  if (typeof header === "string" && header !== "") return header;
  const body = response.bodyAsText;
  if (typeof body !== "string") return undefined;
  return body === "" ? "" : jsonErrorCode(body) || xmlErrorCode(body);
}

/** The wait a failed ARM response asks for in ms (`retry-after-ms`, `x-ms-retry-after-ms`, `retry-after`), read here because the SDK's retry policy is off. */
export function retryAfterInMs(error: unknown): number | undefined {
  const response = asErrorLike(error).response;
  if (typeof response?.headers?.get !== "function") return undefined;
  for (const name of ["retry-after-ms", "x-ms-retry-after-ms"]) {
    const milliseconds = Number(headerOf(response, name));
    if (headerOf(response, name) !== undefined && Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  }
  const retryAfter = headerOf(response, "retry-after");
  if (retryAfter === undefined) return undefined;
  const seconds = Number(retryAfter);
  if (retryAfter.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

interface FailedResponse {
  readonly headers?: { readonly get?: (name: string) => string | undefined };
  readonly bodyAsText?: unknown;
}

function headerOf(response: FailedResponse, name: string): string | undefined {
  return typeof response.headers?.get === "function" ? response.headers.get(name) : undefined;
}

/** `code` of a JSON object body (unwrapped from `error` or `odata.error`), or `""`. */
function jsonErrorCode(body: string): string {
  const record = parsedJsonText(body);
  if (!isJsonObject(record)) return "";
  const has = (key: string): boolean => Object.prototype.hasOwnProperty.call(record, key);
  const wrapped = has("error") ? record.error : has("odata.error") ? record["odata.error"] : record;
  return isJsonObject(wrapped) && typeof wrapped.code === "string" ? wrapped.code : "";
}

/** The first `<Code>` (any namespace prefix) of a body, as azcore's pattern finds it (Go's `\s` is these five). */
function xmlErrorCode(body: string): string {
  return /<(?:\w+:)?[c|C]ode>[\t\n\f\r ]*(\w+)[\t\n\f\r ]*<\/(?:\w+:)?[c|C]ode>/.exec(body)?.[1] ?? "";
}
