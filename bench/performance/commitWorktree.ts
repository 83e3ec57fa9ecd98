/**
 * A commit of this repository checked out and built where the comparison (commitComparison.ts) can
 * run its program and provider: a detached git worktree in a temporary directory, its npm packages
 * installed from its own lock file (`npm ci`, preferring the npm cache this checkout's setup
 * warmed) and its TypeScript compiled with its own compiler and configuration. The Pulumi CLI is not
 * built again: it is this checkout's (.cache/pulumi), which is only right when the commit pins the
 * same @pulumi/pulumi, so a commit that pins another is refused.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** A commit built in a worktree of its own. */
export interface CommitWorktree {
  /** As given on the command line (`HEAD~1`, a branch, a hash). */
  readonly name: string;
  readonly commit: string;
  /** The commit's subject line. */
  readonly subject: string;
  /** The worktree: its dist/, node_modules, Pulumi.yaml and index.ts are what runs. */
  readonly directory: string;
  /** Removes the worktree (and its node_modules and dist). */
  remove(): Promise<void>;
}

/** Runs a command, resolving with its standard output; a failure names the command and its last output. */
function run(command: string, commandArguments: readonly string[], directory: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, [...commandArguments], { cwd: directory, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout);
      else reject(new Error(`${command} ${commandArguments.join(" ")} (in ${directory}) failed: ${(stderr || stdout).trim().slice(-4000) || error.message}`));
    });
  });
}

/** The @pulumi/pulumi a checkout pins (package.json devDependencies). */
export function pinnedPulumiVersion(checkout: string): string | undefined {
  const manifest = JSON.parse(readFileSync(join(checkout, "package.json"), "utf8")) as { devDependencies?: Record<string, string> };
  return manifest.devDependencies?.["@pulumi/pulumi"];
}

/**
 * Checks out `name` (any commit git can name in `repository`) into `directory`, installs and
 * builds it. The worktree is removed again if any step fails.
 */
export async function buildCommitWorktree(options: {
  readonly repository: string;
  readonly name: string;
  readonly directory: string;
  /** The Pulumi CLI's version this checkout built: the commit must pin the same. */
  readonly pulumiVersion: string;
  readonly log: (line: string) => void;
}): Promise<CommitWorktree> {
  const { repository, name, directory, log } = options;
  const commit = (await run("git", ["rev-parse", "--verify", `${name}^{commit}`], repository)).trim();
  const subject = (await run("git", ["log", "-1", "--format=%s", commit], repository)).trim();
  await run("git", ["worktree", "add", "--detach", directory, commit], repository);
  const remove = async (): Promise<void> => {
    await run("git", ["worktree", "remove", "--force", directory], repository);
  };
  try {
    const pinned = pinnedPulumiVersion(directory);
    if (pinned !== options.pulumiVersion) {
      throw new Error(
        `${name} (${commit.slice(0, 12)}) pins @pulumi/pulumi ${pinned ?? "(none)"}, and this checkout's CLI is ${options.pulumiVersion}: compare commits that pin the CLI this checkout built`,
      );
    }
    log(`  ${name} = ${commit.slice(0, 12)} "${subject}": npm ci and tsc in ${directory}`);
    const started = Date.now();
    await run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], directory);
    await run(join(directory, "node_modules", ".bin", "tsc"), ["-p", "tsconfig.build.json"], directory);
    log(`  ${name} built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } catch (error) {
    await remove().catch(() => undefined);
    throw error;
  }
  return { name, commit, subject, directory, remove };
}
