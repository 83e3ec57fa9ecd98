/**
 * The hook's one logger, over the Azure SDKs' `@azure/logger`: one switch (`AZURE_LOG_LEVEL`) for
 * the hook and the SDK clients it drives; lines go to the provider host's stderr, none by default.
 * Lines read `<operation> <subject> => <message>`. Never log keys, tokens or whole documents:
 * subjects are ARM IDs and Cosmos document ids, and messages come from redacted errors
 * (core/retrievalError.ts redactSecrets).
 */
import { createClientLogger } from "@azure/logger";

const logger = createClientLogger("aro-hcp-identity-status");

export type LogLevel = "info" | "warning" | "verbose";

/** Writes one line, e.g. `log("info", "sync", clusterId, "wrote 3 identities")`. */
export function log(level: LogLevel, operation: string, subject: string, message: string): void {
  logger[level](`${operation} ${subject} => ${message}`);
}
