/**
 * The hook's one logger, over the Azure SDKs' own `@azure/logger`: one switch for the hook and
 * the SDK clients it drives. Lines go to the provider host's stderr when `AZURE_LOG_LEVEL` is
 * `info` (normal flow: which cluster, which document, what was decided), `warning` (failures and
 * retries) or `verbose` (details such as each poll); nothing is printed by default.
 *
 * Lines read `<operation> <subject> => <message>`. Never log keys, tokens or whole documents:
 * subjects are ARM IDs and Cosmos document ids, and messages come from errors that were already
 * redacted (core/identityStatus.ts redactSecrets).
 */
import { createClientLogger } from "@azure/logger";

const logger = createClientLogger("aro-hcp-identity-status");

/** The levels this hook writes at. */
export type LogLevel = "info" | "warning" | "verbose";

/** Writes one line, e.g. `log("info", "sync", clusterId, "wrote 3 identities")`. */
export function log(level: LogLevel, operation: string, subject: string, message: string): void {
  logger[level](`${operation} ${subject} => ${message}`);
}
