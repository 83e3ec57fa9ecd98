/** Small statistics for the benchmark: medians, quartiles, a least-squares line, and the rule that tells a difference from noise. */

/** CPU time (user and system) of this process so far, in milliseconds. */
export function processCpuTimeInMs(): number {
  const cpu = process.cpuUsage();
  return (cpu.user + cpu.system) / 1000;
}

/** The sum of a table of counts (by method, by status…); 0 for none. */
export function sumOfCounts(counts: Readonly<Record<string, number>> | undefined): number {
  return Object.values(counts ?? {}).reduce((total, count) => total + count, 0);
}

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) {
    throw new RangeError("median of an empty list");
  }
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The item of median value (of an even count, the upper of the two middle items). */
export function medianBy<Item>(items: readonly Item[], value: (item: Item) => number): Item {
  if (items.length === 0) {
    throw new RangeError("median of an empty list");
  }
  return [...items].sort((left, right) => value(left) - value(right))[Math.floor(items.length / 2)];
}

/** The lower quartile, the median and the upper quartile of a list: its middle half lies between the quartiles. */
export interface Spread {
  readonly lowerQuartile: number;
  readonly median: number;
  readonly upperQuartile: number;
}

/**
 * The quartiles of a non-empty list, each interpolated linearly between the two nearest values of
 * the sorted list (R's default and numpy's): of 5 values the 2nd, 3rd and 4th; of 3 values halfway
 * between the 1st and 2nd, the 2nd, and halfway between the 2nd and 3rd.
 */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) {
    throw new RangeError("quartiles of an empty list");
  }
  const sorted = [...values].sort((left, right) => left - right);
  const quantile = (share: number): number => {
    const position = share * (sorted.length - 1);
    const below = Math.floor(position);
    const above = Math.min(below + 1, sorted.length - 1);
    return sorted[below] + (position - below) * (sorted[above] - sorted[below]);
  };
  return { lowerQuartile: quantile(0.25), median: median(sorted), upperQuartile: quantile(0.75) };
}

/** numerators[i] ÷ denominators[i]: the ratio of each pair of runs made side by side. */
export function pairRatios(numerators: readonly number[], denominators: readonly number[]): number[] {
  if (numerators.length !== denominators.length) {
    throw new RangeError(`pairs need as many runs on each side (${numerators.length} against ${denominators.length})`);
  }
  return numerators.map((numerator, index) => numerator / denominators[index]);
}

/**
 * The exact two-sided sign test: the chance that `rounds` coin tosses fall at least as unevenly as
 * `above` on one side and the rest on the other (a tie, a ratio of exactly 1, counts for neither side
 * and is left out of `rounds` by the caller).
 */
export function signTestChance(above: number, rounds: number): number {
  if (rounds === 0) return 1;
  const extreme = Math.max(above, rounds - above);
  let tail = 0;
  let ways = 1;
  for (let count = 0; count <= rounds; count += 1) {
    if (count > 0) ways = (ways * (rounds - count + 1)) / count;
    if (count >= extreme) tail += ways;
  }
  return Math.min(1, (2 * tail) / 2 ** rounds);
}

/** The chance under which the sign test of {@link ratioVerdict} says B differs from A. */
export const verdictChance = 0.05;

/**
 * Whether the per-round ratios B ÷ A tell B from A: `higher` when the whole interquartile range is
 * above 1 and so many rounds fall above 1 that two builds of the same code would do so less than
 * {@link verdictChance} of the time (the exact sign test: all of 6 rounds, 7 of 8, 8 of 9…; never with
 * 5 rounds or fewer), `lower` likewise below 1, else `none`: the difference, if any, is within the
 * machine's noise.
 */
export function ratioVerdict(ratiosOfBToA: readonly number[]): "higher" | "lower" | "none" {
  const { lowerQuartile, upperQuartile } = spread(ratiosOfBToA);
  const above = ratiosOfBToA.filter((ratio) => ratio > 1).length;
  const below = ratiosOfBToA.filter((ratio) => ratio < 1).length;
  if (signTestChance(above, above + below) >= verdictChance) return "none";
  if (lowerQuartile > 1 && above > below) return "higher";
  if (upperQuartile < 1 && below > above) return "lower";
  return "none";
}

/** y = intercept + slope·x, with the coefficient of determination. */
export interface LinearFit {
  readonly intercept: number;
  readonly slope: number;
  readonly rSquared: number;
}

/** Ordinary least squares over (x, y) points (at least two distinct x). */
export function linearFit(points: ReadonlyArray<readonly [number, number]>): LinearFit {
  const count = points.length;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / count;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / count;
  let covariance = 0;
  let varianceX = 0;
  let totalSquares = 0;
  for (const [x, y] of points) {
    covariance += (x - meanX) * (y - meanY);
    varianceX += (x - meanX) ** 2;
    totalSquares += (y - meanY) ** 2;
  }
  if (varianceX === 0) {
    throw new RangeError("a line needs at least two distinct x values");
  }
  const slope = covariance / varianceX;
  const intercept = meanY - slope * meanX;
  const residualSquares = points.reduce((sum, [x, y]) => sum + (y - (intercept + slope * x)) ** 2, 0);
  return { intercept, slope, rSquared: totalSquares === 0 ? 1 : 1 - residualSquares / totalSquares };
}

/** Milliseconds, rounded for a table. */
export function formatMilliseconds(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

/** Bytes as MB (2^20), one decimal. */
export function formatMegabytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`;
}

/** Kilobytes (1024 bytes), one decimal. */
export function formatKilobytes(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** A ratio with two decimals, as `1.23×`. */
export function formatRatio(value: number): string {
  return `${value.toFixed(2)}×`;
}

/** A ratio's median with its interquartile range, as `1.23× [1.20–1.31×]`. */
export function formatRatioSpread(value: Spread): string {
  return `${formatRatio(value.median)} [${value.lowerQuartile.toFixed(2)}–${formatRatio(value.upperQuartile)}]`;
}

/** A target's status cell: `met`, or `**missed**` with by how much when given. */
export function targetStatus(met: boolean, miss = ""): string {
  return met ? "met" : `**missed**${miss === "" ? "" : ` (${miss})`}`;
}
