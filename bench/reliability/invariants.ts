/**
 * The invariants a pass must keep, checked directly on the ServiceProviderCluster document read
 * back from Cosmos after the pass. Each check returns the violations it found (empty when the
 * document is right), phrased so a report line stands alone.
 */
import { isDeepStrictEqual } from "node:util";
import type { IdentityStore } from "../../sandbox/identityStore";
import type { Document } from "./reliabilitySandbox";
import { foreignFields, ownedStatus } from "./reliabilitySandbox";
import { encodeOutputsStatus, operatorNamesFromOutputs, readOutputsStatusText } from "../../resources/core/outputsStatus";
import { readStatusSubtree } from "../../resources/core/serviceProviderClusterDocument";

/**
 * The outputs' status (the JSON text of schema 3, by operator name) is exactly the persisted
 * subtree written small, under the operator names the outputs give: every entry, ID and error, and
 * the recheck time.
 */
function reportsPersistedStatus(reported: string, persisted: Document): boolean {
  const outputs = readOutputsStatusText(reported);
  const subtree = readStatusSubtree(persisted);
  if (outputs.problems.length > 0 || subtree.problems.length > 0) return false;
  return isDeepStrictEqual(outputs.status, encodeOutputsStatus(subtree.status, operatorNamesFromOutputs(outputs.status)));
}

/** How a pass ended, as the engine would see it. */
export type PassOutcome =
  /** The provider returned normally. */
  | "succeeded"
  /** The provider persisted the status, then failed on lookup errors (an error carrying `properties`). */
  | "lookupFailed"
  /** The provider failed to read or write the document (CosmosDocumentError); nothing written. */
  | "writeFailed"
  /** A failure not about one identity (AzureAccessError: credential, ARM 401, ARM unreachable); nothing written. */
  | "globalFailure"
  /** Anything else: an unexpected error type, or a crash. */
  | "crashed";

/** What the checker needs to know about one pass. */
export interface PassRecord {
  readonly outcome: PassOutcome;
  /** The document before the pass (after the pre-pass edits), and after it; undefined when absent. */
  readonly before: Document | undefined;
  readonly after: Document | undefined;
  /** Foreign fields the document must have after the pass (before's, plus edits raced in). */
  readonly expectedForeign: Document | undefined;
  /** Lowercase keys of the desired identities, with their resource IDs. */
  readonly desired: ReadonlyMap<string, string>;
  /** The status the provider reported (outputs or the error's properties, as JSON text), when it reported one. */
  readonly reportedStatus: string | undefined;
  /** Whether the document was deleted by a fault during the pass. */
  readonly deletedDuringPass: boolean;
  /** The error message, when the pass failed. */
  readonly errorMessage: string | undefined;
  /** The document id, which every write failure must name. */
  readonly documentId: string;
}

/**
 * A URL of a request the hook made (loopback sandbox, ARM, Cosmos, token endpoint, or any URL with
 * a subscription path or api-version). ARM's own help links (https://aka.ms/…) are service text.
 */
const requestUrl = /https?:\/\/(?:127\.0\.0\.1|localhost|[^\s/]*\.documents\.azure|169\.254\.)|https?:\/\/\S*(?:\/subscriptions\/|api-version=)/i;
const retrievalErrorShape = /^[A-Za-z][A-Za-z0-9]*( \(HTTP \d{3}\))?: \S/;

/** Checks every invariant of one pass; `secrets` must appear nowhere. */
export function checkPass(record: PassRecord, identities: IdentityStore, secrets: readonly string[]): string[] {
  const violations: string[] = [];
  if (record.outcome === "crashed") {
    violations.push(`the provider crashed: ${record.errorMessage ?? "(no message)"}`);
  }
  if (record.errorMessage !== undefined) {
    violations.push(...secretViolations("error message", record.errorMessage, secrets));
  }
  if (record.deletedDuringPass) {
    if (record.after !== undefined) {
      violations.push("the document was deleted during the pass but exists afterwards: the hook must never create it");
    }
    if (record.outcome === "succeeded") {
      violations.push("the document was deleted during the pass, yet the pass reported success");
    } else if (!/deleted|does not exist/.test(record.errorMessage ?? "")) {
      violations.push(`the failure does not say the document was deleted: ${record.errorMessage ?? ""}`);
    }
    return violations;
  }
  if (record.after === undefined || record.expectedForeign === undefined) {
    return [...violations, "the document is missing after the pass"];
  }
  if (!isDeepStrictEqual(foreignFields(record.after), record.expectedForeign)) {
    violations.push(`foreign fields changed: ${firstDifference(record.expectedForeign, foreignFields(record.after))}`);
  }
  const status = ownedStatus(record.after);
  if (record.outcome === "globalFailure") {
    // Issue 10 §1: a global failure never changes a stored clientId or principalId (nor anything else it owns).
    if (!isDeepStrictEqual(status, ownedStatus(record.before))) {
      violations.push("a global failure changed the owned subtree (stored IDs must stay as they were)");
    }
    if (record.errorMessage !== undefined && !record.errorMessage.includes(record.documentId)) {
      violations.push(`the global failure does not name document ${record.documentId}: ${record.errorMessage}`);
    }
    return violations;
  }
  if (record.outcome === "writeFailed") {
    if (!isDeepStrictEqual(status, ownedStatus(record.before))) {
      violations.push("a failed write changed the owned subtree (a partial write)");
    }
    if (record.errorMessage !== undefined && !record.errorMessage.includes(record.documentId)) {
      violations.push(`the write failure does not name document ${record.documentId}: ${record.errorMessage}`);
    }
    return violations;
  }
  if (status === undefined) {
    return [...violations, `the pass ended '${record.outcome}' but no status subtree was persisted`];
  }
  if (record.reportedStatus !== undefined && !reportsPersistedStatus(record.reportedStatus, status)) {
    violations.push("the status reported to the engine differs from the status persisted in Cosmos");
  }
  violations.push(...statusViolations(status, record, identities, secrets));
  return violations;
}

/**
 * {@link checkPass} for a document read once, after writers settled (no before/after pair, no
 * reported status, no deletion): what the concurrent-writer rounds and the convergence check after
 * an interrupted run look at.
 */
export function checkSettledDocument(
  document: Document | undefined,
  expectation: Pick<PassRecord, "outcome" | "expectedForeign" | "desired" | "documentId">,
  identities: IdentityStore,
  secrets: readonly string[],
): string[] {
  return checkPass(
    { ...expectation, before: document, after: document, reportedStatus: undefined, deletedDuringPass: false, errorMessage: undefined },
    identities,
    secrets,
  );
}

function statusViolations(status: Document, record: PassRecord, identities: IdentityStore, secrets: readonly string[]): string[] {
  const violations: string[] = [];
  const entries = (status.identities ?? {}) as Record<string, Record<string, unknown>>;
  const storedKeys = Object.keys(entries).sort();
  const desiredKeys = [...record.desired.keys()].sort();
  if (!isDeepStrictEqual(storedKeys, desiredKeys)) {
    violations.push(`stored identities ${JSON.stringify(storedKeys)} differ from the desired set ${JSON.stringify(desiredKeys)}`);
  }
  let everyLookupSucceeded = true;
  for (const [key, entry] of Object.entries(entries)) {
    const inArm = identities.get(key);
    const retrievalError = entry.retrievalError;
    if (typeof retrievalError === "string") {
      if (entry.clientId !== undefined || entry.principalId !== undefined) {
        violations.push(`${key}: has a retrievalError but kept clientId/principalId`);
      }
      violations.push(...retrievalErrorViolations(key, retrievalError, secrets));
      const notFound = retrievalError.startsWith("ResourceNotFound");
      if (notFound && inArm !== undefined) {
        violations.push(`${key}: recorded ResourceNotFound but the identity exists in ARM`);
      }
      everyLookupSucceeded &&= notFound;
    } else if (inArm === undefined) {
      violations.push(`${key}: the identity does not exist in ARM, yet the entry has no retrievalError`);
    } else if (entry.clientId !== inArm.clientId || entry.principalId !== inArm.principalId) {
      violations.push(`${key}: stale values (stored ${String(entry.clientId)}, ARM has ${inArm.clientId})`);
    }
  }
  const recheck = status.earliestRecheckTime;
  if (recheck !== undefined && !everyLookupSucceeded) {
    violations.push("earliestRecheckTime is set although a lookup failed");
  }
  if (recheck === undefined && record.outcome === "succeeded") {
    violations.push("every lookup succeeded but earliestRecheckTime is not set");
  }
  if (record.outcome === "lookupFailed" && everyLookupSucceeded) {
    violations.push("the pass reported lookup failures, but every persisted entry is resolved or not found");
  }
  return violations;
}

/** A retrievalError must be one normalised line: code, optional status, short text; no URL, no secret. */
export function retrievalErrorViolations(key: string, retrievalError: string, secrets: readonly string[]): string[] {
  const violations: string[] = [];
  if (!retrievalErrorShape.test(retrievalError)) {
    violations.push(`${key}: retrievalError is not '<code> (HTTP <status>): <text>': ${retrievalError}`);
  }
  if (/[\r\n]/.test(retrievalError) || requestUrl.test(retrievalError) || /\bat .+:\d+:\d+\)?/.test(retrievalError)) {
    violations.push(`${key}: retrievalError carries a raw dump (newline, request URL or stack frame): ${retrievalError}`);
  }
  if (Array.from(retrievalError).length > 1024) {
    violations.push(`${key}: retrievalError is longer than 1024 code points`);
  }
  return [...violations, ...secretViolations(`${key}: retrievalError`, retrievalError, secrets)];
}

/** Each secret found in `text`, as a violation that does not repeat the secret. */
export function secretViolations(where: string, text: string, secrets: readonly string[]): string[] {
  const found = secrets.filter((secret) => secret.length >= 8 && text.includes(secret));
  const bearer = /Bearer\s+[A-Za-z0-9._~+/=-]{8,}/.test(text) ? ["a bearer token"] : [];
  return [...found.map((secret) => `${where} contains a secret (${secret.length} characters)`), ...bearer.map((what) => `${where} contains ${what}`)];
}

/** A short description of where two JSON values first differ. */
export function firstDifference(expected: unknown, actual: unknown, path = ""): string {
  if (typeof expected !== "object" || expected === null || typeof actual !== "object" || actual === null) {
    return `${path || "/"}: expected ${JSON.stringify(expected)}, found ${JSON.stringify(actual)}`;
  }
  const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
  for (const key of keys) {
    const left = (expected as Record<string, unknown>)[key];
    const right = (actual as Record<string, unknown>)[key];
    if (!isDeepStrictEqual(left, right)) {
      return firstDifference(left, right, `${path}/${key}`);
    }
  }
  return `${path || "/"}: equal`;
}
