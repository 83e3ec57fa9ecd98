/**
 * Waiting with a deadline on promises that may ignore abort signals (pure, no I/O).
 * @azure/core-util's `cancelablePromiseRace` and `createAbortablePromise` come close, but the pure
 * core loads no SDK (.dependency-cruiser.cjs), and this is one `Promise.race` that must also accept
 * the SDKs' AbortSignalLike.
 */

/** What is used of an abort signal: the DOM's AbortSignal and the Azure SDKs' AbortSignalLike both fit. */
export interface AbortSignalView {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/**
 * Settles like `promise`, or rejects with the signal's reason once it aborts, whichever comes
 * first, so a deadline holds even when the work (a reader, or a credential it waits on) ignores its
 * abort signal. The promise itself goes on; only this wait ends.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignalView): Promise<T> {
  if (signal.aborted) {
    return Promise.reject(abortReason(signal));
  }
  let onAbort = (): void => undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
  });
  // Observed by the race below; this only keeps a late abort from being reported as unhandled.
  aborted.catch(() => undefined);
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

/** The signal's reason as an Error (AbortSignal.timeout gives a DOMException, which is one). */
function abortReason(signal: AbortSignalView): Error {
  const reason = signal.reason;
  if (reason instanceof Error) {
    return reason;
  }
  return Object.assign(new Error(typeof reason === "string" ? reason : "the operation was aborted"), { name: "AbortError" });
}
