/**
 * The stack config as the provider's `configure` receives it, and the check that refuses keys of
 * the project's namespace that nobody reads (a typo would otherwise be ignored silently).
 */
import { SettingsError, projectName, settingsKeys } from "./settingsKeys";

/**
 * Keys of the same namespace that the program (index.ts) reads, not the provider: `clusters`,
 * `clustersFile`, `allowEmptyFleet` (program/emptyFleet.ts) and `allowClusterRemovals` (program/clusterRemovals.ts). Known here so that the provider,
 * which receives the whole stack config, does not refuse them as typos.
 */
export const programKeys: readonly string[] = ["clusters", "clustersFile", "allowEmptyFleet", "allowClusterRemovals"];

/**
 * The stack config as the provider host hands it to `configure`. `get` takes a full key
 * (`<namespace>:<key>`). The host's object also carries every key of the stack in `rawConfig`
 * (@pulumi/pulumi 3.248 `cmd/dynamic-provider/config.js`); it is optional here because it is not
 * part of the typed contract, and the unknown-key check is skipped without it.
 */
export interface StackConfig {
  get(key: string): string | undefined;
  readonly rawConfig?: Readonly<Record<string, unknown>>;
}

/**
 * Takes the provider's keys out of the stack config `configure` receives, always from the
 * `aro-hcp-identity-status:` namespace (the host would otherwise prefix keys with the name of the
 * running project, which differs when another program uses this resource).
 * @throws SettingsError naming every key of that namespace that neither the provider nor the
 * program reads (a typo would otherwise be ignored silently), and listing the known keys.
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
