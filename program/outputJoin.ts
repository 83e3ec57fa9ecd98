/**
 * One Output of many outputs' values, as `pulumi.all` over an array gives it: known only when every
 * output is, secret when any is, depending on every output's resources.
 *
 * Why not `pulumi.all`: for each element it makes a copy of the Output and an `apply` on it (two
 * Outputs, each about eight promises and a Proxy), so that Outputs of another copy of the SDK are
 * read through public members only. The fleet program joins six outputs per cluster, 12,000 at
 * 2,000 clusters: `pulumi.all` over 12,000 outputs took 350–590 ms of CPU here, and its garbage
 * kept the program's collector busy through the rest of a no-op `up` (docs/performance.md, "What
 * bounds the targets", 14b). This join takes what `pulumi.all` takes from each copy (its value with
 * unknowns, whether it is known and secret, its resources) straight from the outputs of the
 * program's own SDK, the only ones it is given: the resources' outputs.
 */
import * as pulumi from "@pulumi/pulumi";

/** The members every Output of this SDK has (output.js, OutputImpl), which `pulumi.all` reads from its copies. */
interface OutputParts<T> {
  promise(withUnknowns?: boolean): Promise<T>;
  readonly isKnown: Promise<boolean>;
  readonly isSecret: Promise<boolean>;
  resources(): Set<pulumi.Resource>;
  allResources(): Promise<Set<pulumi.Resource>>;
}

/** The SDK's Output class, whose constructor `pulumi.all` uses for the joined Output. */
type OutputClass = new (
  resources: Set<pulumi.Resource>,
  promise: Promise<unknown>,
  isKnown: Promise<boolean>,
  isSecret: Promise<boolean>,
  allResources: Promise<Set<pulumi.Resource>>,
) => unknown;

/**
 * The values of `outputs`, in order, as one Output: what `pulumi.all(outputs)` gives for an array of
 * this SDK's Outputs, with one promise read per output.
 * @throws TypeError when an element lacks the SDK's members (an Output of another copy of the SDK).
 */
export function joinOutputs<T>(outputs: ReadonlyArray<pulumi.Output<T>>): pulumi.Output<T[]> {
  const parts = outputs.map((output, index) => {
    const candidate = output as unknown as Partial<OutputParts<T>>;
    if (typeof candidate.promise !== "function" || typeof candidate.resources !== "function" || typeof candidate.allResources !== "function") {
      throw new TypeError(`output ${index} of the join is not an Output of this @pulumi/pulumi`);
    }
    return candidate as OutputParts<T>;
  });
  const resources = unionOf(parts.map((part) => part.resources()));
  const allResources = Promise.all(parts.map((part) => part.allResources())).then(unionOf);
  const values = Promise.all(parts.map((part) => part.promise(true)));
  const isKnown = Promise.all(parts.map((part) => part.isKnown)).then((known) => known.every(Boolean));
  const isSecret = Promise.all(parts.map((part) => part.isSecret)).then((secret) => secret.some(Boolean));
  return new (pulumi.Output as unknown as OutputClass)(resources, values, isKnown, isSecret, allResources) as pulumi.Output<T[]>;
}

/** Every resource of the sets, once. */
function unionOf(sets: ReadonlyArray<Set<pulumi.Resource>>): Set<pulumi.Resource> {
  const union = new Set<pulumi.Resource>();
  for (const set of sets) for (const resource of set) union.add(resource);
  return union;
}
