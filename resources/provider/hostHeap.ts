/**
 * How far the provider host lets V8's old generation grow between full collections.
 *
 * Every pass in flight holds its requests, responses, token caches and engine messages for as
 * long as its Azure and Cosmos round trips take, so at fleet scale a steady stream of them
 * outlives two scavenges and is promoted, to become garbage a moment later. When V8 next collects
 * is its choice: after each full collection it sets the next limit to a factor of the live heap,
 * from its measured collection and allocation speeds, capped at 4× when the process's heap limit
 * is 2 GB or more (any machine with 4 GiB and no container limit) and lower on smaller heaps. Left
 * to that, the host's resident size follows the machine, not the fleet: the same `up` peaks at
 * either end of a wide range, depending on whether V8 chooses to collect again before it ends.
 *
 * The host therefore fixes that factor (V8's `--heap-growing-percent`): V8 reads it each time it
 * sets a limit, so setting it once when the host loads this provider takes effect from the next
 * collection, and the limit stays proportional to what is live. Collections stay V8's own
 * (incremental and concurrent); only their spacing is bounded.
 *
 * The flag is process-wide, and the host is a process of its own (the engine starts one
 * dynamic-provider host per program), so the program is untouched; another dynamic provider of
 * the same program shares the bound. Only that host is changed: any other process that loads this
 * module (a test runner calling the implementation) is left alone. ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT
 * sets another percent, or 0 to leave V8's own heuristic; Node does not accept this V8 flag in
 * NODE_OPTIONS, so this variable is the operator's way to change it. A value outside the range
 * fails the first check (settingsCheck.ts) and changes nothing here.
 */
import { setFlagsFromString } from "node:v8";

/** The environment variable that overrides {@link defaultHeapGrowthPercent}. */
export const heapGrowthVariable = "ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT";

/** The host's default: each limit 1.5× the heap live after the last full collection. */
export const defaultHeapGrowthPercent = 50;

const lowest = 10;
const highest = 300;

/** The percent the environment asks for (0: V8's own heuristic), or a message saying what is wrong. */
export function heapGrowthPercent(environment: Readonly<Record<string, string | undefined>>): number | { readonly problem: string } {
  const text = environment[heapGrowthVariable];
  if (text === undefined || text.trim() === "") return defaultHeapGrowthPercent;
  const value = text.trim();
  if (/^[0-9]+$/.test(value)) {
    const percent = Number(value);
    if (percent === 0 || (percent >= lowest && percent <= highest)) return percent;
  }
  return {
    problem:
      `${heapGrowthVariable} is ${JSON.stringify(text)}: expected a whole number of percent from ${lowest} to ${highest} ` +
      `(how far the provider host's heap may grow past what is live before V8 collects; default ${defaultHeapGrowthPercent}), or 0 to leave V8's own heuristic`,
  };
}

/** Whether this process is the engine's dynamic-provider host (@pulumi/pulumi cmd/dynamic-provider). */
export function isDynamicProviderHost(argv: readonly string[]): boolean {
  return /[\\/]cmd[\\/]dynamic-provider([\\/](index(\.js)?)?)?$/.test(argv[1] ?? "");
}

/**
 * In the dynamic-provider host, sets V8's heap growing percent from the environment; elsewhere,
 * or with 0 or an invalid value, nothing. Returns the percent set, if any.
 */
export function boundHostHeapGrowth(
  argv: readonly string[] = process.argv,
  environment: Readonly<Record<string, string | undefined>> = process.env,
  setFlags: (flags: string) => void = setFlagsFromString,
): number | undefined {
  if (!isDynamicProviderHost(argv)) return undefined;
  const percent = heapGrowthPercent(environment);
  if (typeof percent !== "number" || percent === 0) return undefined;
  setFlags(`--heap-growing-percent=${percent}`);
  return percent;
}
