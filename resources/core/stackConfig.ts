/**
 * The stack config as the provider's `configure` receives it, and the check that refuses keys of
 * the project's namespace that nobody reads (a typo would otherwise be ignored silently).
 */
import { SettingsError, projectName, settingsKeys } from "./settingsKeys";

/** Keys of the same namespace that the program (index.ts, program/) reads, not the provider: known so that the provider does not refuse them. */
export const programKeys: readonly string[] = ["clusters", "clustersFile", "allowEmptyFleet", "allowClusterRemovals"];

/**
 * The stack config as the provider host hands it to `configure`; `get` takes a full key. The
 * host's object also carries every key in `rawConfig`, which is not part of the typed contract:
 * without it, the unknown-key check is skipped.
 */
export interface StackConfig {
  get(key: string): string | undefined;
  readonly rawConfig?: Readonly<Record<string, unknown>>;
}

/**
 * Takes the provider's keys out of the stack config, always from the `aro-hcp-identity-status:`
 * namespace (the host would otherwise prefix keys with the name of the running project).
 * @throws SettingsError naming every key of that namespace that neither the provider nor the program reads.
 */
export function snapshotStackConfig(config: StackConfig): Record<string, string | undefined> {
  const rawKeys = config.rawConfig === undefined ? [] : Object.keys(config.rawConfig);
  const prefix = `${projectName}:`;
  const known = new Set([...settingsKeys, ...programKeys]);
  const unknown = rawKeys.filter((key) => key.startsWith(prefix) && !known.has(key.slice(prefix.length))).sort();
  if (unknown.length > 0) {
    throw new SettingsError(
      `unknown config key${unknown.length === 1 ? "" : "s"} ` +
        `${unknown.map((key) => `'${key}'`).join(", ")}; the known keys of the '${projectName}' namespace are ${[...known].sort().join(", ")} ` +
        `(remove it with \`pulumi config rm <key>\`)`,
    );
  }
  const snapshot: Record<string, string | undefined> = {};
  for (const key of settingsKeys) {
    snapshot[key] = config.get(`${prefix}${key}`);
  }
  return snapshot;
}
