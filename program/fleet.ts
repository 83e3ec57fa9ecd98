/**
 * Which clusters the program declares: the stack config's `clusters` list or, when none is
 * configured, the demo fleet of a running sandbox (`.sandbox/endpoints.json`).
 */
import { existsSync, readFileSync } from "node:fs";

/** One cluster as configured. `dataPlaneOperators` omitted → read from the cluster document. */
export interface ClusterDeclaration {
  readonly clusterResourceId: string;
  readonly dataPlaneOperators?: Readonly<Record<string, string>>;
  readonly serviceManagedIdentity?: string;
  readonly managedIdentitiesDataPlaneIdentityURL?: string;
}

const fields = ["clusterResourceId", "dataPlaneOperators", "serviceManagedIdentity", "managedIdentitiesDataPlaneIdentityURL"];

/** Validates the `clusters` config value; messages name `clusters[i].<field>`. */
export function parseClusterList(value: unknown, source: string): ClusterDeclaration[] {
  if (!Array.isArray(value)) {
    throw new TypeError(
      `${source} must be a list of clusters ({clusterResourceId, dataPlaneOperators?, serviceManagedIdentity?, managedIdentitiesDataPlaneIdentityURL?})`,
    );
  }
  return value.map((item: unknown, index): ClusterDeclaration => {
    const where = `${source}[${index}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      throw new TypeError(`${where} must be an object with clusterResourceId`);
    }
    const record = item as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      if (!fields.includes(key)) {
        throw new TypeError(`${where}.${key} is not a known field; expected ${fields.join(", ")}`);
      }
    }
    if (typeof record.clusterResourceId !== "string") {
      throw new TypeError(`${where}.clusterResourceId must be a string (the cluster's ARM ID)`);
    }
    // Values are passed through as given: the provider's check names anything malformed.
    return {
      clusterResourceId: record.clusterResourceId,
      ...(record.dataPlaneOperators === undefined ? {} : { dataPlaneOperators: record.dataPlaneOperators as Record<string, string> }),
      ...(record.serviceManagedIdentity === undefined ? {} : { serviceManagedIdentity: record.serviceManagedIdentity as string }),
      ...(record.managedIdentitiesDataPlaneIdentityURL === undefined
        ? {}
        : { managedIdentitiesDataPlaneIdentityURL: record.managedIdentitiesDataPlaneIdentityURL as string }),
    };
  });
}

/** Reads a cluster list (the same shape as the `clusters` config) from a JSON file. */
export function clusterListFromFile(file: string, source: string): ClusterDeclaration[] {
  if (!existsSync(file)) {
    throw new Error(`${source} names ${file}, which does not exist`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${source} names ${file}, which is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  return parseClusterList(parsed, `${source} (${file})`);
}
