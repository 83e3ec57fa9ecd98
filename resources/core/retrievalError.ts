/**
 * The persisted text of a failed lookup, `retrievalError`: one line, secrets redacted, capped at
 * upstream's length in code points. Pure.
 */

/** Upstream `maxRetrievalErrorLength`: the cap on a persisted retrievalError, in code points. */
export const maxRetrievalErrorLength = 1024;
/** Longest service message kept in a retrievalError before the overall cap. */
const maxServiceMessageLength = 400;

/** The normalised facts of a failed lookup (never a raw SDK dump). */
export interface LookupErrorDetails {
  /** Azure error code, e.g. `ResourceNotFound`; a local code otherwise. */
  readonly code: string;
  readonly statusCode?: number;
  /** First line of the service message, whitespace folded. */
  readonly message: string;
}

/** `<code> (HTTP <status>): <message>`, one line, secrets redacted, capped at {@link maxRetrievalErrorLength} code points. */
export function formatRetrievalError(error: LookupErrorDetails): string {
  const message = truncateCodePoints(shortMessage(error.message), maxServiceMessageLength);
  return truncateCodePoints(`${errorCodeLabel(error)}: ${message}`, maxRetrievalErrorLength);
}

/** `<code> (HTTP <status>)`, or `<code>` when no answer gave a status. */
export function errorCodeLabel(error: { readonly code: string; readonly statusCode?: number }): string {
  return error.statusCode === undefined ? error.code : `${error.code} (HTTP ${error.statusCode})`;
}

/** `<code> (HTTP <status>): <message>` for a message that goes on: its closing full stop left out. */
export function lookupErrorText(error: LookupErrorDetails): string {
  return `${errorCodeLabel(error)}: ${error.message.replace(/[.\s]+$/, "")}`;
}

/** First line of a message, whitespace folded, bearer tokens, signatures and keys redacted. */
export function shortMessage(message: string): string {
  const firstLine = message.split(/\r?\n/).find((line) => line.trim().length > 0) ?? "";
  return redactSecrets(firstLine.replace(/\s+/g, " ").trim().replace(msalServerError, "$1"));
}

/**
 * MSAL's wording of an Entra ID refusal: the codes, the timestamp, the description, the correlation
 * and trace IDs. Entra's description already ends with the trace ID, correlation ID and timestamp,
 * so the description alone says it all, once (the trace ID is what Entra's support asks for).
 */
const msalServerError = /Error\(s\): [\d, ]+ - Timestamp: [\d-]+ [\d:.]+Z? - Description: (.*?) - Correlation ID: [0-9a-f-]+ - Trace ID: [0-9a-f-]+/i;

/** Replaces credential-looking material with `[redacted]`. Used on every text that leaves the hook. */
export function redactSecrets(text: string): string {
  return text
    .replace(/(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, "$1[redacted]")
    .replace(/((?:sig|signature|accountkey|access_token|client_secret|key)\s*[=:]\s*)[^\s&;,"']+/gi, "$1[redacted]")
    .replace(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*/g, "[redacted-jwt]");
}

/** Keeps the first `maximum` Unicode code points; never splits a surrogate pair. */
export function truncateCodePoints(text: string, maximum: number): string {
  const codePoints = Array.from(text);
  return codePoints.length <= maximum ? text : codePoints.slice(0, maximum).join("");
}

const hookRetrievalErrorPattern = /^(\S+) \(HTTP (\d{3})\): /;

/**
 * True when a stored retrievalError records that the identity does not exist (data, not a
 * failure): its Azure error code is `ResourceNotFound`, as upstream decides it (the code only,
 * whatever the status). Read from this hook's format or from upstream's raw SDK text (its
 * `ERROR CODE: <code>` line), never from words elsewhere in the message.
 */
export function isNotFoundRetrievalError(retrievalError: string | undefined): boolean {
  if (typeof retrievalError !== "string") return false;
  return retrievalErrorKind(retrievalError).code === "ResourceNotFound" || retrievalError.startsWith("ResourceNotFound: ");
}

/** True when a stored retrievalError records a real failure: one that reopens the recheck gate. */
export function isFailedRetrievalError(retrievalError: string | undefined): boolean {
  return typeof retrievalError === "string" && !isNotFoundRetrievalError(retrievalError);
}

/** The Azure error code and HTTP status a stored retrievalError records, in this hook's format or upstream's raw SDK text. */
function retrievalErrorKind(retrievalError: string): { readonly code: string | undefined; readonly statusCode: string | undefined } {
  const hookFormat = hookRetrievalErrorPattern.exec(retrievalError);
  if (hookFormat !== null) {
    return { code: hookFormat[1], statusCode: hookFormat[2] };
  }
  return { code: /^ERROR CODE: (\S+)$/m.exec(retrievalError)?.[1], statusCode: /RESPONSE (\d{3})\b/.exec(retrievalError)?.[1] };
}

/** True when two stored retrievalErrors record the same kind of failure (same code, or same status when a code is missing). */
export function sameFailureKind(left: string, right: string): boolean {
  const a = retrievalErrorKind(left);
  const b = retrievalErrorKind(right);
  if (a.code !== undefined && b.code !== undefined) {
    return a.code.toLowerCase() === b.code.toLowerCase();
  }
  return a.statusCode !== undefined && a.statusCode === b.statusCode;
}
