/**
 * The provider's boundary: its input and output shapes, and the parses that turn what the engine
 * hands over (untyped property bags) into typed values or failures naming the field: checked
 * inputs for `check`, stored outputs for diff, update and read. Pure: no I/O, no SDK imports.
 */
import { clusterResourceType, describeType, parseResourceIdOfType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import { isJsonObject } from "../core/json";
import type { DataPlaneOperatorsManagedIdentities } from "../core/serviceProviderClusterDocument";
import { outputsSchemaVersion, readStatusSubtree } from "../core/serviceProviderClusterDocument";

/** The engine's placeholder for a value not known during preview. */
export const unknownValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** The most operators one cluster may declare; a larger map is refused by `check`. */
export const maxDataPlaneOperators = 256;

/**
 * Checked inputs, as the provider receives them. During preview any value may be the engine's
 * {@link unknownValue}; for the strings that is just another string, for the map it is spelled out.
 */
export interface ProviderInputs {
  readonly clusterResourceId: string;
  /** Operator name → identity ARM ID; absent means "read from the cluster document". */
  readonly dataPlaneOperators?: Readonly<Record<string, string>> | typeof unknownValue;
  readonly serviceManagedIdentity?: string;
}

/** Outputs: the persisted status plus what a user needs to read it. Plain JSON only. */
export interface ProviderOutputs {
  readonly schemaVersion: number;
  readonly clusterResourceId: string;
  readonly dataPlaneOperators: Readonly<Record<string, string>> | null;
  readonly serviceManagedIdentity: string | null;
  readonly desiredSource: "inputs" | "clusterDocument";
  readonly documentId: string;
  readonly partitionKey: string;
  readonly serviceProviderClusterResourceId: string;
  /** `properties.status.dataPlaneOperatorsManagedIdentities` as persisted. */
  readonly status: DataPlaneOperatorsManagedIdentities;
  readonly identityCount: number;
  readonly resolvedCount: number;
  readonly notFoundCount: number;
  readonly failedCount: number;
  /** Why nothing was done, e.g. `clusterDeleting`; null otherwise. */
  readonly skippedReason: string | null;
  /** Differences `read` (refresh) found between state, Cosmos and Azure; the next update fixes them. */
  readonly drift: readonly string[];
}

/** A check failure. */
export interface CheckFailure {
  readonly property: string;
  readonly reason: string;
}

/** A parse at the boundary: the typed value, or the failures naming each field. */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failures: readonly CheckFailure[] };

/**
 * The part of stored outputs the provider reads back. Outputs of the current schema always carry
 * every {@link ProviderOutputs} field; the optional ones here may be missing from hand-edited state.
 */
export interface StoredOutputs {
  readonly schemaVersion: typeof outputsSchemaVersion;
  readonly clusterResourceId: string;
  readonly documentId: string;
  readonly status: DataPlaneOperatorsManagedIdentities;
  readonly drift: readonly string[];
  readonly dataPlaneOperators?: Readonly<Record<string, string>> | null;
  readonly serviceManagedIdentity?: string | null;
  readonly skippedReason?: string | null;
}

const knownProperties = ["clusterResourceId", "dataPlaneOperators", "serviceManagedIdentity"];

/** True when a value is, or contains, the engine's unknown placeholder. */
export function containsUnknown(value: unknown): boolean {
  if (value === unknownValue) {
    return true;
  }
  if (Array.isArray(value)) {
    return value.some(containsUnknown);
  }
  if (typeof value === "object" && value !== null) {
    return Object.values(value).some(containsUnknown);
  }
  return false;
}

/**
 * Validates and normalises inputs. Resource IDs come back in canonical form (canonical segment
 * names, other segments as given); operator maps with sorted keys. Unknown values pass through.
 * With failures, `inputs` holds the properties that passed.
 */
export function checkInputs(news: unknown): { inputs: Partial<ProviderInputs>; failures: CheckFailure[] } {
  const failures: CheckFailure[] = [];
  if (!isJsonObject(news)) {
    return { inputs: {}, failures: [{ property: "clusterResourceId", reason: `is required: the inputs are ${describeType(news)}, expected an object` }] };
  }
  for (const property of Object.keys(news)) {
    if (!knownProperties.includes(property) && !property.startsWith("__")) {
      failures.push({ property, reason: `is not a property of ServiceProviderClusterIdentityStatus; expected ${knownProperties.join(", ")}` });
    }
  }
  const inputs: { -readonly [Key in keyof ProviderInputs]?: ProviderInputs[Key] } = {};

  const cluster = news.clusterResourceId;
  if (cluster === undefined || cluster === null) {
    failures.push({ property: "clusterResourceId", reason: `is required: the ARM ID of the ${clusterResourceType} cluster` });
  } else if (cluster === unknownValue) {
    inputs.clusterResourceId = cluster;
  } else {
    const parsed = parseResourceIdOfType(cluster, clusterResourceType);
    if (parsed.ok) {
      inputs.clusterResourceId = parsed.resourceId.canonical;
    } else {
      failures.push({ property: "clusterResourceId", reason: parsed.reason });
    }
  }

  const operators = news.dataPlaneOperators;
  if (operators === unknownValue) {
    inputs.dataPlaneOperators = operators;
  } else if (operators !== undefined && operators !== null) {
    if (!isJsonObject(operators)) {
      failures.push({ property: "dataPlaneOperators", reason: `must be a map of operator name to identity resource ID, got ${describeType(operators)}` });
    } else {
      const entries = Object.entries(operators);
      if (entries.length > maxDataPlaneOperators) {
        failures.push({ property: "dataPlaneOperators", reason: `has ${entries.length} operators; at most ${maxDataPlaneOperators} are supported` });
      } else {
        const normalized: Record<string, string> = {};
        for (const [name, value] of entries.sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))) {
          const property = `dataPlaneOperators.${name}`;
          if (name.trim().length === 0) {
            failures.push({ property, reason: "operator name must not be empty or whitespace" });
          } else if (value === unknownValue) {
            normalized[name] = value;
          } else {
            const parsed = parseResourceIdOfType(value, userAssignedIdentityResourceType);
            if (parsed.ok) {
              normalized[name] = parsed.resourceId.canonical;
            } else {
              failures.push({ property, reason: `identity resource ID ${parsed.reason}` });
            }
          }
        }
        inputs.dataPlaneOperators = normalized;
      }
    }
  }

  const serviceManagedIdentity = news.serviceManagedIdentity;
  if (serviceManagedIdentity === unknownValue) {
    inputs.serviceManagedIdentity = serviceManagedIdentity;
  } else if (serviceManagedIdentity !== undefined && serviceManagedIdentity !== null) {
    const parsed = parseResourceIdOfType(serviceManagedIdentity, userAssignedIdentityResourceType);
    if (parsed.ok) {
      inputs.serviceManagedIdentity = parsed.resourceId.canonical;
    } else {
      failures.push({ property: "serviceManagedIdentity", reason: parsed.reason });
    }
  }
  return { inputs, failures };
}

/** {@link checkInputs} as a parse: the checked inputs when every property passed. */
export function parseInputs(news: unknown): Parsed<ProviderInputs> {
  const { inputs, failures } = checkInputs(news);
  const { clusterResourceId } = inputs;
  if (failures.length > 0 || clusterResourceId === undefined) {
    return { ok: false, failures };
  }
  return { ok: true, value: { ...inputs, clusterResourceId } };
}

/**
 * Reads stored outputs (state) of the shape this version understands; anything else (an older
 * provider's, a hand edit) is a failure, and the provider then treats the state as unknown.
 */
export function parseStoredOutputs(value: unknown): Parsed<StoredOutputs> {
  if (!isJsonObject(value)) {
    return { ok: false, failures: [{ property: "outputs", reason: `are ${describeType(value)}, expected an object` }] };
  }
  const failures: CheckFailure[] = [];
  const fail = (property: string, expected: string): void => {
    failures.push({ property, reason: `is ${describeType(value[property])}, expected ${expected}` });
  };
  const { schemaVersion, clusterResourceId, documentId, drift, dataPlaneOperators, serviceManagedIdentity, skippedReason } = value;
  if (schemaVersion !== outputsSchemaVersion) fail("schemaVersion", `${outputsSchemaVersion}`);
  if (typeof clusterResourceId !== "string") fail("clusterResourceId", "a string");
  if (typeof documentId !== "string") fail("documentId", "a string");
  const status = isJsonObject(value.status) ? readStatusSubtree(value.status) : undefined;
  if (status === undefined) fail("status", "the status subtree (an object)");
  else if (status.problems.length > 0) failures.push({ property: "status", reason: status.problems.join("; ") });
  const driftList = Array.isArray(drift) && drift.every((entry): entry is string => typeof entry === "string") ? drift : undefined;
  if (driftList === undefined) fail("drift", "a list of strings");
  const operators = isJsonObject(dataPlaneOperators) ? stringRecord(dataPlaneOperators) : undefined;
  if (dataPlaneOperators !== undefined && dataPlaneOperators !== null && operators === undefined) fail("dataPlaneOperators", "a map of strings or null");
  if (!isOptionalString(serviceManagedIdentity)) fail("serviceManagedIdentity", "a string or null");
  if (!isOptionalString(skippedReason)) fail("skippedReason", "a string or null");
  // The conditions again, for the compiler's narrowing; `failures` already names each of them.
  const narrowed = schemaVersion === outputsSchemaVersion && typeof clusterResourceId === "string" && typeof documentId === "string";
  if (
    failures.length > 0 ||
    !narrowed ||
    status === undefined ||
    driftList === undefined ||
    !isOptionalString(serviceManagedIdentity) ||
    !isOptionalString(skippedReason)
  ) {
    return { ok: false, failures };
  }
  return {
    ok: true,
    value: {
      schemaVersion,
      clusterResourceId,
      documentId,
      status: status.status,
      drift: driftList,
      ...(dataPlaneOperators === undefined ? {} : { dataPlaneOperators: operators ?? null }),
      ...(serviceManagedIdentity === undefined ? {} : { serviceManagedIdentity }),
      ...(skippedReason === undefined ? {} : { skippedReason }),
    },
  };
}

function isOptionalString(value: unknown): value is string | null | undefined {
  return value === undefined || value === null || typeof value === "string";
}

function stringRecord(value: Readonly<Record<string, unknown>>): Record<string, string> | undefined {
  const entries = Object.entries(value);
  return entries.every((entry): entry is [string, string] => typeof entry[1] === "string") ? Object.fromEntries(entries) : undefined;
}
