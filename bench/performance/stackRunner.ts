/**
 * One engine operation (`up` or `refresh`) of one stack in a Node process of its own, with the
 * program, the Automation API and the provider host all taken from one checkout: the comparison of
 * two commits (commitComparison.ts) runs each commit's program and provider this way, and the
 * engine floor's too, so that all three sides start alike.
 *
 * Why a process per operation: an inline program must run beside the copy of @pulumi/pulumi it
 * registers with, and each commit has its own node_modules; a fresh process per operation is also
 * how a user's `pulumi up` runs, and leaves no run's graph behind (inlineRunMemory.ts).
 *
 * The parent side ({@link runStackOperation}) watches the child's engine and provider host as
 * benchmarkStack.ts does (providerHostMonitor.ts: they are below this process); the child times
 * the operation itself and reports its own CPU meanwhile, which is the program's.
 */
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import type * as automation from "@pulumi/pulumi/automation";
import type { EngineRun } from "./benchmarkStack";
import { tracingCommand } from "../../cli/otelTraces";
import { monitorProviderHosts } from "./providerHostMonitor";

// Nothing here imports a module that loads @pulumi/pulumi (cli/engine.ts does): in the child, the
// only copy of the SDK must be the checkout's.
/** The comparing checkout (this file compiles to dist/bench/performance/stackRunner.js). */
const comparingCheckout = resolve(__dirname, "..", "..", "..");

/** What the child is asked to do. */
export interface StackRunRequest {
  /** The checkout whose program, Pulumi.yaml, node_modules and provider run. */
  readonly checkout: string;
  /** The checkout's own program (its dist/index.js), or this checkout's engine floor (engineFloor.ts). */
  readonly program: "project" | "engineFloor";
  /** The Pulumi CLI's root directory (engineCommand). */
  readonly engineRoot: string;
  readonly stackName: string;
  /** The Pulumi project's name (Pulumi.yaml); config keys without a namespace are its. */
  readonly projectName: string;
  /** Holds the stack's state, Pulumi home and work directory; the same directory selects the same stack. */
  readonly stackDirectory: string;
  /** Stack config: keys without a namespace are the project's; `clusters` is stored as an empty list. */
  readonly config: Readonly<Record<string, string>>;
  /** The engine's and the provider host's environment (cli/engine.ts engineEnvironment). */
  readonly environment: Readonly<Record<string, string>>;
  readonly operation: "up" | "refresh";
  readonly parallel?: number;
  /** Also report the size of the stack's state after the operation (not timed). */
  readonly exportState?: boolean;
  /** Runs the operation with Pulumi's `--otel-traces=<this>` (cli/otelTraces.ts). */
  readonly otelTraces?: string;
}

/** What the child reports. */
interface StackRunAnswer {
  readonly wallTimeInMs: number;
  readonly programCpuTimeInMs: number;
  readonly resourceChanges: Readonly<Record<string, number>>;
  readonly checkpointBytes?: number;
}

/** An engine run made by {@link runStackOperation}; `benchProcessCpuTimeInMs` is the child's, which ran the program. */
export interface StackRun extends EngineRun {
  readonly checkpointBytes?: number;
}

const childScript = join(__dirname, "stackRunner.js");

/** Runs one operation in a child process and watches its engine and provider host meanwhile. */
export async function runStackOperation(request: StackRunRequest): Promise<StackRun> {
  mkdirSync(request.stackDirectory, { recursive: true });
  const requestFile = join(request.stackDirectory, "request.json");
  const answerFile = join(request.stackDirectory, "answer.json");
  writeFileSync(requestFile, JSON.stringify(request));
  rmSync(answerFile, { force: true });
  const monitor = monitorProviderHosts();
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(
        process.execPath,
        [childScript, requestFile, answerFile],
        { cwd: request.checkout, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" }, maxBuffer: 64 * 1024 * 1024 },
        (error, _stdout, stderr) =>
          error === null
            ? resolve()
            : reject(new Error(`${request.operation} of ${request.stackName} (${request.checkout}) failed: ${stderr.trim().slice(-4000) || error.message}`)),
      );
    });
  } finally {
    monitor.stop();
  }
  const host = monitor.stop();
  const answer = JSON.parse(readFileSync(answerFile, "utf8")) as StackRunAnswer;
  return {
    wallTimeInMs: answer.wallTimeInMs,
    host,
    resourceChanges: answer.resourceChanges,
    benchProcessCpuTimeInMs: answer.programCpuTimeInMs,
    ...(answer.checkpointBytes === undefined ? {} : { checkpointBytes: answer.checkpointBytes }),
  };
}

/** The child's side: open (or select) the stack from the checkout, run the operation, write the answer. */
async function runChild(requestFile: string, answerFile: string): Promise<void> {
  const request = JSON.parse(readFileSync(requestFile, "utf8")) as StackRunRequest;
  // The Automation API and the program from the same node_modules, so that they share one SDK.
  const checkoutRequire = createRequire(join(request.checkout, "package.json"));
  const pulumiAutomation = checkoutRequire("@pulumi/pulumi/automation") as typeof automation;
  let program: automation.PulumiFn;
  if (request.program === "project") {
    program = checkoutRequire("./dist/index.js") as automation.PulumiFn;
  } else {
    if (resolve(request.checkout) !== comparingCheckout) throw new Error("the engine floor runs from the comparing checkout only");
    // Loaded only here: engineFloor.ts loads this checkout's @pulumi/pulumi, which must not load beside a commit's.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    program = (require("./engineFloor") as typeof import("./engineFloor")).trivialFleetProgram;
  }
  const paths = { state: join(request.stackDirectory, "state"), home: join(request.stackDirectory, "home"), work: join(request.stackDirectory, "work") };
  for (const directory of Object.values(paths)) mkdirSync(directory, { recursive: true });
  // The CLI wants the project file, and its `main`, in the work directory even for an inline program.
  for (const file of ["Pulumi.yaml", "index.ts"]) {
    rmSync(join(paths.work, file), { force: true });
    symlinkSync(join(request.checkout, file), join(paths.work, file));
  }
  const stack = await pulumiAutomation.LocalWorkspace.createOrSelectStack(
    { stackName: request.stackName, projectName: request.projectName, program },
    {
      workDir: paths.work,
      pulumiHome: paths.home,
      pulumiCommand: await pulumiAutomation.PulumiCommand.get({ root: request.engineRoot }).then((command) =>
        request.otelTraces === undefined ? command : tracingCommand(command, request.otelTraces),
      ),
      envVars: { ...request.environment, PULUMI_BACKEND_URL: `file://${paths.state}`, PULUMI_HOME: paths.home },
    },
  );
  const config: Record<string, unknown> = { [`${request.projectName}:clusters`]: [] };
  for (const [key, value] of Object.entries(request.config)) {
    if (key !== "clusters") config[key.includes(":") ? key : `${request.projectName}:${key}`] = value;
  }
  await stack.workspace.saveStackSettings(stack.name, { config });
  const options = request.parallel === undefined ? {} : { parallel: request.parallel };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const result = request.operation === "up" ? await stack.up(options) : await stack.refresh(options);
  const wallTimeInMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const answer: StackRunAnswer = {
    wallTimeInMs,
    programCpuTimeInMs: (cpu.user + cpu.system) / 1000,
    resourceChanges: { ...(result.summary.resourceChanges ?? {}) },
    ...(request.exportState === true ? { checkpointBytes: Buffer.byteLength(JSON.stringify(await stack.exportStack())) } : {}),
  };
  writeFileSync(answerFile, JSON.stringify(answer));
}

if (require.main === module) {
  const [requestFile, answerFile] = process.argv.slice(2);
  runChild(requestFile, answerFile).then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`stackRunner: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
