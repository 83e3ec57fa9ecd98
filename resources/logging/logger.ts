/** The logger over `@azure/logger` (`AZURE_LOG_LEVEL`, stderr, off by default): `<operation> <subject> => <message>`; never keys, tokens or documents. */
import { createClientLogger } from "@azure/logger";

const logger = createClientLogger("aro-hcp-identity-status");

export type LogLevel = "info" | "warning" | "verbose";

/** Writes one line, e.g. `log("info", "sync", clusterId, "wrote 3 identities")`. */
export function log(level: LogLevel, operation: string, subject: string, message: string): void {
  logger[level](`${operation} ${subject} => ${message}`);
}
