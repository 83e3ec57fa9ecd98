/** Desired sets: an operator → identity map's (inputs or a cluster document), and each half's from an HCPOpenShiftCluster document, which the hook never writes (docs/cosmos-data-flow.md). */
import { describeType, parseResourceIdOfType, userAssignedIdentityResourceType } from "./azureResourceId";
import type { DesiredIdentity } from "./statusHalf";
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject } from "./json";

const userAssignedIdentitiesPath = "properties.customerProperties.platform.operatorsAuthentication.userAssignedIdentities";

/** A per-field problem with the desired set, in the shape of a Pulumi check failure. */
export interface DesiredSetFailure {
  readonly property: string;
  readonly reason: string;
}

/** The desired set of an operator → identity ID map: validated, deduplicated case-insensitively (first operator's spelling), sorted by key. */
export function desiredIdentitySet(
  dataPlaneOperators: Readonly<Record<string, unknown>>,
  propertyPrefix = "dataPlaneOperators",
): { readonly identities: readonly DesiredIdentity[]; readonly failures: readonly DesiredSetFailure[] } {
  const byKey = new Map<string, string>();
  const failures: DesiredSetFailure[] = [];
  for (const operatorName of Object.keys(dataPlaneOperators).sort()) {
    const value = dataPlaneOperators[operatorName];
    const parsed = parseResourceIdOfType(value, userAssignedIdentityResourceType);
    let reason: string | undefined;
    if (operatorName.trim().length === 0) reason = "operator name must not be empty or whitespace";
    else if (value === null || value === undefined) reason = "identity resource ID is missing (null)";
    else if (!parsed.ok) reason = `identity resource ID ${parsed.reason}`;
    if (reason !== undefined) failures.push({ property: `${propertyPrefix}.${operatorName}`, reason });
    else if (parsed.ok && !byKey.has(parsed.resourceId.key)) byKey.set(parsed.resourceId.key, parsed.resourceId.canonical);
  }
  // Code-unit order (sort's default), independent of locale: the same on every machine.
  const identities = [...byKey.keys()].sort().map((key): DesiredIdentity => ({ key, resourceId: byKey.get(key) as string }));
  return { identities, failures };
}

const dataPlaneOperatorsPath = `${userAssignedIdentitiesPath}.dataPlaneOperators`;
const controlPlaneOperatorsPath = `${userAssignedIdentitiesPath}.controlPlaneOperators`;
const serviceManagedIdentityPath = `${userAssignedIdentitiesPath}.serviceManagedIdentity`;

/** What a cluster document asks of this hook: its desired set, deletion (which wins), or an unreadable set; a value, never an exception. */
export type ClusterDesiredSet = ClusterCredentialFields &
  (
    | { readonly kind: "desired"; readonly identities: readonly DesiredIdentity[] }
    | { readonly kind: "deleting" }
    | { readonly kind: "unreadable"; readonly problems: readonly string[] }
  );

/** The verdict on a cluster that is not being deleted: the one a pass decides on. */
export type LiveClusterDesiredSet = Exclude<ClusterDesiredSet, { kind: "deleting" }>;

/** What every verdict carries besides the data plane operators: the fields the credential and the MSI half read. */
export interface ClusterCredentialFields {
  readonly serviceManagedIdentity: string | undefined;
  /** `managedIdentitiesDataPlaneIdentityURL`: where the SMI's credential comes from. */
  readonly identityUrl: string | undefined;
  /** As stored, for the MSI half; undefined when absent. */
  readonly controlPlaneOperators: JsonValue | undefined;
}

/** The one reading of a cluster document: tolerates the omissions upstream tolerates; wrong types and a set that cannot be read are problems naming the field. */
export function desiredFromClusterDocument(document: JsonObject): ClusterDesiredSet {
  const problems: string[] = [];
  const properties = isJsonObject(document.properties) ? document.properties : undefined;
  if (properties === undefined) problems.push(`properties is ${describeType(document.properties)}, expected an object`);
  const identities = objectAt(properties, ["customerProperties", "platform", "operatorsAuthentication", "userAssignedIdentities"]);
  const serviceProviderProperties = objectAt(properties, ["serviceProviderProperties"]);
  const dataPlaneOperators = identities.dataPlaneOperators;
  if (dataPlaneOperators !== undefined && dataPlaneOperators !== null && !isJsonObject(dataPlaneOperators)) {
    problems.push(`${dataPlaneOperatorsPath} is ${describeType(dataPlaneOperators)}, expected an object`);
  }
  // A non-empty string; another type is a problem named by `path` (none for the deletion timestamp).
  const text = (value: JsonValue | undefined, path?: string): string | undefined => {
    if (typeof value === "string") return value.length > 0 ? value : undefined;
    if (value !== undefined && value !== null && path !== undefined) problems.push(`${path} is ${describeType(value)}, expected a string`);
    return undefined;
  };
  const fields: ClusterCredentialFields = {
    serviceManagedIdentity: text(identities.serviceManagedIdentity, serviceManagedIdentityPath),
    identityUrl: text(
      serviceProviderProperties.managedIdentitiesDataPlaneIdentityURL,
      "properties.serviceProviderProperties.managedIdentitiesDataPlaneIdentityURL",
    ),
    controlPlaneOperators: identities.controlPlaneOperators,
  };
  if (text(serviceProviderProperties.deletionTimestamp) !== undefined) return { kind: "deleting", ...fields };
  const desired = desiredIdentitySet(isJsonObject(dataPlaneOperators) ? dataPlaneOperators : {}, dataPlaneOperatorsPath);
  problems.push(...failureLines(desired.failures));
  return problems.length > 0 ? { kind: "unreadable", problems, ...fields } : { kind: "desired", identities: desired.identities, ...fields };
}

/** What the MSI half resolves for one cluster (control plane operators sorted by key). */
export interface MsiDesired {
  readonly controlPlaneOperators: readonly DesiredIdentity[];
  readonly serviceManagedIdentity: DesiredIdentity;
}

/** The MSI half's desired set from the cluster document's fields, or the problems (each naming the document field) that keep it from being read. */
export function msiDesiredSet(
  controlPlaneOperators: unknown,
  serviceManagedIdentity: string | undefined,
): { readonly ok: true; readonly desired: MsiDesired } | { readonly ok: false; readonly problems: readonly string[] } {
  const problems: string[] = [];
  if (!isJsonObject(controlPlaneOperators) && controlPlaneOperators !== undefined && controlPlaneOperators !== null) {
    problems.push(`${controlPlaneOperatorsPath} is ${describeType(controlPlaneOperators)}, expected an object`);
  }
  const { identities, failures } = desiredIdentitySet(isJsonObject(controlPlaneOperators) ? controlPlaneOperators : {}, controlPlaneOperatorsPath);
  problems.push(...failureLines(failures));
  const parsed = serviceManagedIdentity === undefined ? undefined : parseResourceIdOfType(serviceManagedIdentity, userAssignedIdentityResourceType);
  if (parsed === undefined) problems.push(`${serviceManagedIdentityPath} is not set; every cluster has a service managed identity`);
  else if (!parsed.ok) problems.push(`${serviceManagedIdentityPath}: identity resource ID ${parsed.reason}`);
  if (problems.length > 0 || parsed?.ok !== true) return { ok: false, problems };
  return {
    ok: true,
    desired: { controlPlaneOperators: identities, serviceManagedIdentity: { key: parsed.resourceId.key, resourceId: parsed.resourceId.canonical } },
  };
}

/** Desired-set failures as problems naming the document's fields. */
function failureLines(failures: readonly DesiredSetFailure[]): string[] {
  return failures.map((failure) => `${failure.property}: ${failure.reason}`);
}

/** The object at `path` under `start`; `{}` where there is none. */
function objectAt(start: JsonValue | undefined, path: readonly string[]): JsonObject {
  let current: JsonValue | undefined = start;
  for (const segment of path) current = isJsonObject(current) ? current[segment] : undefined;
  return isJsonObject(current) ? current : {};
}
