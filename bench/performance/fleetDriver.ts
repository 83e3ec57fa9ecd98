/**
 * The fleet driver the engine scenarios run on: a started sandbox, the fleet seeded in it
 * (sandbox/seed.ts), fresh stacks declaring all of that fleet or part of it, and at the end every
 * stack still there removed and the sandbox stopped, whether the scenario succeeded or not.
 */
import type * as automation from "@pulumi/pulumi/automation";
import type { EngineCommand } from "../../cli/engine";
import { clusterDeclaration } from "../clusterDeclaration";
import type { ClusterDeclaration } from "../../program/fleet";
import type { FleetClusterDescription } from "../../sandbox/seed";
import type { BenchmarkSandbox, BenchmarkSandboxOptions } from "./benchmarkSandbox";
import type { BenchmarkStack } from "./benchmarkStack";
import { openBenchmarkStack } from "./benchmarkStack";

/** A sandbox a stack can point at, in this process (benchmarkSandbox.ts) or in its own (sandboxProcess.ts). */
export type StackSandbox = Pick<BenchmarkSandbox, "config" | "environment" | "stop">;

/** What a scenario drives. */
export interface FleetDriver<Sandbox extends StackSandbox> {
  readonly sandbox: Sandbox;
  readonly fleet: readonly FleetClusterDescription[];
  /** The whole fleet as the program declares it (clusterDeclaration.ts). */
  readonly declarations: readonly ClusterDeclaration[];
  /**
   * A fresh stack of the project's program (or `program`) declaring `clusters`, the whole fleet
   * when omitted, with `environment` added to the engine's and the provider host's.
   */
  openStack(
    name: string,
    options?: {
      readonly clusters?: readonly ClusterDeclaration[];
      readonly environment?: Readonly<Record<string, string>>;
      readonly program?: automation.PulumiFn;
    },
  ): Promise<BenchmarkStack>;
}

/** A sandbox whose ARM and Cosmos requests both take `armLatencyInMs`. */
export function sameLatency(options: { readonly armLatencyInMs: number; readonly lookupConcurrency: number }): BenchmarkSandboxOptions {
  return { armLatencyInMs: options.armLatencyInMs, cosmosLatencyInMs: options.armLatencyInMs, lookupConcurrency: options.lookupConcurrency };
}

/** Where a driver's fleet is: the engine, the started sandbox, and how to seed the fleet in it. */
export interface FleetDriverOptions<Sandbox extends StackSandbox> {
  readonly engine: EngineCommand;
  readonly sandbox: Sandbox;
  readonly seed: (sandbox: Sandbox) => FleetClusterDescription[] | Promise<FleetClusterDescription[]>;
}

/** Seeds the fleet, runs `scenario` on it, then removes the stacks it left and stops the sandbox. */
export async function driveFleet<Sandbox extends StackSandbox, Result>(
  { engine, sandbox, seed }: FleetDriverOptions<Sandbox>,
  scenario: (driver: FleetDriver<Sandbox>) => Promise<Result>,
): Promise<Result> {
  const open = new Set<BenchmarkStack>();
  try {
    const fleet = await seed(sandbox);
    const declarations = fleet.map(clusterDeclaration);
    return await scenario({
      sandbox,
      fleet,
      declarations,
      async openStack(name, options = {}) {
        const stack = await openBenchmarkStack(engine, sandbox, name, options.environment, options.program);
        open.add(stack);
        await stack.setClusters(options.clusters ?? declarations);
        return {
          ...stack,
          remove() {
            open.delete(stack);
            stack.remove();
          },
        };
      },
    });
  } finally {
    for (const stack of open) stack.remove();
    await sandbox.stop();
  }
}
