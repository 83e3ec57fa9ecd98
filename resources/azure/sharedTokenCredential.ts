/**
 * One token per tenant and scope for a whole provider process, reused until shortly before it
 * expires, so the clients' bearer policies do not each ask the token endpoint at once. Concurrent
 * callers share one request (not joined once it is stale, so an endpoint that hung once does not hold
 * the process); `claims` (a continuous access evaluation challenge) bypasses the cache; each caller
 * stops at its own abort signal. A failure is not cached, except with `holdFailuresForMs` (the first
 * party): a refusal answers the same tenant and scope for that long, a bundle file's failure never.
 */
import type { AccessToken, GetTokenOptions, TokenCredential } from "@azure/identity";
import { untilAborted } from "../core/abort";
import { isCertificateFileProblem } from "./certificateCredential";

/** Tokens are fetched again this long before they expire. */
export const tokenRefreshMarginInMs = 5 * 60 * 1000;

/** A shared token request unanswered for this long is not joined any more: the next caller asks anew. */
export const pendingTokenRequestStaleAfterMs = 30 * 1000;

interface Entry {
  token?: AccessToken;
  failure?: unknown;
  heldUntil?: number;
  pending?: Promise<AccessToken | null>;
  pendingSince?: number;
}

export function sharedTokenCredential(
  inner: TokenCredential,
  now: () => number = Date.now,
  options: { readonly holdFailuresForMs?: number } = {},
): TokenCredential {
  const holdFailuresForMs = options.holdFailuresForMs ?? 0;
  const entries = new Map<string, Entry>();
  const isFresh = (token: AccessToken | undefined): token is AccessToken =>
    token !== undefined && now() < Math.min(token.expiresOnTimestamp - tokenRefreshMarginInMs, token.refreshAfterTimestamp ?? Number.POSITIVE_INFINITY);
  return {
    async getToken(scopes: string | string[], options?: GetTokenOptions): Promise<AccessToken | null> {
      if (options?.claims !== undefined) return inner.getToken(scopes, options);
      const key = `${options?.tenantId ?? ""} ${(Array.isArray(scopes) ? scopes : [scopes]).join(" ")}`;
      const entry = entries.get(key) ?? {};
      entries.set(key, entry);
      if (isFresh(entry.token)) return entry.token;
      if (entry.heldUntil !== undefined && now() < entry.heldUntil) throw entry.failure;
      if (entry.pending === undefined || now() - (entry.pendingSince ?? 0) > pendingTokenRequestStaleAfterMs) {
        // Shared by every caller waiting now, so it carries no single caller's abort signal.
        const request: Promise<AccessToken | null> = inner
          .getToken(scopes, options?.tenantId === undefined ? {} : { tenantId: options.tenantId })
          .then(
            (token) => {
              entry.token = token ?? undefined;
              entry.heldUntil = undefined;
              return token;
            },
            (error: unknown) => {
              const name = (error as { name?: unknown } | undefined)?.name;
              if (holdFailuresForMs > 0 && name !== "AbortError" && !isCertificateFileProblem(error)) {
                entry.failure = error;
                entry.heldUntil = now() + holdFailuresForMs;
              }
              throw error;
            },
          )
          .finally(() => {
            if (entry.pending === request) entry.pending = undefined;
          });
        entry.pending = request;
        entry.pendingSince = now();
      }
      return options?.abortSignal === undefined ? entry.pending : untilAborted(entry.pending, options.abortSignal);
    },
  };
}
