/** Reads what the hook needs from an HCPOpenShiftCluster document, which it never writes (docs/cosmos-data-flow.md). Pure. */
import { describeType } from "./azureResourceId";
import type { DesiredIdentity } from "./identityStatus";
import { desiredIdentitySet } from "./identityStatus";
import type { JsonObject, JsonValue } from "./json";
import { isJsonObject } from "./json";

const userAssignedIdentitiesPath = "properties.customerProperties.platform.operatorsAuthentication.userAssignedIdentities";

/** The fields of a cluster document this hook reads (under `…userAssignedIdentities` and `serviceProviderProperties`); `problems` name wrong types. */
export interface ClusterDocumentView {
  /** Operator → identity ID; empty when absent. */
  readonly dataPlaneOperators: Readonly<Record<string, JsonValue>>;
  readonly serviceManagedIdentity: string | undefined;
  /** As stored, for the MSI half; undefined when absent. */
  readonly controlPlaneOperators: JsonValue | undefined;
  /** `managedIdentitiesDataPlaneIdentityURL`: where the SMI's credential comes from. */
  readonly identityUrl: string | undefined;
  readonly deletionTimestamp: string | undefined;
  readonly problems: readonly string[];
}

const dataPlaneOperatorsPath = `${userAssignedIdentitiesPath}.dataPlaneOperators`;

/** Extracts the view; tolerates the omissions upstream tolerates, reports wrong types. */
export function readClusterDocument(document: JsonObject): ClusterDocumentView {
  const problems: string[] = [];
  const properties = isJsonObject(document.properties) ? document.properties : undefined;
  if (properties === undefined) {
    problems.push(`properties is ${describeType(document.properties)}, expected an object`);
  }
  const identities = walk(properties, ["customerProperties", "platform", "operatorsAuthentication", "userAssignedIdentities"]);
  let dataPlaneOperators: Record<string, JsonValue> = {};
  const rawOperators = isJsonObject(identities) ? identities.dataPlaneOperators : undefined;
  if (isJsonObject(rawOperators)) {
    dataPlaneOperators = rawOperators;
  } else if (rawOperators !== undefined && rawOperators !== null) {
    problems.push(`${dataPlaneOperatorsPath} is ${describeType(rawOperators)}, expected an object`);
  }
  const rawServiceManagedIdentity = isJsonObject(identities) ? identities.serviceManagedIdentity : undefined;
  if (rawServiceManagedIdentity !== undefined && rawServiceManagedIdentity !== null && typeof rawServiceManagedIdentity !== "string") {
    problems.push(`${userAssignedIdentitiesPath}.serviceManagedIdentity is ${describeType(rawServiceManagedIdentity)}, expected a string`);
  }
  const serviceProviderProperties = walk(properties, ["serviceProviderProperties"]);
  const rawDeletion = isJsonObject(serviceProviderProperties) ? serviceProviderProperties.deletionTimestamp : undefined;
  const rawIdentityUrl = isJsonObject(serviceProviderProperties) ? serviceProviderProperties.managedIdentitiesDataPlaneIdentityURL : undefined;
  if (rawIdentityUrl !== undefined && rawIdentityUrl !== null && typeof rawIdentityUrl !== "string") {
    problems.push(`properties.serviceProviderProperties.managedIdentitiesDataPlaneIdentityURL is ${describeType(rawIdentityUrl)}, expected a string`);
  }
  return {
    dataPlaneOperators,
    serviceManagedIdentity: typeof rawServiceManagedIdentity === "string" && rawServiceManagedIdentity.length > 0 ? rawServiceManagedIdentity : undefined,
    controlPlaneOperators: isJsonObject(identities) ? identities.controlPlaneOperators : undefined,
    identityUrl: typeof rawIdentityUrl === "string" && rawIdentityUrl.length > 0 ? rawIdentityUrl : undefined,
    deletionTimestamp: typeof rawDeletion === "string" && rawDeletion.length > 0 ? rawDeletion : undefined,
    problems,
  };
}

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
  readonly identityUrl: string | undefined;
  readonly controlPlaneOperators: JsonValue | undefined;
}

/** The one reading of the desired set from a cluster document; problems name the document's fields. */
export function desiredFromClusterDocument(document: JsonObject): ClusterDesiredSet {
  const view = readClusterDocument(document);
  const fields: ClusterCredentialFields = {
    serviceManagedIdentity: view.serviceManagedIdentity,
    identityUrl: view.identityUrl,
    controlPlaneOperators: view.controlPlaneOperators,
  };
  if (view.deletionTimestamp !== undefined) return { kind: "deleting", ...fields };
  const { identities, failures } = desiredIdentitySet(view.dataPlaneOperators, dataPlaneOperatorsPath);
  const problems = [...view.problems, ...failures.map((failure) => `${failure.property}: ${failure.reason}`)];
  return problems.length > 0 ? { kind: "unreadable", problems, ...fields } : { kind: "desired", identities, ...fields };
}

function walk(start: JsonValue | undefined, path: readonly string[]): JsonValue | undefined {
  let current: JsonValue | undefined = start;
  for (const segment of path) {
    if (!isJsonObject(current)) return undefined;
    current = current[segment];
  }
  return current;
}
