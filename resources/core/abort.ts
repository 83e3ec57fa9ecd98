/** Deadlines over promises that may ignore abort signals. Not @azure/core-util: the pure core loads no SDK. */

/** What is used of an abort signal: the DOM's AbortSignal and the Azure SDKs' AbortSignalLike both fit. */
export interface AbortSignalView {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { readonly once?: boolean }): void;
  removeEventListener(type: "abort", listener: () => void): void;
}

/** Settles like `promise`, or rejects with the signal's reason once it aborts, so a deadline holds even when the work ignores its signal. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignalView): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
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
  if (reason instanceof Error) return reason;
  return Object.assign(new Error(typeof reason === "string" ? reason : "the operation was aborted"), { name: "AbortError" });
}

/** Whether an error is an abort or a deadline (the names the DOM, Node and the Azure SDKs give them). */
export function isAbortError(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  return name === "AbortError" || name === "TimeoutError";
}

/** Runs `work` with a signal that aborts after `timeoutInMs` (a TimeoutError), dropping the timer once `work` settles, unlike `AbortSignal.timeout`'s. */
export async function withDeadline<T>(timeoutInMs: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")), timeoutInMs);
  // As AbortSignal.timeout's: a pending deadline alone does not keep the process alive.
  timer.unref();
  try {
    return await work(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}
