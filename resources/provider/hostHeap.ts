/**
 * How far the provider host's heap grows between full collections (V8's `--heap-growing-percent`):
 * with V8's own factor, which follows the machine's memory, the host's size would follow the machine,
 * not the fleet (docs/operations.md). Node refuses the flag in NODE_OPTIONS, hence the variable.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

const heapGrowthVariable = "ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT";
const defaultHeapGrowthPercent = 25;
const lowest = 10;
const highest = 300;

/** The percent the environment asks for (0: V8's own heuristic), or a message saying what is wrong. */
export function heapGrowthPercent(environment: Readonly<Record<string, string | undefined>>): number | { readonly problem: string } {
  const text = environment[heapGrowthVariable] ?? "";
  if (text.trim() === "") return defaultHeapGrowthPercent;
  const percent = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (percent === 0 || (percent >= lowest && percent <= highest)) return percent;
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
 * In the dynamic-provider host, sets V8's heap growing percent from the environment, then collects
 * once; returns the percent set, if any. The percent applies from V8's first full collection on:
 * before it, the old generation grows to a limit V8 guesses at start (it reached 96 MB, 41 MB of it
 * live, in a 2,000-cluster `refresh` that never collected), so the one collection is made here, with
 * what the host has loaded, and the limit follows what is live from the first request on.
 */
export function boundHostHeapGrowth(
  argv: readonly string[] = process.argv,
  environment: Readonly<Record<string, string | undefined>> = process.env,
  setFlags: (flags: string) => void = setFlagsFromString,
  collect: () => void = collectGarbage,
): number | undefined {
  if (!isDynamicProviderHost(argv)) return undefined;
  const percent = heapGrowthPercent(environment);
  if (typeof percent !== "number" || percent === 0) return undefined;
  setFlags(`--heap-growing-percent=${percent}`);
  collect();
  return percent;
}

/** One full collection: `gc` is exposed to contexts made while the flag is on, so one is made for it, and the flag put back. */
export function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  try {
    (runInNewContext("gc") as () => void)();
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
}
