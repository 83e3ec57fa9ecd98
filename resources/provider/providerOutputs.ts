/**
 * The provider's output boundary: the output shape (schema 3: the small status of
 * core/outputsStatus.ts, stored as its JSON text), how a pass's result becomes outputs, and the
 * parse of stored outputs (any schema) for diff, update and read. Pure: no I/O, no SDK imports.
 */
import { parseResourceIdOfType, describeType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import type { JsonValue } from "../core/json";
import { isJsonObject } from "../core/json";
import { countEntries } from "../core/identityStatus";
import type { OperatorNamesByKeyHash, OutputsStatus } from "../core/outputsStatus";
import { encodeOutputsStatus, inputsDigest, operatorNamesFromKeys, outputsStatusText, readOutputsStatus, readOutputsStatusText } from "../core/outputsStatus";
import type { DataPlaneOperatorsManagedIdentities } from "../core/serviceProviderClusterDocument";
import { outputsSchemaVersion, readStatusSubtree, statusToJson } from "../core/serviceProviderClusterDocument";
import type { CheckFailure, Parsed, ProviderInputs } from "./providerInputs";
import { unknownValue } from "./providerInputs";
import type { SyncResult } from "../sync/syncManagedIdentityStatus";

/**
 * Outputs: the persisted status plus what a user needs to read it. Plain JSON only, and small:
 * the engine keeps them for every cluster and rewrites them on each `up` (schema 3; schema 2 held
 * `status` as an object, schema 1 also repeated the declared inputs, the document's location and
 * each identity's ARM ID twice). Optional fields are absent when empty, as Go's `omitempty` writes them.
 */
export interface ProviderOutputs {
  readonly schemaVersion: number;
  readonly clusterResourceId: string;
  /** {@link inputsDigest} of the declared `dataPlaneOperators` and `serviceManagedIdentity`: what `diff` compares. */
  readonly inputsDigest: string;
  readonly desiredSource: "inputs" | "clusterDocument";
  /** The service managed identity read from the cluster document; absent when the inputs name one (or none is there). */
  readonly serviceManagedIdentity?: string;
  /**
   * `properties.status.dataPlaneOperatorsManagedIdentities` as persisted, by operator name
   * (core/outputsStatus.ts), as JSON text: the resource's `status` output gives the object back.
   */
  readonly status: string;
  readonly identityCount: number;
  readonly resolvedCount: number;
  readonly notFoundCount: number;
  readonly failedCount: number;
  /** Why nothing was done, e.g. `clusterDeleting`; absent otherwise. */
  readonly skippedReason?: string;
  /** Differences `read` (refresh) found between state, Cosmos and Azure, which the next update fixes; absent when none. */
  readonly drift?: readonly string[];
}

/** The part of stored outputs the provider reads back, from any schema it reads, with absent fields filled in. */
export interface StoredOutputs {
  readonly schemaVersion: 1 | 2 | typeof outputsSchemaVersion;
  readonly clusterResourceId: string;
  /** Schema 1's full subtree reads as `identities` alone. */
  readonly status: OutputsStatus;
  readonly drift: readonly string[];
  /** Schemas 2 and 3: the digest of the declared inputs. */
  readonly inputsDigest?: string;
  /** The service managed identity recorded from the cluster document (schema 1: or from the inputs); null when none. */
  readonly serviceManagedIdentity: string | null;
  readonly skippedReason: string | null;
}

/** The status and its counts, as outputs. */
export function statusOutputs(
  status: DataPlaneOperatorsManagedIdentities,
  operatorNames: OperatorNamesByKeyHash,
): Pick<ProviderOutputs, "status" | "identityCount" | "resolvedCount" | "notFoundCount" | "failedCount"> {
  return { status: outputsStatusText(encodeOutputsStatus(status, operatorNames)), ...countEntries(status) };
}

/** What `diff` compares of the inputs: the declared operator map and service managed identity. */
export function inputsDigestOf(inputs: ProviderInputs): string {
  const operators = inputs.dataPlaneOperators;
  return inputsDigest(operators === undefined || operators === unknownValue ? null : operators, inputs.serviceManagedIdentity ?? null);
}

/** The declared operators' names by the hash of their identity's key. */
export function operatorNamesOf(inputs: ProviderInputs): OperatorNamesByKeyHash {
  const operators = inputs.dataPlaneOperators;
  if (operators === undefined || operators === null || operators === unknownValue) {
    return new Map();
  }
  const keys: Array<[string, string]> = [];
  for (const [name, resourceId] of Object.entries(operators)) {
    const parsed = parseResourceIdOfType(resourceId, userAssignedIdentityResourceType);
    if (parsed.ok) keys.push([name, parsed.resourceId.key]);
  }
  return operatorNamesFromKeys(keys);
}

/**
 * Outputs of schema 1 as `read` (refresh) keeps them: in their layout (the full subtree as
 * `status`, drift always listed), with what this refresh found, until the next update rewrites
 * them; they lack the inputs' digest the current schema needs. Typed as the current outputs,
 * which they are not: the engine stores them as given, and every reader parses them
 * ({@link parseStoredOutputs}).
 */
export function refreshedSchema1Outputs<Stored extends object>(
  props: Stored,
  status: DataPlaneOperatorsManagedIdentities,
  drift: readonly string[],
): Stored & ProviderOutputs {
  const kept = { ...props, status: statusToJson(status), ...countEntries(status), drift: [...drift] };
  return kept as unknown as Stored & ProviderOutputs;
}

/** The outputs of a pass (and of a partial pass that failed on some identities). */
export function toOutputs(inputs: ProviderInputs, result: SyncResult, drift: readonly string[]): ProviderOutputs {
  // Recorded only when it is not an input: the inputs are in state already.
  const documentServiceManagedIdentity = inputs.serviceManagedIdentity === undefined ? result.serviceManagedIdentity : undefined;
  const allDrift = [...drift, ...(result.desiredSetDisagreement === undefined ? [] : [result.desiredSetDisagreement])];
  return {
    schemaVersion: outputsSchemaVersion,
    clusterResourceId: inputs.clusterResourceId,
    // Never unknown here: reconcile asked desiredFromInputs first, which refuses it.
    inputsDigest: inputsDigestOf(inputs),
    desiredSource: result.desiredSource,
    ...(documentServiceManagedIdentity === undefined ? {} : { serviceManagedIdentity: documentServiceManagedIdentity }),
    ...statusOutputs(result.status, operatorNamesOf(inputs)),
    ...(result.skippedReason === undefined ? {} : { skippedReason: result.skippedReason }),
    ...(allDrift.length === 0 ? {} : { drift: allDrift }),
  };
}

/**
 * Reads stored outputs (state) of a shape this version understands: schema 3, or schema 2 or 1 as
 * the previous versions wrote them. Anything else (an older provider's, a hand edit) is a failure, and
 * the provider then treats the state as unknown.
 */
export function parseStoredOutputs(value: unknown): Parsed<StoredOutputs> {
  if (!isJsonObject(value)) {
    return { ok: false, failures: [{ property: "outputs", reason: `are ${describeType(value)}, expected an object` }] };
  }
  const failures: CheckFailure[] = [];
  const fail = (property: string, expected: string): void => {
    failures.push({ property, reason: `is ${describeType(value[property])}, expected ${expected}` });
  };
  const { schemaVersion, clusterResourceId, drift, serviceManagedIdentity, skippedReason } = value;
  const version = schemaVersion === 1 || schemaVersion === 2 || schemaVersion === outputsSchemaVersion ? schemaVersion : undefined;
  if (version === undefined) fail("schemaVersion", `1, 2 or ${outputsSchemaVersion}`);
  if (typeof clusterResourceId !== "string") fail("clusterResourceId", "a string");
  // Schemas 2 and 3 leave an empty drift list out; schema 1 always wrote one.
  const driftList =
    drift === undefined && version !== undefined && version !== 1
      ? []
      : Array.isArray(drift) && drift.every((entry): entry is string => typeof entry === "string")
        ? drift
        : undefined;
  if (driftList === undefined) fail("drift", "a list of strings");
  if (!isOptionalString(serviceManagedIdentity)) fail("serviceManagedIdentity", "a string or null");
  if (!isOptionalString(skippedReason)) fail("skippedReason", "a string or null");
  const layout = version === 1 ? readSchema1(value, fail) : readSmallStatus(value, version === 2 ? "object" : "text", fail);
  if (layout.problems.length > 0) failures.push({ property: "status", reason: layout.problems.join("; ") });
  if (
    failures.length > 0 ||
    version === undefined ||
    typeof clusterResourceId !== "string" ||
    driftList === undefined ||
    !isOptionalString(serviceManagedIdentity) ||
    !isOptionalString(skippedReason)
  ) {
    return { ok: false, failures };
  }
  return {
    ok: true,
    value: {
      schemaVersion: version,
      clusterResourceId,
      status: layout.status,
      drift: driftList,
      ...(layout.digest === undefined ? {} : { inputsDigest: layout.digest }),
      serviceManagedIdentity: serviceManagedIdentity ?? null,
      skippedReason: skippedReason ?? null,
    },
  };
}

type StoredLayout = { readonly status: OutputsStatus; readonly digest: string | undefined; readonly problems: readonly string[] };

/** Schema 1: documentId, the full subtree, and copies of the declared inputs (which `diff` no longer compares: it asks for an update). */
function readSchema1(value: Readonly<Record<string, JsonValue>>, fail: (property: string, expected: string) => void): StoredLayout {
  if (typeof value.documentId !== "string") fail("documentId", "a string");
  const status = isJsonObject(value.status) ? readStatusSubtree(value.status) : undefined;
  if (status === undefined) fail("status", "the status subtree (an object)");
  const operators = value.dataPlaneOperators;
  if (operators !== undefined && operators !== null && !(isJsonObject(operators) && Object.values(operators).every((id) => typeof id === "string"))) {
    fail("dataPlaneOperators", "a map of strings or null");
  }
  return {
    status: {
      ...(status?.status.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: status.status.earliestRecheckTime }),
      ...(status?.status.identities === undefined ? {} : { identities: status.status.identities }),
    },
    digest: undefined,
    problems: status?.problems ?? [],
  };
}

/** Schemas 2 and 3: the small status (an object in 2, its JSON text in 3) and the inputs' digest. */
function readSmallStatus(
  value: Readonly<Record<string, JsonValue>>,
  form: "object" | "text",
  fail: (property: string, expected: string) => void,
): StoredLayout {
  const digest = value.inputsDigest;
  if (typeof digest !== "string") fail("inputsDigest", "a string");
  if (form === "object" && !isJsonObject(value.status)) {
    fail("status", "the status (an object)");
    return { status: {}, digest: undefined, problems: [] };
  }
  const status = form === "object" ? readOutputsStatus(value.status) : readOutputsStatusText(value.status);
  return { status: status.status, digest: typeof digest === "string" ? digest : undefined, problems: status.problems };
}

function isOptionalString(value: unknown): value is string | null | undefined {
  return value === undefined || value === null || typeof value === "string";
}
