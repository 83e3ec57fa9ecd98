/**
 * What an update that declares no cluster may do. The engine deletes every resource a program no
 * longer declares, so an empty `clusters` list or `clustersFile` (a typo, a file generated empty, a
 * stack file from the wrong branch) would delete every cluster of the stack, as `pulumi destroy`
 * does, and report success. Over a stack that holds clusters it is therefore refused unless
 * `allowEmptyFleet` is true; over a stack that holds none, it only warns, as before.
 */
import * as pulumi from "@pulumi/pulumi";
import { resourceTypeToken } from "../resources/serviceProviderClusterIdentityStatus";

/** The program's setting (a key of the project namespace) that lets an empty fleet delete the stack's clusters. */
export const allowEmptyFleetKey = "allowEmptyFleet";

/**
 * The engine's built-in invoke that returns a stack's resources from its last saved state, by URN
 * with type and outputs (pkg/resource/deploy/builtins.go, `readStackResourceOutputs`). It registers
 * nothing in state, unlike a StackReference, and counts the resources themselves rather than the
 * `clusters` output, which a `refresh --run-program` of an empty fleet empties while the
 * resources stay.
 */
const readStackResourceOutputsToken = "pulumi:pulumi:readStackResourceOutputs";

/** Cluster names a refusal lists before it only counts the rest. */
const namedInRefusal = 5;

/** What the engine's `readStackResourceOutputs` answers. */
interface StackResourceOutputs {
  readonly outputs?: Readonly<Record<string, { readonly type?: unknown }>>;
}

/**
 * The names of the cluster resources ({@link resourceTypeToken}) in the running stack's last saved
 * state, read through the engine, which reads its own backend: the file backend, Azure Blob
 * Storage or Pulumi Cloud alike. The stack is named in full (organization, project, stack): a bare
 * name would resolve to the user's default organization on Pulumi Cloud.
 * @throws Error naming the stack and the setting that skips the read, when the engine cannot read it.
 */
export async function clustersInStack(): Promise<string[]> {
  const stack = runningStackName();
  let answer: StackResourceOutputs;
  try {
    answer = (await pulumi.runtime.invoke(readStackResourceOutputsToken, { stackName: stack })) as StackResourceOutputs;
  } catch (error) {
    throw new Error(
      `could not read the state of stack ${stack} to check whether it holds clusters, which an update declaring none would delete: ` +
        `${error instanceof Error ? error.message : String(error)}; declare the clusters, or set ${pulumi.getProject()}:${allowEmptyFleetKey} ` +
        "to true to go ahead without the check",
      { cause: error },
    );
  }
  return Object.entries(answer.outputs ?? {})
    .filter(([, resource]) => resource.type === resourceTypeToken)
    .map(([urn]) => urn.split("::").slice(3).join("::"))
    .sort((left, right) => left.localeCompare(right, "en", { numeric: true }));
}

/** The running stack's full name: `<organization>/<project>/<stack>` (`organization` on the file and Azure Blob backends). */
function runningStackName(): string {
  return `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`;
}

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
 * Only called for an empty fleet, so a declared fleet's update pays nothing.
 * @throws Error naming the source of the empty list, the clusters the stack holds and `allowEmptyFleet`.
 */
export async function checkEmptyFleet(check: EmptyFleetCheck): Promise<void> {
  const project = pulumi.getProject();
  const setting = `${project}:${allowEmptyFleetKey}`;
  // Fire and forget, as every warning of the program: the engine shows it; nothing waits for it.
  if (check.allowEmptyFleet) {
    void pulumi.log.warn(
      `no clusters declared and ${setting} is true: this update deletes every cluster the stack holds ` +
        `(set ${setting} back to false, or remove it, once they are gone)`,
    );
    return;
  }
  const held = await clustersInStack();
  if (held.length === 0) {
    // Otherwise an `up` with an incomplete configuration reports success and records nothing.
    void pulumi.log.warn(`no clusters declared: set ${project}:clustersFile (a JSON list) or ${project}:clusters; this update records nothing`);
    return;
  }
  const named = held.slice(0, namedInRefusal).join(", ") + (held.length > namedInRefusal ? ` and ${held.length - namedInRefusal} more` : "");
  throw new Error(
    `${check.source} declares no cluster, but stack ${runningStackName()} holds ${held.length} of them (${named}); ` +
      "this update would delete them all, as `pulumi destroy` does. Declare the clusters again, or, to delete them, " +
      `set ${setting} to true (\`pulumi config set ${setting} true\`). Nothing was changed`,
  );
}
