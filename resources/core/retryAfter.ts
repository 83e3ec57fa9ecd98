/** How long a throttled or unavailable ARM answer asks the caller to wait. Pure. */

/**
 * The wait a failed ARM response asks for, in milliseconds: `retry-after-ms`,
 * `x-ms-retry-after-ms`, or `retry-after` (seconds or an HTTP date). Undefined when it asks none.
 * Hand-written because @azure/core-rest-pipeline reads these same headers only inside its
 * throttling retry policy and exports no parser of them (checked in 1.24), and that policy is not
 * used (resources/sync/lookUpIdentity.ts says why); the pure core loads no SDK (.dependency-cruiser.cjs).
 */
export function retryAfterInMs(error: unknown): number | undefined {
  const response = (error as { response?: { headers?: { get?: (name: string) => string | undefined } } } | undefined)?.response;
  const get = response?.headers?.get?.bind(response.headers);
  if (get === undefined) {
    return undefined;
  }
  for (const name of ["retry-after-ms", "x-ms-retry-after-ms"]) {
    const milliseconds = Number(get(name));
    if (get(name) !== undefined && Number.isFinite(milliseconds) && milliseconds >= 0) {
      return milliseconds;
    }
  }
  const retryAfter = get("retry-after");
  if (retryAfter === undefined) {
    return undefined;
  }
  const seconds = Number(retryAfter);
  if (retryAfter.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) {
    return seconds * 1000;
  }
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
