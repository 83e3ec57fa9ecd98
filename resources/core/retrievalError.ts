/** The persisted text of a failed lookup, `retrievalError`: one line, secrets redacted, capped as upstream caps it. */

/** Upstream's `maxRetrievalErrorLength`, in code points. */
export const maxRetrievalErrorLength = 1024;
/** Longest service message kept in a retrievalError before the overall cap. */
const maxServiceMessageLength = 400;

export interface LookupErrorDetails {
  readonly code: string;
  readonly statusCode?: number;
  readonly message: string;
}

export function formatRetrievalError(error: LookupErrorDetails): string {
  const message = truncateCodePoints(shortMessage(error.message), maxServiceMessageLength);
  return truncateCodePoints(`${errorCodeLabel(error)}: ${message}`, maxRetrievalErrorLength);
}

export function errorCodeLabel(error: { readonly code: string; readonly statusCode?: number }): string {
  return error.statusCode === undefined ? error.code : `${error.code} (HTTP ${error.statusCode})`;
}

export function lookupErrorText(error: LookupErrorDetails): string {
  return `${errorCodeLabel(error)}: ${withoutFinalPeriod(error.message)}`;
}

/** The text without its closing full stop and trailing space, for a sentence that goes on. */
export function withoutFinalPeriod(text: string): string {
  return text.replace(/[.\s]+$/, "");
}

export function shortMessage(message: string): string {
  const firstLine = message.split(/\r?\n/).find((line) => line.trim().length > 0) ?? "";
  return redactSecrets(firstLine.replace(/\s+/g, " ").trim().replace(msalServerError, "$1"));
}

/** MSAL's wording of an Entra refusal: Entra's description already carries the trace and correlation IDs, so it alone is kept. */
const msalServerError = /Error\(s\): [\d, ]+ - Timestamp: [\d-]+ [\d:.]+Z? - Description: (.*?) - Correlation ID: [0-9a-f-]+ - Trace ID: [0-9a-f-]+/i;

/** Replaces credential-looking material with `[redacted]`; used on every text that leaves the hook. */
export function redactSecrets(text: string): string {
  return text
    .replace(/(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, "$1[redacted]")
    .replace(/((?:sig|signature|accountkey|access_token|client_secret|key)\s*[=:]\s*)[^\s&;,"']+/gi, "$1[redacted]")
    .replace(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*/g, "[redacted-jwt]");
}

export function truncateCodePoints(text: string, maximum: number): string {
  const codePoints = Array.from(text);
  return codePoints.length <= maximum ? text : codePoints.slice(0, maximum).join("");
}

const hookRetrievalErrorPattern = /^(\S+) \(HTTP (\d{3})\): /;

/** True when a stored retrievalError records that the identity does not exist (data, not a failure): code `ResourceNotFound`, in either writer's format. */
export function isNotFoundRetrievalError(retrievalError: string | undefined): boolean {
  if (typeof retrievalError !== "string") return false;
  return retrievalErrorKind(retrievalError).code === "ResourceNotFound" || retrievalError.startsWith("ResourceNotFound: ");
}

/** True when a stored retrievalError records a real failure: one that reopens the recheck gate. */
export function isFailedRetrievalError(retrievalError: string | undefined): boolean {
  return typeof retrievalError === "string" && !isNotFoundRetrievalError(retrievalError);
}

function retrievalErrorKind(retrievalError: string): { readonly code: string | undefined; readonly statusCode: string | undefined } {
  const hookFormat = hookRetrievalErrorPattern.exec(retrievalError);
  if (hookFormat !== null) return { code: hookFormat[1], statusCode: hookFormat[2] };
  return { code: /^ERROR CODE: (\S+)$/m.exec(retrievalError)?.[1], statusCode: /RESPONSE (\d{3})\b/.exec(retrievalError)?.[1] };
}

/** Same code, or the same status when a code is missing. */
export function sameFailureKind(left: string, right: string): boolean {
  const a = retrievalErrorKind(left);
  const b = retrievalErrorKind(right);
  if (a.code !== undefined && b.code !== undefined) return a.code.toLowerCase() === b.code.toLowerCase();
  return a.statusCode !== undefined && a.statusCode === b.statusCode;
}
