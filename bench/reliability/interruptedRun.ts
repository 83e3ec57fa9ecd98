/**
 * Interrupting `pulumi up` the hard way (SIGKILL of the CLI and the provider host) and recovering
 * from what the 3.248 engine leaves behind with the file backend:
 *
 * - a lock file `<state>/.pulumi/locks/organization/<project>/<stack>/<uuid>.json` holding the
 *   CLI's pid, user, host and start time: every later update fails with "the stack is currently
 *   locked by 1 lock(s)" until it is removed (`pulumi cancel` removes it for the file backend);
 * - `pending_operations` of type "creating" (or "updating"/"deleting") in the checkpoint: `up`
 *   proceeds with a warning and redoes the work (our create and update are idempotent), but the
 *   entries stay in the checkpoint, and the warning with them, until
 *   `pulumi refresh --clear-pending-creates` (or an export/edit/import) clears them.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { EngineStack } from "./engineStack";

/** A running process below this one. */
export interface ChildProcessInfo {
  readonly pid: number;
  readonly command: string;
}

/** Every descendant of `pid`, from `ps`. */
export function descendantProcesses(pid: number): ChildProcessInfo[] {
  const rows = execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ pid: Number(match[1]), parent: Number(match[2]), command: match[3] ?? "" }));
  const result: ChildProcessInfo[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift();
    for (const row of rows) {
      if (row.parent === parent) {
        result.push({ pid: row.pid, command: row.command });
        queue.push(row.pid);
      }
    }
  }
  return result;
}

/** The engine processes an update runs: the `pulumi` CLI and the dynamic-provider host. */
export function engineProcesses(): { cli: ChildProcessInfo[]; providerHosts: ChildProcessInfo[] } {
  const descendants = descendantProcesses(process.pid);
  return {
    cli: descendants.filter((child) => /\/bin\/pulumi (up|refresh|destroy|preview)\b/.test(child.command)),
    providerHosts: descendants.filter((child) => child.command.includes("cmd/dynamic-provider")),
  };
}

/** The lock files of a file-backend state directory, with what they say. */
export function stackLocks(stateDirectory: string): Array<{ path: string; pid: number | undefined; hostname: string | undefined }> {
  const root = join(stateDirectory, ".pulumi", "locks");
  const found: Array<{ path: string; pid: number | undefined; hostname: string | undefined }> = [];
  const walk = (directory: string): void => {
    if (!existsSync(directory)) return;
    for (const entry of readdirSync(directory)) {
      const path = join(directory, entry);
      if (statSync(path).isDirectory()) {
        walk(path);
      } else if (entry.endsWith(".json")) {
        const lock = JSON.parse(readFileSync(path, "utf8")) as { pid?: number; hostname?: string };
        found.push({ path, pid: lock.pid, hostname: lock.hostname });
      }
    }
  };
  walk(root);
  return found;
}

/** True while a process of that id exists (signal 0 checks without sending anything). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pending operations of the stack's current checkpoint, as `<type> <resource name>`. */
export async function pendingOperations(engineStack: EngineStack): Promise<string[]> {
  const exported = await engineStack.stack.exportStack();
  const deployment = exported.deployment as { pending_operations?: Array<{ type: string; resource: { urn: string } }> };
  return (deployment.pending_operations ?? []).map((operation) => `${operation.type} ${operation.resource.urn.split("::").pop() ?? ""}`);
}

/** What {@link recoverInterruptedStack} found and did. */
export interface RecoveryReport {
  readonly staleLocks: number;
  readonly pendingOperationsCleared: readonly string[];
  readonly steps: readonly string[];
}

/**
 * Makes an interrupted stack usable again, refusing while the update that holds the lock still
 * runs on this host:
 * 1. each lock whose process is gone (same host, pid not alive) is removed with `pulumi cancel`;
 * 2. pending operations are cleared with `pulumi refresh --clear-pending-creates`, which also
 *    reads every resource back from Cosmos.
 * The next `up` then redoes whatever the interrupted run did not finish.
 * @throws Error when a lock belongs to a live process or to another host.
 */
export async function recoverInterruptedStack(engineStack: EngineStack): Promise<RecoveryReport> {
  const steps: string[] = [];
  const locks = stackLocks(engineStack.stateDirectory);
  for (const lock of locks) {
    if (lock.hostname !== hostname()) {
      throw new Error(`stack lock ${lock.path} was taken on host ${String(lock.hostname)}; check that update there has ended, then run 'pulumi cancel'`);
    }
    if (lock.pid !== undefined && processIsAlive(lock.pid)) {
      throw new Error(`stack lock ${lock.path} belongs to pid ${lock.pid}, which is still running; wait for it or stop it first`);
    }
  }
  if (locks.length > 0) {
    await engineStack.stack.cancel();
    steps.push(`removed ${locks.length} stale lock(s) with 'pulumi cancel'`);
  }
  const pending = await pendingOperations(engineStack);
  if (pending.length > 0) {
    await engineStack.stack.refresh({ color: "never", clearPendingCreates: true });
    steps.push(`cleared ${pending.length} pending operation(s) with 'pulumi refresh --clear-pending-creates'`);
    const left = await pendingOperations(engineStack);
    if (left.length > 0) {
      throw new Error(`pending operations remain after refresh --clear-pending-creates: ${left.join(", ")}`);
    }
  }
  return { staleLocks: locks.length, pendingOperationsCleared: pending, steps };
}
