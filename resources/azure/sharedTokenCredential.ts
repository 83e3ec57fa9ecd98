/**
 * One token per scope for a whole provider process, reused until shortly before it expires.
 *
 * Every arm-msi client (one per subscription) has its own bearer-token policy with its own cache;
 * without this wrapper their first requests would each ask the token endpoint, at once, where one
 * request is enough. Concurrent callers share one request. Requests carrying `claims` (a continuous-access-evaluation challenge) bypass the cache.
 * A failed request is not cached: the next caller asks again. Each caller stops waiting when its own
 * abort signal fires (its lookup deadline), and a shared request still unanswered after
 * {@link pendingTokenRequestStaleAfterMs} is given up on: the next caller asks again, so a token
 * endpoint that hung once does not keep the whole process waiting after it recovers.
 *
 * With `holdFailuresForMs`, a refusal is answered again to the callers of the same tenant and
 * scope for that long without asking the inner credential (the first party: a certificate Entra ID
 * refused is refused for every cluster whose data plane challenges in that tenant, and asking again
 * for each would cost a token request per cluster). Other tenants are asked as usual. A failure of
 * the local bundle file is never held (certificateCredential.ts: reading it again costs nothing).
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
  /** A refusal answered again until `heldUntil`. */
  failure?: unknown;
  heldUntil?: number;
  pending?: Promise<AccessToken | null>;
  pendingSince?: number;
}

/** Wraps `inner` so that the process asks it once per scope until the token nears expiry. */
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
      if (options?.claims !== undefined) {
        return inner.getToken(scopes, options);
      }
      const key = `${options?.tenantId ?? ""} ${(Array.isArray(scopes) ? scopes : [scopes]).join(" ")}`;
      const entry = entries.get(key) ?? {};
      entries.set(key, entry);
      if (isFresh(entry.token)) {
        return entry.token;
      }
      if (entry.heldUntil !== undefined && now() < entry.heldUntil) {
        throw entry.failure;
      }
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
            if (entry.pending === request) {
              entry.pending = undefined;
            }
          });
        entry.pending = request;
        entry.pendingSince = now();
      }
      return options?.abortSignal === undefined ? entry.pending : untilAborted(entry.pending, options.abortSignal);
    },
  };
}
