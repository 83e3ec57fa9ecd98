/**
 * The benchmark's own options (`npm run bench -- …`, docs/performance.md "Running it"). The
 * production block's `--host-heap-limit=MB` and `--otel-traces=…` are read where they apply
 * (main.ts productionOnly).
 */

/** What `npm run bench` was asked to run. */
export interface BenchCommandLine {
  /** `--quick`: fewer sizes and repetitions. */
  readonly quick: boolean;
  /** `--production`: section 9 alone. */
  readonly production: boolean;
  /**
   * `--compare <A> <B>`: the production scenario's hook side of two commits, interleaved (commitComparison.ts);
   * with `--traced-b=<file://…|grpc://…>`, B's engine runs take Pulumi's `--otel-traces` with that address
   * (`--compare HEAD HEAD --traced-b=…` prices tracing).
   */
  readonly compare?: { readonly base: string; readonly candidate: string; readonly candidateTraces?: string };
  /** `--clusters N` (with `--production` or `--compare`; default 2,000). */
  readonly clusters?: number;
  /** `--pairs N`: pairs of ours and the floor's, or rounds of A, B and the floor (default 5). */
  readonly pairs?: number;
  /**
   * `--growth`: one stack at each of `sizes` (default {@link growthDefaults}), then a region of
   * `regionClusters` in `regionShards` shards (default: as many as the measured shard size needs).
   */
  readonly growth?: { readonly sizes?: readonly number[]; readonly regionClusters?: number; readonly regionShards?: number };
}

/** The growth block's sizes and region when none are given: what docs/performance.md's "Growth" block is measured at. */
export const growthDefaults = { sizes: [1000, 2000, 5000, 10_000], regionClusters: 10_000 } as const;

/** The production scenario's size when none is given: what its targets are set for. */
export const productionDefaults = { clusters: 2000, pairs: 5 } as const;

/** Rounds of a comparison: the fewest at which the sign test of ratioVerdict can tell B from A with every round agreeing is 6. */
export const comparisonRounds = 7;

/** `--name N` or `--name=N`, a whole number of at least 1; undefined when absent. */
function wholeNumberOption(argumentsGiven: readonly string[], name: string): number | undefined {
  const index = argumentsGiven.findIndex((argument) => argument === name || argument.startsWith(`${name}=`));
  if (index < 0) return undefined;
  const argument = argumentsGiven[index];
  const text = argument === name ? argumentsGiven[index + 1] : argument.slice(name.length + 1);
  if (text === undefined || !/^[1-9][0-9]*$/.test(text)) {
    throw new RangeError(`${name} takes a whole number of at least 1, got ${text === undefined ? "nothing" : `"${text}"`}`);
  }
  return Number(text);
}

/** Reads the options from `process.argv.slice(2)`; refuses a combination that would be ignored. */
export function parseBenchCommandLine(argumentsGiven: readonly string[]): BenchCommandLine {
  const quick = argumentsGiven.includes("--quick");
  const production = argumentsGiven.includes("--production");
  const clusters = wholeNumberOption(argumentsGiven, "--clusters");
  const pairs = wholeNumberOption(argumentsGiven, "--pairs");
  const growthAsked = argumentsGiven.includes("--growth");
  const sizesAt = argumentsGiven.findIndex((argument) => argument === "--sizes" || argument.startsWith("--sizes="));
  let sizes: number[] | undefined;
  if (sizesAt >= 0) {
    const text = argumentsGiven[sizesAt] === "--sizes" ? argumentsGiven[sizesAt + 1] : argumentsGiven[sizesAt].slice("--sizes=".length);
    if (text === undefined || !/^[1-9][0-9]*(,[1-9][0-9]*)+$/.test(text)) {
      throw new RangeError(`--sizes takes two or more cluster counts separated by commas (1000,2000), got ${text === undefined ? "nothing" : `"${text}"`}`);
    }
    sizes = text.split(",").map(Number);
  }
  const regionClusters = wholeNumberOption(argumentsGiven, "--region-clusters");
  const regionShards = wholeNumberOption(argumentsGiven, "--region-shards");
  if (!growthAsked && (sizes !== undefined || regionClusters !== undefined || regionShards !== undefined)) {
    throw new RangeError("--sizes, --region-clusters and --region-shards apply to --growth only");
  }
  if (growthAsked && (quick || production || argumentsGiven.includes("--compare"))) {
    throw new RangeError("--growth runs by itself: leave out --quick, --production and --compare");
  }
  const tracedAt = argumentsGiven.findIndex((argument) => argument.startsWith("--traced-b"));
  const tracedB = tracedAt < 0 ? undefined : argumentsGiven[tracedAt].slice("--traced-b=".length);
  if (tracedB !== undefined && !/^(file|grpc):\/\/\S+$/.test(tracedB)) {
    throw new RangeError(`--traced-b takes where B's traces go, --traced-b=<file://…|grpc://…>, got "${argumentsGiven[tracedAt]}"`);
  }
  const compareAt = argumentsGiven.indexOf("--compare");
  let compare: BenchCommandLine["compare"];
  if (compareAt >= 0) {
    const [base, candidate] = argumentsGiven.slice(compareAt + 1, compareAt + 3);
    if (base === undefined || candidate === undefined || base.startsWith("--") || candidate.startsWith("--")) {
      throw new RangeError("--compare takes two commits: --compare <A> <B> (B is the change, A what it is measured against)");
    }
    if (quick || production) throw new RangeError("--compare runs the production scenario's hook side by itself: leave out --quick and --production");
    compare = { base, candidate, ...(tracedB === undefined ? {} : { candidateTraces: tracedB }) };
  }
  if (tracedB !== undefined && compare === undefined) throw new RangeError("--traced-b applies to --compare only: it traces B's runs");
  if ((clusters !== undefined || pairs !== undefined) && !production && compare === undefined) {
    throw new RangeError("--clusters and --pairs apply to --production and --compare only");
  }
  const growth = growthAsked
    ? {
        ...(sizes === undefined ? {} : { sizes }),
        ...(regionClusters === undefined ? {} : { regionClusters }),
        ...(regionShards === undefined ? {} : { regionShards }),
      }
    : undefined;
  return {
    quick,
    production,
    ...(growth === undefined ? {} : { growth }),
    ...(compare === undefined ? {} : { compare }),
    ...(clusters === undefined ? {} : { clusters }),
    ...(pairs === undefined ? {} : { pairs }),
  };
}
