/** The wait a failed ARM response asks for in ms (`retry-after-ms`, `x-ms-retry-after-ms`, `retry-after`), read here because the SDK's retry policy is off. */
export function retryAfterInMs(error: unknown): number | undefined {
  const response = (error as { response?: { headers?: { get?: (name: string) => string | undefined } } } | undefined)?.response;
  const get = response?.headers?.get?.bind(response.headers);
  if (get === undefined) return undefined;
  for (const name of ["retry-after-ms", "x-ms-retry-after-ms"]) {
    const milliseconds = Number(get(name));
    if (get(name) !== undefined && Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  }
  const retryAfter = get("retry-after");
  if (retryAfter === undefined) return undefined;
  const seconds = Number(retryAfter);
  if (retryAfter.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
