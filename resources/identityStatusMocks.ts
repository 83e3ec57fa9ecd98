/** The state a `pulumi.runtime.setMocks` test returns for a ServiceProviderClusterIdentityStatus. */
import { parseResourceIdOfType, userAssignedIdentityResourceType } from "./core/azureResourceId";
import { goToLower } from "./core/goStrings";
import { isJsonObject } from "./core/json";
import { keyHashOf, presentFields } from "./core/outputsStatus";
import type { DataPlaneOperatorManagedIdentityEntry } from "./core/serviceProviderClusterDocument";
import { dataPlaneHalf } from "./core/serviceProviderClusterDocument";
import { known, parseInputs } from "./provider/providerInputs";
import type { HalfName, PassFailure } from "./provider/providerOutputs";
import { declaredOperatorKeys, halfNames, toOutputs } from "./provider/providerOutputs";
import { msiHalf } from "./core/msiManagedIdentities";

/** One identity's recorded values in a mocked status: what `status.operators[name]` shows. */
export interface MockedIdentityEntry {
  readonly clientId?: string;
  readonly principalId?: string;
  /** The failed lookup as the provider words it: `ResourceNotFound (HTTP 404): …` counts as not found, any other as failed. */
  readonly retrievalError?: string;
}

/** The status a mock records. Every field is optional, so a mock written today keeps compiling. */
export interface IdentityStatusMock {
  /** By operator name; each name must be one the resource's `dataPlaneOperators` input declares. */
  readonly operators?: Readonly<Record<string, MockedIdentityEntry>>;
  /** Entries no declared operator names, keyed by the identity's ARM ID in any case. */
  readonly identities?: Readonly<Record<string, MockedIdentityEntry>>;
  /** RFC 3339; absent unless the test sets it. */
  readonly earliestRecheckTime?: string;
  /** The MSI half (the `msiStatus` output): control plane operator identities by ARM ID, the service managed identity, its recheck time. */
  readonly msi?: {
    readonly controlPlaneOperators?: Readonly<Record<string, { readonly clientId?: string; readonly principalId?: string }>>;
    readonly serviceManagedIdentity?: { readonly resourceId: string; readonly clientId?: string; readonly principalId?: string };
    readonly earliestRecheckTime?: string;
  };
  /** A last create or update that failed (the `failure` output): its cause, and the halves it failed (both when left out). */
  readonly failure?: { readonly cause: string; readonly halves?: readonly HalfName[] };
}

const entryFields = ["clientId", "principalId", "retrievalError"] as const;

/**
 * The mock state of one resource for `pulumi.runtime.setMocks`' `newResource`, made by the
 * provider's own output code: `status` as given (`{}` when none), the other outputs as the provider
 * returns them. Inputs or a status the provider could not produce throw, naming the field.
 */
export function identityStatusMockState(inputs: unknown, given?: IdentityStatusMock | null): Record<string, unknown> {
  const status: IdentityStatusMock = given ?? {};
  const parsed = parseInputs(inputs);
  if (!parsed.ok) throw mockError(parsed.failures.map((failure) => `inputs.${failure.property} ${failure.reason}`));
  const providerInputs = parsed.value;
  const problems: string[] = [];
  const declared = known(providerInputs.dataPlaneOperators) ?? {};
  const keys = new Map(declaredOperatorKeys(providerInputs));
  const identities: Record<string, DataPlaneOperatorManagedIdentityEntry> = {};
  const record = (property: string, key: string, entry: DataPlaneOperatorManagedIdentityEntry): void => {
    const earlier = identities[key];
    if (earlier !== undefined && JSON.stringify(earlier) !== JSON.stringify(entry)) {
      problems.push(`${property} names the same identity as another entry with other values; the provider records one entry per identity`);
    }
    identities[key] = earlier ?? entry;
  };

  for (const [name, value] of Object.entries(objectField(status.operators, "status.operators", problems))) {
    const property = `status.operators['${name}']`;
    const resourceId = declared[name];
    if (resourceId === undefined) {
      const names = Object.keys(declared);
      problems.push(
        `${property}: the inputs' dataPlaneOperators ${names.length === 0 ? "declare no operator" : `declare ${names.map((known) => `'${known}'`).join(", ")}, not '${name}'`}; ` +
          "the status names declared operators only: put an identity no operator names under status.identities, keyed by its ARM ID",
      );
      continue;
    }
    const key = keys.get(name);
    if (key === undefined) continue;
    const values = entryValues(value, property, problems, ["keyHash"]);
    if (isJsonObject(value) && value.keyHash !== undefined && value.keyHash !== keyHashOf(key)) {
      problems.push(`${property}.keyHash is not the hash of the declared identity; leave it out: it is computed`);
    }
    record(property, key, { resourceID: resourceId, ...values });
  }

  for (const [identityId, value] of Object.entries(objectField(status.identities, "status.identities", problems))) {
    const property = `status.identities['${identityId}']`;
    const parsed = parseResourceIdOfType(identityId, userAssignedIdentityResourceType);
    if (!parsed.ok) {
      problems.push(`${property}: the key ${parsed.reason}`);
      continue;
    }
    const operator = [...keys].find(([, key]) => key === parsed.resourceId.key)?.[0];
    if (operator !== undefined) {
      problems.push(`${property}: the inputs declare this identity as operator '${operator}'; put its entry under status.operators['${operator}']`);
      continue;
    }
    const values = entryValues(value, property, problems, ["resourceID"]);
    const resourceID = isJsonObject(value) && typeof value.resourceID === "string" ? value.resourceID : identityId;
    if (goToLower(resourceID) !== goToLower(identityId)) problems.push(`${property}.resourceID names another identity than its key`);
    record(property, parsed.resourceId.key, { resourceID, ...values });
  }

  const subtree = dataPlaneHalf.readSubtree({
    identities,
    ...(status.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: status.earliestRecheckTime }),
  });
  problems.push(...subtree.problems.map((problem) => `status.${problem}`));
  const msi = msiHalf.readSubtree(
    status.msi === undefined
      ? undefined
      : {
          ...(status.msi.earliestRecheckTime === undefined ? {} : { earliestRecheckTime: status.msi.earliestRecheckTime }),
          controlPlaneOperatorsIdentities: Object.fromEntries(
            Object.entries(status.msi.controlPlaneOperators ?? {}).map(([resourceId, values]) => [goToLower(resourceId), { resourceId, ...values }]),
          ),
          ...(status.msi.serviceManagedIdentity === undefined ? {} : { serviceManagedIdentity: { ...status.msi.serviceManagedIdentity } }),
        },
  );
  problems.push(...msi.problems.map((problem) => `status.msi: ${problem}`));
  const failure = mockedFailure(status.failure, problems);
  if (problems.length > 0) throw mockError(problems);

  return { ...toOutputs(providerInputs, { status: subtree.status, msiStatus: msi.status }, []), ...presentFields({ failure }) };
}

/** The mocked failure as the provider records it; what is malformed is a problem naming it. */
function mockedFailure(value: IdentityStatusMock["failure"], problems: string[]): PassFailure | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isJsonObject(value) || typeof value.cause !== "string" || value.cause.length === 0) {
    problems.push("status.failure must be { cause: a non-empty string, halves?: a list of dataPlaneOperators, msiIdentities }");
    return undefined;
  }
  const halves = value.halves ?? halfNames;
  const unknown = halves.filter((half) => !halfNames.includes(half));
  if (unknown.length > 0)
    problems.push(`status.failure.halves names ${unknown.map((half) => `'${String(half)}'`).join(", ")}; expected ${halfNames.join(", ")}`);
  return { cause: value.cause, halves: [...halves] };
}

/** A map of the mocked status, or a problem naming it when it is not an object. */
function objectField(value: unknown, property: string, problems: string[]): Readonly<Record<string, unknown>> {
  if (value === undefined || value === null) return {};
  if (isJsonObject(value)) return value;
  problems.push(`${property} is not an object of entries`);
  return {};
}

/** The recorded values of one mocked entry; fields it may not have are problems naming them. */
function entryValues(
  value: unknown,
  property: string,
  problems: string[],
  alsoAllowed: readonly string[],
): Omit<DataPlaneOperatorManagedIdentityEntry, "resourceID"> {
  if (!isJsonObject(value)) {
    problems.push(`${property} is not an object of ${entryFields.join(", ")}`);
    return {};
  }
  const values: { -readonly [Field in (typeof entryFields)[number]]?: string } = {};
  for (const [field, fieldValue] of Object.entries(value)) {
    if ((entryFields as readonly string[]).includes(field)) {
      if (typeof fieldValue === "string") values[field as (typeof entryFields)[number]] = fieldValue;
      else if (fieldValue !== undefined && fieldValue !== null) problems.push(`${property}.${field} is not a string`);
    } else if (!alsoAllowed.includes(field)) {
      problems.push(`${property}.${field} is not a field of an entry; expected ${entryFields.join(", ")}`);
    }
  }
  return values;
}

function mockError(problems: readonly string[]): Error {
  return new Error(`identityStatusMockState: ${problems.length === 1 ? problems[0] : `\n  - ${problems.join("\n  - ")}`}`);
}
