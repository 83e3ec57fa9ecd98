/**
 * The wait a failed ARM response asks for, in milliseconds: `retry-after-ms`,
 * `x-ms-retry-after-ms`, or `retry-after` (seconds or an HTTP date); undefined when it asks none.
 * @azure/core-rest-pipeline reads these headers only inside its retry policy, which is not used
 * (sync/lookUpIdentity.ts says why), and the pure core loads no SDK. Pure.
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
