/**
 * One identity lookup with this hook's retry policy (docs/design.md, "Retries"); the ARM client's is
 * off: it would hold the limiter slot through every wait and knows nothing of the deadline. Each
 * attempt holds a slot only while its request runs. A token failure or ARM 401 is `global` at once;
 * an unreachable endpoint is `global` after the retries, since a network can come back.
 */
import { untilAborted, withDeadline } from "../core/abort";
import type { ParsedResourceId } from "../core/azureResourceId";
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import { classifyLookupError, isEndpointUnreachableCode, retryAfterInMs } from "../core/errorClassification";
import { lookupTimeoutSetting } from "../core/settingsKeys";
import type { IdentityLookupOutcome } from "../core/statusDecision";
import type { LookupErrorDetails } from "../core/retrievalError";
import type { SyncDependencies } from "./syncDependencies";

/** Attempts per lookup answered without a Retry-After, the first included. */
export const maxLookupAttempts = 6;
/** Attempts per lookup of any kind: a guard against a service that keeps asking for a 0 s wait. */
export const maxTotalAttempts = 30;
const firstBackoffInMs = 500;
const maxBackoffInMs = 8000;
const retryableStatusCodes = new Set([408, 429, 500, 502, 503, 504]);

type LookupDependencies = Pick<SyncDependencies, "userAssignedIdentityReader" | "limiter" | "now" | "random" | "sleep" | "options">;

type AttemptResult =
  | { readonly outcome: IdentityLookupOutcome }
  | { readonly retry: IdentityLookupOutcome; readonly delayInMs: number | undefined }
  | { readonly cutByDeadline: true };

export async function lookUpIdentity(dependencies: LookupDependencies, resourceId: string): Promise<IdentityLookupOutcome> {
  const parsed = parseResourceIdOfType(resourceId, userAssignedIdentityResourceType);
  if (!parsed.ok) return { kind: "failed", error: { code: "InvalidResourceId", message: `identity resource ID ${parsed.reason}` } };
  // Set when the first attempt gets its slot; moved later by every later wait for a slot.
  let deadline: number | undefined;
  let last: IdentityLookupOutcome = { kind: "failed", error: { code: "Timeout", message: "the lookup did not complete within the configured lookup timeout" } };
  // `attempt` counts the attempts that used up one of maxLookupAttempts (no Retry-After).
  let attempt = 0;
  for (let total = 1; total <= maxTotalAttempts; total += 1) {
    if (deadline !== undefined && deadline <= dependencies.now().getTime()) break;
    const queuedAt = dependencies.now().getTime();
    const result: AttemptResult = await dependencies.limiter.run(() => {
      const slotAt = dependencies.now().getTime();
      deadline = deadline === undefined ? slotAt + dependencies.options.lookupTimeoutInMs : deadline + (slotAt - queuedAt);
      return withDeadline(deadline - slotAt, (abortSignal) => attemptOnce(dependencies, parsed.resourceId, abortSignal));
    });
    if ("outcome" in result) return result.outcome;
    // An attempt the deadline cut gave no answer: the lookup ends with the last answer it had, a
    // Timeout only when there was none, so lookups failing on one transient class all end with it.
    if ("cutByDeadline" in result) break;
    last = result.retry;
    if (result.delayInMs === undefined) attempt += 1;
    const delayInMs = result.delayInMs ?? backoffInMs(attempt, dependencies.random);
    if (attempt === maxLookupAttempts || total === maxTotalAttempts || deadline === undefined || dependencies.now().getTime() + delayInMs >= deadline) break;
    await dependencies.sleep(delayInMs);
  }
  return last;
}

async function attemptOnce(dependencies: LookupDependencies, resourceId: ParsedResourceId, abortSignal: AbortSignal): Promise<AttemptResult> {
  const reader = dependencies.userAssignedIdentityReader;
  let gotToken = false;
  try {
    if (reader.acquireToken !== undefined) await untilAborted(reader.acquireToken({ abortSignal }), abortSignal);
    gotToken = true;
    const values = await untilAborted(reader.getUserAssignedIdentity(resourceId, { abortSignal }), abortSignal);
    if (values === undefined) {
      return { outcome: { kind: "failed", error: { code: "MissingProperties", statusCode: 200, message: "Azure returned the identity without properties" } } };
    }
    return { outcome: { kind: "resolved", clientId: values.clientId, principalId: values.principalId } };
  } catch (error) {
    const { kind, details } = classifyLookupError(error);
    if (!gotToken) return { outcome: { kind: "global", error: tokenFailure(details) } };
    if (abortSignal.aborted) return { cutByDeadline: true };
    if (kind === "notFound") return { outcome: { kind, error: details } };
    const unreachable = isEndpointUnreachableCode(details.code);
    // An unreachable endpoint (global) is retried; any other global failure ends the lookup at once.
    const outcome: IdentityLookupOutcome = { kind: kind === "global" ? "global" : "failed", error: details };
    if (kind === "global" && !unreachable) return { outcome };
    const retryable = (details.statusCode !== undefined && retryableStatusCodes.has(details.statusCode)) || details.code === "ConnectionFailed" || unreachable;
    return retryable ? { retry: outcome, delayInMs: retryAfterInMs(error) } : { outcome };
  }
}

/** A failure to get the token, as a credential failure (AzureAccessError names the credential in use). */
function tokenFailure(details: LookupErrorDetails): LookupErrorDetails {
  if (details.code === "Timeout") {
    return {
      code: "CredentialUnavailable",
      message:
        "the credential did not get a token within the lookup deadline: its token endpoint (IMDS, IDENTITY_ENDPOINT, or Entra ID) did not answer in time; " +
        `check that endpoint, or raise ${lookupTimeoutSetting}`,
    };
  }
  return details.code === "CredentialUnavailable" ? details : { ...details, code: "CredentialUnavailable", message: `${details.code}: ${details.message}` };
}

/** 0.5 s, 1 s, 2 s, … up to 8 s, each scaled by a random factor in [0.5, 1). */
export function backoffInMs(attempt: number, random: () => number): number {
  const base = Math.min(maxBackoffInMs, firstBackoffInMs * 2 ** (attempt - 1));
  return Math.round(base * (0.5 + Math.min(Math.max(random(), 0), 0.999999) / 2));
}
