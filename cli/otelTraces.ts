/**
 * `npm run pulumi -- <preview|up|refresh|destroy> --otel-traces=<file://…|grpc://…>`: the Automation
 * API of @pulumi/pulumi 3.248 has no option for the CLI's `--otel-traces` flag, so the wrapper hands
 * it a command that adds the flag to the program commands it runs (and to nothing else: `stack
 * select`, `config` and the like take no traces). The engine then does what it does for the literal
 * CLI: it starts its OTLP receiver, hands it to the provider host, and writes or forwards the spans
 * (docs/operations.md, "Traces").
 */
import type * as automation from "@pulumi/pulumi/automation";

/** The Automation API's commands that run the program, and so the provider. */
const tracedCommands = new Set(["preview", "up", "refresh", "destroy"]);

/** The arguments of one CLI run, with `--otel-traces=<url>` when it runs the program. */
export function withOtelTracesFlag(args: readonly string[], url: string): string[] {
  return tracedCommands.has(args[0] ?? "") ? [...args, `--otel-traces=${url}`] : [...args];
}

/** How the Automation API runs the CLI: `run(args, …)`, public in its JavaScript, left out of its types. */
interface RunsCommands {
  run(args: string[], ...rest: unknown[]): unknown;
}

/** The command, its program commands run with `--otel-traces=<url>`. */
export function tracingCommand(command: automation.PulumiCommand, url: string): automation.PulumiCommand {
  const runs = command as unknown as RunsCommands;
  if (typeof runs.run !== "function")
    throw new Error("this @pulumi/pulumi's PulumiCommand has no run(): --otel-traces cannot be passed through the Automation API");
  return Object.create(command, {
    run: { value: (args: string[], ...rest: unknown[]) => runs.run.call(command, withOtelTracesFlag(args, url), ...rest) },
  }) as automation.PulumiCommand;
}
