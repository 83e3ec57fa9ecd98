/**
 * Expected failures without JavaScript stack traces in the engine's output.
 *
 * The SDK's dynamic provider host prints every error a `read`, `diff`, `check` or `delete` throws
 * as `${error}: ${error.stack}` on its stderr, which the engine shows under `pulumi:pulumi:Stack`:
 * a second copy of the message and a stack that says nothing to an operator, once per failed
 * cluster. The engine already shows the message under the cluster's resource. For the failures
 * this hook reports on purpose (its own error classes, each message naming the cause and the fix),
 * that stderr line is dropped; any other error (a bug) keeps its stack.
 */

/** The hook's error classes, by name (core/errors.ts and its neighbours): each message stands alone. */
const expectedNames = new Set([
  "AzureAccessError",
  "CosmosDocumentError",
  "UserAssignedIdentityReadError",
  "MsiIdentitiesError",
  "DataPlaneError",
  "ClusterCredentialError",
  "SettingsError",
  "DesiredSetDisagreementError",
  "CertificateBundleError",
  "MalformedAnswerError",
]);

/** Whether the error is one of the hook's own, reported on purpose. */
export function isExpectedFailure(error: unknown): error is Error {
  return error instanceof Error && expectedNames.has(error.name);
}

/** The lines the host is about to print for errors thrown by {@link withoutStackTrace}; bounded. */
const pending = new Set<string>();
const pendingLimit = 10_000;
let installed = false;

/** Whether the line is the host's line for an error {@link withoutStackTrace} registered; each is dropped once. */
export function takeHostLine(line: string): boolean {
  return pending.delete(line);
}

/** Drops, once each, the host's line for an error registered in {@link pending}. */
function installFilter(): void {
  if (installed) return;
  installed = true;
  const original = console.error.bind(console);
  console.error = (...args: unknown[]): void => {
    if (args.length === 1 && typeof args[0] === "string" && takeHostLine(args[0])) return;
    original(...args);
  };
}

/**
 * The error to throw from `read` (and the other operations whose errors the host prints): an
 * expected failure is registered so that the host's stderr line for it is dropped; any other
 * error is returned as it is.
 */
export function withoutStackTrace(error: unknown): unknown {
  if (!isExpectedFailure(error)) return error;
  installFilter();
  if (pending.size >= pendingLimit) pending.clear();
  // What the host prints: `${e}: ${e.stack}` (node_modules/@pulumi/pulumi/cmd/dynamic-provider).
  pending.add(`${String(error)}: ${error.stack ?? ""}`);
  return error;
}

/** Throws {@link withoutStackTrace}'s error: a `catch` handler for the operations whose errors the host prints. */
export function throwWithoutStackTrace(error: unknown): never {
  throw withoutStackTrace(error);
}
