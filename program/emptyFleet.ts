/**
 * What an update that declares no cluster may do. The engine deletes every resource a program no
 * longer declares, so an empty `clusters` list or `clustersFile` (a typo, a file generated empty, a
 * stack file from the wrong branch) would delete every cluster of the stack, as `pulumi destroy`
 * does, and report success. Over a stack that holds clusters it is therefore refused unless
 * `allowEmptyFleet` is true; over a stack that holds none, it only warns, as before.
 */
import * as pulumi from "@pulumi/pulumi";
import { clustersInStack, runningStackName, someNames } from "./stackState";

/** The program's setting (a key of the project namespace) that lets an empty fleet delete the stack's clusters. */
export const allowEmptyFleetKey = "allowEmptyFleet";

/** Options of {@link checkEmptyFleet}. */
export interface EmptyFleetCheck {
  /** Where the empty list came from, as messages name it: `<project>:clusters` or `<project>:clustersFile (<file>)`. */
  readonly source: string;
  /** The value of `allowEmptyFleet`. */
  readonly allowEmptyFleet: boolean;
}

/**
 * Decides, before anything is declared, whether an update that declares no cluster goes ahead.
 * With `allowEmptyFleet` it does, saying that it deletes the stack's clusters, and the state is not
 * read (the way past the check when the state cannot be read). Otherwise the stack's state is read
 * once: holding no cluster, the update goes ahead with a warning that it records nothing.
 * Only called for an empty fleet (a declared fleet's update reads the state for program/clusterRemovals.ts).
 * @throws Error naming the source of the empty list, the clusters the stack holds and `allowEmptyFleet`.
 */
export async function checkEmptyFleet(check: EmptyFleetCheck): Promise<void> {
  const project = pulumi.getProject();
  const setting = `${project}:${allowEmptyFleetKey}`;
  // Fire and forget, as every warning of the program: the engine shows it; nothing waits for it.
  if (check.allowEmptyFleet) {
    void pulumi.log.warn(
      `no clusters declared and ${setting} is true: this update deletes every cluster the stack holds; their status stays in Cosmos DB ` +
        `as last written (a delete writes nothing), and this stack no longer keeps it (set ${setting} back to false, or remove it, once they are gone)`,
    );
    return;
  }
  const held = (
    await clustersInStack(
      "to check whether it holds clusters, which an update declaring none would delete",
      `declare the clusters, or set ${setting} to true to go ahead without the check`,
    )
  ).map((cluster) => cluster.name);
  if (held.length === 0) {
    // Otherwise an `up` with an incomplete configuration reports success and records nothing.
    void pulumi.log.warn(`no clusters declared: set ${project}:clustersFile (a JSON list) or ${project}:clusters; this update records nothing`);
    return;
  }
  const named = someNames(held);
  throw new Error(
    `${check.source} declares no cluster, but stack ${runningStackName()} holds ${held.length} of them (${named}); ` +
      "this update would delete them all, as `pulumi destroy` does. Declare the clusters again, or, to delete them, " +
      `set ${setting} to true (\`pulumi config set ${setting} true\`). Nothing was changed`,
  );
}
