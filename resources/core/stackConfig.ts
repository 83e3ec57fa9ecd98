/** The stack config `configure` receives, and the refusal of keys of the project's namespace that nobody reads (a typo). */
import { SettingsError, projectName, settingsKeys } from "./settingsKeys";

/** Keys of the same namespace that the program (index.ts, program/) reads, not the provider: known so that the provider does not refuse them. */
export const programKeys: readonly string[] = ["clusters", "clustersFile", "allowEmptyFleet", "allowClusterRemovals"];

/** The stack config as the host hands it to `configure`; without `rawConfig` the unknown-key check is skipped. */
export interface StackConfig {
  get(key: string): string | undefined;
  readonly rawConfig?: Readonly<Record<string, unknown>>;
}

/** The provider's keys, always from the `aro-hcp-identity-status:` namespace; throws naming every key of it nobody reads. */
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
