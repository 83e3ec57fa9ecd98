/** `npm run pulumi -- … --otel-traces=…` (cli/otelTraces.ts): the flag goes to the commands that run the program, and only to them. */
import { describe, expect, it } from "vitest";
import type * as automation from "@pulumi/pulumi/automation";
import { tracingCommand, withOtelTracesFlag } from "../../cli/otelTraces";

describe("withOtelTracesFlag", () => {
  it("adds the flag to preview, up, refresh and destroy, and to no other command", () => {
    for (const command of ["preview", "up", "refresh", "destroy"]) {
      expect(withOtelTracesFlag([command, "--yes"], "grpc://collector:4317")).toEqual([command, "--yes", "--otel-traces=grpc://collector:4317"]);
    }
    for (const args of [["stack", "select", "dev"], ["config", "set", "key", "value"], []]) {
      expect(withOtelTracesFlag(args, "file:///tmp/run.json")).toEqual(args);
    }
  });

  it("hands the Automation API a command whose runs carry the flag, the rest of the command unchanged", () => {
    const runs: unknown[][] = [];
    const command = { command: "/bin/pulumi", version: null, run: (...args: unknown[]) => runs.push(args) } as unknown as automation.PulumiCommand;
    const traced = tracingCommand(command, "file:///tmp/run.json") as unknown as { command: string; run: (...args: unknown[]) => unknown };
    expect(traced.command).toBe("/bin/pulumi");
    traced.run(["up", "--yes"], "/work", {});
    traced.run(["stack", "select", "dev"], "/work", {});
    expect(runs).toEqual([
      [["up", "--yes", "--otel-traces=file:///tmp/run.json"], "/work", {}],
      [["stack", "select", "dev"], "/work", {}],
    ]);
  });
});
