/**
 * The fleet scenario's sandbox in a process of its own, as Azure is to a real run: its CPU is
 * counted apart, and its event loop is not the inline program's.
 *
 * Why: the engine runs the project's program inline in the benchmark process (as the wrapper
 * does). With the sandbox there too, the program's declarations and its SDK's promise hooks
 * (AsyncLocalStorage) delay every answer of the sandbox, and the sandbox's work delays the program;
 * the plain-script floor, whose worker is another process, had the sandbox's event loop to itself.
 * Measured at 2,000 clusters in docs/performance.md.
 *
 * Run as a child (`fork`), this file starts a benchmark sandbox and answers the requests of
 * {@link startSandboxProcess} over the IPC channel; it stops the sandbox and exits when asked or
 * when its parent goes away.
 */
import { fork } from "node:child_process";
import { join } from "node:path";
import { projectDirectory } from "../../cli/engine";
import type { SandboxStatisticsSnapshot } from "../../sandbox/sandboxStatistics";
import type { FleetClusterDescription, FleetSize, TenantFleetSize } from "../../sandbox/seed";
import { seedFleet, seedTenantFleet } from "../../sandbox/seed";
import type { BenchmarkSandbox, BenchmarkSandboxOptions } from "./benchmarkSandbox";
import { startBenchmarkSandbox } from "./benchmarkSandbox";
import { countResolvedInCosmos } from "./sandboxDocuments";
import { processCpuTimeInMs } from "./statistics";

/** What the fleet scenario does with its sandbox, wherever the sandbox runs. */
export interface FleetSandbox extends Pick<BenchmarkSandbox, "config" | "environment" | "settingsEnvironment"> {
  /** The sandbox's process. */
  readonly pid: number;
  /** Seeds the fleet (sandbox/seed.ts) and keeps it for {@link countResolved}. */
  seedFleet(size: FleetSize): Promise<FleetClusterDescription[]>;
  /** Seeds one tenant and subscription per cluster (seedTenantFleet; a per-cluster sandbox only), kept like {@link seedFleet}'s. */
  seedTenantFleet(size: TenantFleetSize): Promise<FleetClusterDescription[]>;
  /**
   * Issues every seeded cluster's SMI certificate now (sandboxCredentials.ts issueClusterCredentials),
   * so that no run pays for it, and says how many it issued in how long.
   */
  issueClusterCredentials(): Promise<{ readonly issued: number; readonly timeInMs: number; readonly cpuTimeInMs: number }>;
  /** Remembers every stored document, for {@link restoreDocuments}. */
  saveDocuments(): Promise<void>;
  /** Puts back the documents {@link saveDocuments} remembered. */
  restoreDocuments(): Promise<void>;
  resetStatistics(): Promise<void>;
  statistics(): Promise<SandboxStatisticsSnapshot>;
  clearFaults(): Promise<void>;
  /** Identities of the seeded fleet whose IDs in Cosmos match ARM (countResolvedInCosmos). */
  countResolved(): Promise<number>;
  /** CPU time of the sandbox's process so far, in milliseconds. */
  cpuTimeInMs(): Promise<number>;
  stop(): Promise<void>;
}

type Operation =
  | "seedFleet"
  | "seedTenantFleet"
  | "issueClusterCredentials"
  | "saveDocuments"
  | "restoreDocuments"
  | "resetStatistics"
  | "statistics"
  | "clearFaults"
  | "countResolved"
  | "cpuTime"
  | "stop";

interface Request {
  readonly id: number;
  readonly operation: Operation;
  readonly argument?: unknown;
}

interface Answer {
  readonly id: number;
  readonly result?: unknown;
  readonly error?: string;
}

interface Ready {
  readonly ready: Pick<BenchmarkSandbox, "config" | "environment" | "settingsEnvironment">;
}

/** Starts the sandbox in a child process and waits until it listens. */
export async function startSandboxProcess(options: BenchmarkSandboxOptions): Promise<FleetSandbox> {
  const child = fork(join(projectDirectory, "dist", "bench", "performance", "sandboxProcess.js"), [JSON.stringify(options)], {
    cwd: projectDirectory,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  let exited: Error | undefined;
  const ready = new Promise<Ready["ready"]>((resolve, reject) => {
    child.on("message", (message: Ready | Answer) => {
      if ("ready" in message) {
        resolve(message.ready);
        return;
      }
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.error === undefined) waiter?.resolve(message.result);
      else waiter?.reject(new Error(`sandbox process: ${message.error}`));
    });
    child.on("exit", (code, signal) => {
      exited = new Error(`sandbox process exited (${signal ?? `code ${code}`})`);
      reject(exited);
      for (const waiter of pending.values()) waiter.reject(exited);
      pending.clear();
    });
  });
  const call = <T>(operation: Operation, argument?: unknown): Promise<T> => {
    if (exited !== undefined) return Promise.reject(exited);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ id, operation, argument } satisfies Request);
    });
  };
  let connection: Ready["ready"];
  try {
    connection = await ready;
  } catch (error) {
    child.kill();
    throw error;
  }
  return {
    ...connection,
    pid: child.pid ?? 0,
    seedFleet: (size) => call("seedFleet", size),
    seedTenantFleet: (size) => call("seedTenantFleet", size),
    issueClusterCredentials: () => call("issueClusterCredentials"),
    saveDocuments: () => call("saveDocuments"),
    restoreDocuments: () => call("restoreDocuments"),
    resetStatistics: () => call("resetStatistics"),
    statistics: () => call("statistics"),
    clearFaults: () => call("clearFaults"),
    countResolved: () => call("countResolved"),
    cpuTimeInMs: () => call("cpuTime"),
    async stop() {
      if (exited !== undefined) return;
      const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      await call("stop").catch(() => undefined);
      await gone;
    },
  };
}

/** The child's side: one sandbox, answering until told to stop. */
async function serve(process: NodeJS.Process & { send: NonNullable<NodeJS.Process["send"]> }): Promise<void> {
  const benchmark = await startBenchmarkSandbox(JSON.parse(process.argv[2] ?? "{}") as BenchmarkSandboxOptions);
  const { sandbox } = benchmark;
  let fleet: FleetClusterDescription[] = [];
  let saved: ReturnType<typeof sandbox.documents.list> = [];
  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await sandbox.stop();
    process.exit(0);
  };
  const operations: Record<Operation, (argument: unknown) => unknown> = {
    seedFleet: (size) => (fleet = seedFleet(sandbox, size as FleetSize)),
    seedTenantFleet: (size) => (fleet = seedTenantFleet(sandbox, size as TenantFleetSize)),
    issueClusterCredentials: async () => {
      const started = performance.now();
      const cpuBefore = processCpuTimeInMs();
      const issued = await sandbox.credentials.issueClusterCredentials(sandbox.identities);
      return { issued, timeInMs: performance.now() - started, cpuTimeInMs: processCpuTimeInMs() - cpuBefore };
    },
    saveDocuments: () => void (saved = sandbox.documents.list()),
    restoreDocuments: () => sandbox.documents.putMany(saved),
    resetStatistics: () => sandbox.statistics.reset(),
    statistics: () => sandbox.statistics.snapshot(),
    clearFaults: () => sandbox.faults.clear(),
    countResolved: () => countResolvedInCosmos(sandbox, fleet),
    cpuTime: processCpuTimeInMs,
    stop: () => undefined,
  };
  process.on("message", (request: Request) => {
    const answered = (answer: Answer): void => {
      process.send(answer, undefined, undefined, () => {
        if (request.operation === "stop") void stop();
      });
    };
    const failed = (error: unknown): void => answered({ id: request.id, error: error instanceof Error ? error.message : String(error) });
    try {
      // An operation may answer later (issueClusterCredentials).
      Promise.resolve(operations[request.operation](request.argument)).then(
        (result) => answered({ id: request.id, result: result === undefined ? null : result }),
        failed,
      );
    } catch (error) {
      failed(error);
    }
  });
  // The benchmark went away without stopping us: do not outlive it.
  process.on("disconnect", () => void stop());
  process.send({ ready: { config: benchmark.config, environment: benchmark.environment, settingsEnvironment: benchmark.settingsEnvironment } } satisfies Ready);
}

if (require.main === module) {
  if (process.send === undefined) {
    process.stderr.write("sandboxProcess.js runs as a child of the benchmark (fork), with an IPC channel\n");
    process.exit(2);
  }
  serve(process as NodeJS.Process & { send: NonNullable<NodeJS.Process["send"]> }).catch((error: unknown) => {
    process.stderr.write(`sandbox process: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
