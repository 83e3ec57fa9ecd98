/**
 * The dynamic provider host prints every error a `read`, `diff`, `check` or `delete` throws as
 * `${error}: ${error.stack}` on stderr, a second copy of the message the engine shows: for the hook's
 * own error classes (each message names the cause and the fix) that line is dropped; a bug keeps its stack.
 */
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

/** The host's lines for errors thrown by {@link withoutStackTrace}, each dropped once; bounded. */
const pending = new Set<string>();
let filtering = false;

export function takeHostLine(line: string): boolean {
  return pending.delete(line);
}

/** The error to throw from an operation whose errors the host prints: an expected failure is registered so its line is dropped. */
export function withoutStackTrace(error: unknown): unknown {
  if (!isExpectedFailure(error)) return error;
  if (!filtering) {
    filtering = true;
    const original = console.error.bind(console);
    console.error = (...args: unknown[]): void => {
      if (args.length === 1 && typeof args[0] === "string" && takeHostLine(args[0])) return;
      original(...args);
    };
  }
  if (pending.size >= 10_000) pending.clear();
  // What the host prints: `${e}: ${e.stack}` (node_modules/@pulumi/pulumi/cmd/dynamic-provider).
  pending.add(`${String(error)}: ${error.stack ?? ""}`);
  return error;
}

/** Throws {@link withoutStackTrace}'s error: a `catch` handler. */
export function throwWithoutStackTrace(error: unknown): never {
  throw withoutStackTrace(error);
}
