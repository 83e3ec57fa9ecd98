/**
 * program/outputJoin.ts against `pulumi.all` over the same outputs: the same values in order, the
 * same knownness (an unknown output, as in a preview, keeps the join from running its apply), the
 * same secretness and the same resources. Under `pulumi.runtime.setMocks`, whose resources' outputs
 * are this SDK's Outputs as a real engine's are.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { joinOutputs } from "../../program/outputJoin";
import { setProgramMocks } from "../fixtures/programMocks";

/** The SDK's internal members a joined Output has (output.js): what the engine and `apply` read. */
interface Internals {
  readonly isKnown: Promise<boolean>;
  resources(): Set<pulumi.Resource>;
  allResources(): Promise<Set<pulumi.Resource>>;
  promise(withUnknowns?: boolean): Promise<unknown>;
}
const internals = (output: pulumi.Output<unknown>): Internals => output as unknown as Internals;

/** What a joined Output carries, read the same way for both joins. */
async function carried(
  output: pulumi.Output<unknown>,
): Promise<{ value: unknown; known: boolean; secret: boolean; resources: string[]; allResources: string[] }> {
  const names = (set: Set<pulumi.Resource>): Promise<string[]> =>
    (Promise.all([...set].map((resource) => internals(resource.urn).promise())) as Promise<string[]>).then((urns) => urns.sort());
  return {
    value: await internals(output).promise(true),
    known: await internals(output).isKnown,
    secret: await pulumi.isSecret(output),
    resources: await names(internals(output).resources()),
    allResources: await names(await internals(output).allResources()),
  };
}

class Thing extends pulumi.CustomResource {
  declare readonly size: pulumi.Output<number>;
  declare readonly label: pulumi.Output<string>;
  constructor(name: string, size: number) {
    super("test:index:Thing", name, { size, label: undefined });
  }
}

beforeAll(async () => {
  await setProgramMocks({ registered: [] });
});

describe("joining outputs without pulumi.all", () => {
  it("carries what pulumi.all carries for resources' outputs: values in order, known, not secret, every resource", async () => {
    const things = [new Thing("a", 1), new Thing("b", 2), new Thing("c", 3)];
    const outputs = things.flatMap((thing) => [thing.size, thing.urn as pulumi.Output<unknown>]);
    const ours = await carried(joinOutputs(outputs));
    expect(ours).toEqual(await carried(pulumi.all(outputs)));
    const urns = await Promise.all(things.map((thing) => internals(thing.urn).promise()));
    expect(ours.value).toEqual([1, urns[0], 2, urns[1], 3, urns[2]]);
    expect(ours.known).toBe(true);
    expect(ours.resources).toHaveLength(3);
  });

  it("is secret when one output is, and unknown when one output is, so its apply does not run", async () => {
    const outputs = [pulumi.output(1), pulumi.secret(2), pulumi.output(3)];
    expect(await carried(joinOutputs(outputs))).toEqual(await carried(pulumi.all(outputs)));
    expect(await pulumi.isSecret(joinOutputs(outputs))).toBe(true);

    const withUnknown = [pulumi.output(1), pulumi.output(pulumi.unknown) as pulumi.Output<unknown>];
    const joined = joinOutputs(withUnknown);
    expect(await carried(joined)).toEqual(await carried(pulumi.all(withUnknown)));
    expect(await internals(joined).isKnown).toBe(false);
    let ran = false;
    await internals(
      joined.apply(() => {
        ran = true;
      }),
    ).promise(true);
    expect(ran).toBe(false);
  });

  it("joins none as an empty list, and refuses what is not an Output of this SDK, naming its place", async () => {
    expect(await carried(joinOutputs([]))).toEqual(await carried(pulumi.all([])));
    expect(() => joinOutputs([pulumi.output(1), { apply: () => undefined } as unknown as pulumi.Output<number>])).toThrow(
      "output 1 of the join is not an Output of this @pulumi/pulumi",
    );
  });
});
