/**
 * Releases what an Automation API inline run leaves behind in the process that ran it.
 *
 * The SDK keeps each run's state (the stack resource, and through its children every resource the
 * program declared, with their outputs and promises) in an AsyncLocalStorage store. Objects created
 * during the run keep that store alive after it ends: a heap snapshot after two 1,000-cluster
 * `up`s in one process shows the first run's Stack held by a c-ares channel (`ChannelWrap`, the DNS
 * resolver grpc-js creates for the run's engine client) through its async context, and Node keeps
 * that channel for the life of the process. So every inline run of the benchmark process kept its
 * whole resource graph: about 23 MB per 1,000 clusters, hundreds of MB by the 2,000-cluster `up`,
 * whose program then spent its CPU in garbage collection (docs/performance.md). A user's `pulumi up` runs the program in a fresh process.
 *
 * {@link releasingProgram} wraps a program to note the store of every run it starts; after the
 * operation has returned, `release()` empties those stores' stack resource (and promise-leak
 * bookkeeping), so the graph can be collected. Only after the run: the engine's last RPCs of a run
 * still read the store. (A `pulumi.dynamic.Resource`, such as the engine floor's, is also held by
 * the SDK's closure-serialization cache of the first serialization: one run's graph, not one per run.)
 */
import type * as automation from "@pulumi/pulumi/automation";

interface RunStore {
  stackResource?: unknown;
  leakCandidates?: Set<Promise<unknown>>;
}

// The SDK's run state: internal (left out of its typings), of the pinned SDK. The benchmark checks
// its shape at every release (below) and stops, naming it, when a later SDK stores the run otherwise.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const runtimeState = require("@pulumi/pulumi/runtime/state") as { getStore(): RunStore };

/** A program that notes each run's store, and the release of the runs noted so far. */
export interface ReleasingProgram {
  readonly program: automation.PulumiFn;
  /** Lets the graphs of the runs that have ended be collected; call after each operation returns. */
  release(): void;
}

export function releasingProgram(program: automation.PulumiFn): ReleasingProgram {
  const stores: RunStore[] = [];
  return {
    program: () => {
      const store = runtimeState.getStore();
      if (typeof store !== "object" || store === null || !("stackResource" in store)) {
        throw new Error(
          "bench: @pulumi/pulumi's run store (runtime/state getStore()) has no stackResource: the SDK stores a run otherwise, and releasingProgram must follow it",
        );
      }
      stores.push(store);
      return program();
    },
    release() {
      for (const store of stores.splice(0)) {
        store.stackResource = undefined;
        store.leakCandidates?.clear();
      }
      // The SDK also sets it on globalThis for other copies of itself; the next run sets it again.
      (globalThis as { stackResource?: unknown }).stackResource = undefined;
    },
  };
}
