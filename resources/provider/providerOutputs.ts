/**
 * The provider's output boundary: the output shape (schema 2, small: core/outputsStatus.ts), how
 * a pass's result becomes outputs, and the parse of stored outputs (either schema) for diff,
 * update and read. Pure: no I/O, no SDK imports.
 */
import { parseResourceIdOfType, describeType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import type { JsonValue } from "../core/json";
import { isJsonObject } from "../core/json";
import { countEntries } from "../core/identityStatus";
import type { OperatorNamesByKeyHash, OutputsStatus } from "../core/outputsStatus";
import { dataPlaneOperatorsDigest, encodeOutputsStatus, operatorNamesFromKeys, readOutputsStatus } from "../core/outputsStatus";
import type { DataPlaneOperatorsManagedIdentities } from "../core/serviceProviderClusterDocument";
import { outputsSchemaVersion, readStatusSubtree } from "../core/serviceProviderClusterDocument";
import type { CheckFailure, Parsed, ProviderInputs } from "./providerInputs";
import { unknownValue } from "./providerInputs";
import type { SyncResult } from "../sync/syncManagedIdentityStatus";

/**
 * Outputs: the persisted status plus what a user needs to read it. Plain JSON only, and small:
 * the engine keeps them for every cluster and rewrites them on each `up` (schema 2; schema 1 also
 * repeated the declared map, the document's location and each identity's ARM ID twice).
 */
export interface ProviderOutputs {
  readonly schemaVersion: number;
  readonly clusterResourceId: string;
  /** {@link dataPlaneOperatorsDigest} of the declared map; null when the set is read from the cluster document. */
  readonly dataPlaneOperatorsDigest: string | null;
  readonly serviceManagedIdentity: string | null;
  readonly desiredSource: "inputs" | "clusterDocument";
  /** `properties.status.dataPlaneOperatorsManagedIdentities` as persisted, by operator name (core/outputsStatus.ts). */
  readonly status: OutputsStatus;
  readonly identityCount: number;
  readonly resolvedCount: number;
  readonly notFoundCount: number;
  readonly failedCount: number;
  /** Why nothing was done, e.g. `clusterDeleting`; null otherwise. */
  readonly skippedReason: string | null;
  /** Differences `read` (refresh) found between state, Cosmos and Azure; the next update fixes them. */
  readonly drift: readonly string[];
}

/**
 * The part of stored outputs the provider reads back, from either schema. Outputs of the current
 * schema always carry every {@link ProviderOutputs} field; the optional ones here may be missing
 * from hand-edited state.
 */
export interface StoredOutputs {
  readonly schemaVersion: 1 | typeof outputsSchemaVersion;
  readonly clusterResourceId: string;
  /** Schema 1's full subtree reads as `identities` alone. */
  readonly status: OutputsStatus;
  readonly drift: readonly string[];
  /** Digest of the declared map (schema 1: computed from its copy); null: read from the cluster document. */
  readonly dataPlaneOperatorsDigest?: string | null;
  readonly serviceManagedIdentity?: string | null;
  readonly skippedReason?: string | null;
}

/** The status and its counts, as outputs. */
export function statusOutputs(
  status: DataPlaneOperatorsManagedIdentities,
  operatorNames: OperatorNamesByKeyHash,
): Pick<ProviderOutputs, "status" | "identityCount" | "resolvedCount" | "notFoundCount" | "failedCount"> {
  return { status: encodeOutputsStatus(status, operatorNames), ...countEntries(status) };
}

/** The digest of the declared map; null when the set comes from the cluster document. */
export function digestOfInputs(inputs: ProviderInputs): string | null {
  const operators = inputs.dataPlaneOperators;
  return operators === undefined || operators === null || operators === unknownValue ? null : dataPlaneOperatorsDigest(operators);
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

/** The outputs of a pass (and of a partial pass that failed on some identities). */
export function toOutputs(inputs: ProviderInputs, result: SyncResult, drift: readonly string[]): ProviderOutputs {
  return {
    schemaVersion: outputsSchemaVersion,
    clusterResourceId: inputs.clusterResourceId,
    // Never unknown here: reconcile asked desiredFromInputs first, which refuses it.
    dataPlaneOperatorsDigest: digestOfInputs(inputs),
    serviceManagedIdentity: inputs.serviceManagedIdentity ?? result.serviceManagedIdentity ?? null,
    desiredSource: result.desiredSource,
    ...statusOutputs(result.status, operatorNamesOf(inputs)),
    skippedReason: result.skippedReason ?? null,
    drift: [...drift],
  };
}

/**
 * Reads stored outputs (state) of a shape this version understands: schema 2, or schema 1 as the
 * previous versions wrote it. Anything else (an older provider's, a hand edit) is a failure, and
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
  const version = schemaVersion === 1 || schemaVersion === outputsSchemaVersion ? schemaVersion : undefined;
  if (version === undefined) fail("schemaVersion", `1 or ${outputsSchemaVersion}`);
  if (typeof clusterResourceId !== "string") fail("clusterResourceId", "a string");
  const driftList = Array.isArray(drift) && drift.every((entry): entry is string => typeof entry === "string") ? drift : undefined;
  if (driftList === undefined) fail("drift", "a list of strings");
  if (!isOptionalString(serviceManagedIdentity)) fail("serviceManagedIdentity", "a string or null");
  if (!isOptionalString(skippedReason)) fail("skippedReason", "a string or null");
  const layout = version === 1 ? readSchema1(value, fail) : readSchema2(value, fail);
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
      ...(layout.digest === undefined ? {} : { dataPlaneOperatorsDigest: layout.digest }),
      ...(serviceManagedIdentity === undefined ? {} : { serviceManagedIdentity }),
      ...(skippedReason === undefined ? {} : { skippedReason }),
    },
  };
}

type StoredLayout = { readonly status: OutputsStatus; readonly digest: string | null | undefined; readonly problems: readonly string[] };

/** Schema 1: documentId, the full subtree, and a copy of the declared map. */
function readSchema1(value: Readonly<Record<string, JsonValue>>, fail: (property: string, expected: string) => void): StoredLayout {
  if (typeof value.documentId !== "string") fail("documentId", "a string");
  const status = isJsonObject(value.status) ? readStatusSubtree(value.status) : undefined;
  if (status === undefined) fail("status", "the status subtree (an object)");
  const operators = value.dataPlaneOperators;
  const map = isJsonObject(operators) ? stringRecord(operators) : undefined;
  if (operators !== undefined && operators !== null && map === undefined) fail("dataPlaneOperators", "a map of strings or null");
  return {
    status: {
      ...(status?.status.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: status.status.earliestRecheckTime }),
      ...(status?.status.identities === undefined ? {} : { identities: status.status.identities }),
    },
    digest: operators === undefined ? undefined : map === undefined ? null : dataPlaneOperatorsDigest(map),
    problems: status?.problems ?? [],
  };
}

/** Schema 2: the small status and the declared map's digest. */
function readSchema2(value: Readonly<Record<string, JsonValue>>, fail: (property: string, expected: string) => void): StoredLayout {
  const digest = value.dataPlaneOperatorsDigest;
  if (digest !== undefined && digest !== null && typeof digest !== "string") fail("dataPlaneOperatorsDigest", "a string or null");
  if (!isJsonObject(value.status)) {
    fail("status", "the status (an object)");
    return { status: {}, digest: undefined, problems: [] };
  }
  const status = readOutputsStatus(value.status);
  return { status: status.status, digest: typeof digest === "string" || digest === null ? digest : undefined, problems: status.problems };
}

function isOptionalString(value: unknown): value is string | null | undefined {
  return value === undefined || value === null || typeof value === "string";
}

function stringRecord(value: Readonly<Record<string, unknown>>): Record<string, string> | undefined {
  const entries = Object.entries(value);
  return entries.every((entry): entry is [string, string] => typeof entry[1] === "string") ? Object.fromEntries(entries) : undefined;
}
