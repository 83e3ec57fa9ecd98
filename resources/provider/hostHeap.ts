/**
 * How far the provider host's heap grows between full collections (V8's `--heap-growing-percent`):
 * with V8's own factor, which follows the machine's memory, the host's size would follow the machine,
 * not the fleet (docs/operations.md). Node refuses the flag in NODE_OPTIONS, hence the variable.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

const heapGrowthVariable = "ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT";
const defaultHeapGrowthPercent = 25;
/**
 * The default while the host reads (a `refresh`): each read holds the engine's request across a
 * Cosmos round trip, so at a quarter the host collects its old generation again and again for what
 * dies a moment later. At a half a 2,000-cluster `refresh` took 18 % less host CPU and peaked 7 MB
 * higher, well under 200 MB; a write pass keeps a quarter, where an `up` at a half peaked at 212 MB
 * (docs/performance.md, "The provider host").
 */
const readingHeapGrowthPercent = 50;

/** What the provider host is doing, as the percent follows it. */
export type HostWork = "reads" | "writes";

/** Set while the host's percent is the default, which then follows the host's work; never when the operator set one. */
let followingWork: { readonly setFlags: (flags: string) => void; percent: number } | undefined;
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
  followingWork = undefined;
  if (!isDynamicProviderHost(argv)) return undefined;
  const percent = heapGrowthPercent(environment);
  if (typeof percent !== "number" || percent === 0) return undefined;
  setFlags(`--heap-growing-percent=${percent}`);
  collect();
  if ((environment[heapGrowthVariable] ?? "").trim() === "") followingWork = { setFlags, percent };
  return percent;
}

/**
 * The default percent follows the host's work: a half from the first read of a `refresh` on, a
 * quarter again from the first create or update (an `up --refresh` reads, then writes). V8 reads the
 * flag each time it sets a limit, so the change applies from the next full collection. Nothing
 * outside the host, or when ARO_HCP_PROVIDER_HEAP_GROWTH_PERCENT is set.
 */
export function heapGrowthFollows(work: HostWork): void {
  if (followingWork === undefined) return;
  const percent = work === "reads" ? readingHeapGrowthPercent : defaultHeapGrowthPercent;
  if (percent === followingWork.percent) return;
  followingWork.setFlags(`--heap-growing-percent=${percent}`);
  followingWork.percent = percent;
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
