/**
 * The provider's input and output shapes, and the pure `check` logic that validates and
 * normalises inputs. Serialized with the provider by value: no I/O, no SDK imports.
 */
import { clusterResourceType, describeType, parseResourceIdOfType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import type { DataPlaneOperatorsManagedIdentities } from "../core/serviceProviderClusterDocument";
import { outputsSchemaVersion } from "../core/serviceProviderClusterDocument";

/** The engine's placeholder for a value not known during preview. */
export const unknownValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** The most operators one cluster may declare; a larger map is refused by `check`. */
export const maxDataPlaneOperators = 256;

/** Checked inputs, as the provider receives them. */
export interface ProviderInputs {
  readonly clusterResourceId: string;
  /** Operator name → identity ARM ID; absent means "read from the cluster document". */
  readonly dataPlaneOperators?: Readonly<Record<string, string>>;
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
 */
export function checkInputs(news: Readonly<Record<string, unknown>>): { inputs: Record<string, unknown>; failures: CheckFailure[] } {
  const failures: CheckFailure[] = [];
  const inputs: Record<string, unknown> = {};
  for (const property of Object.keys(news)) {
    if (!knownProperties.includes(property) && !property.startsWith("__")) {
      failures.push({ property, reason: `is not a property of ServiceProviderClusterIdentityStatus; expected ${knownProperties.join(", ")}` });
    }
  }

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
    if (typeof operators !== "object" || Array.isArray(operators)) {
      failures.push({ property: "dataPlaneOperators", reason: `must be a map of operator name to identity resource ID, got ${describeType(operators)}` });
    } else {
      const entries = Object.entries(operators as Record<string, unknown>);
      if (entries.length > maxDataPlaneOperators) {
        failures.push({ property: "dataPlaneOperators", reason: `has ${entries.length} operators; at most ${maxDataPlaneOperators} are supported` });
      } else {
        const normalized: Record<string, unknown> = {};
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

/** True when stored outputs have the shape this version understands. */
export function isCurrentOutputs(value: Readonly<Record<string, unknown>>): value is Record<string, unknown> & ProviderOutputs {
  return (
    value.schemaVersion === outputsSchemaVersion &&
    typeof value.clusterResourceId === "string" &&
    typeof value.documentId === "string" &&
    typeof value.status === "object" &&
    value.status !== null &&
    Array.isArray(value.drift)
  );
}
