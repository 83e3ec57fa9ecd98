/**
 * Stack settings files left behind by the earlier wrapper. Until the wrapper ran in the project
 * directory (as the literal CLI does), `npm run pulumi` kept `Pulumi.<stack>.yaml` in
 * `.pulumi/work/`. Such a file holds the stack's config and its encryption salt; without it the
 * stack looks unconfigured and a new salt would be written. The wrapper moves it next to
 * Pulumi.yaml once, and says so.
 */
import { existsSync, renameSync } from "node:fs";
import { join } from "node:path";

/** The stack settings file name Pulumi uses: the last segment of an org/project/stack name. */
export function stackSettingsFileName(stackName: string): string {
  return `Pulumi.${stackName.split("/").pop() ?? stackName}.yaml`;
}

/**
 * Moves `.pulumi/work/Pulumi.<stack>.yaml` to the project directory when only the old one exists.
 * @returns a line to show the user when a file was moved, else undefined.
 */
export function adoptOldStackSettingsFile(projectDirectory: string, stackName: string): string | undefined {
  const fileName = stackSettingsFileName(stackName);
  const current = join(projectDirectory, fileName);
  const old = join(projectDirectory, ".pulumi", "work", fileName);
  if (existsSync(current) || !existsSync(old)) {
    return undefined;
  }
  renameSync(old, current);
  return `moved ${old} to ${current}: stack settings now live next to Pulumi.yaml, where the pulumi CLI reads them`;
}
