/** The provider's inputs, and the check that turns the engine's untyped property bag into them or into failures naming each field. Pure. */
import type { ParsedResourceId } from "../core/azureResourceId";
import { clusterResourceType, describeType, parseResourceIdOfType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import type { DesiredSetFailure } from "../core/clusterDocument";
import { desiredIdentitySet } from "../core/clusterDocument";
import type { DesiredIdentity } from "../core/statusHalf";
import { isJsonObject } from "../core/json";

/** The engine's placeholder for a value not known during preview. */
export const unknownValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** The most operators one cluster may declare; a larger map is refused by `check`. */
export const maxDataPlaneOperators = 256;

/** Checked inputs. During preview any value may be the engine's {@link unknownValue}. */
export interface ProviderInputs {
  readonly clusterResourceId: string;
  /** Operator name → identity ARM ID; absent means "read from the cluster document". */
  readonly dataPlaneOperators?: Readonly<Record<string, string>> | typeof unknownValue;
  readonly serviceManagedIdentity?: string;
  /** Where the Managed Identities data plane serves the SMI's credential; absent means "read from the cluster document". */
  readonly managedIdentitiesDataPlaneIdentityURL?: string;
}

/** A parse at the boundary: the typed value, or the failures naming each field (as Pulumi's check reports them). */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failures: readonly DesiredSetFailure[] };

/** One input value's check: its normalised form, or what is wrong with it. */
type Check = (value: unknown) => { reason: string } | { value: string };

const knownProperties = ["clusterResourceId", "dataPlaneOperators", "serviceManagedIdentity", "managedIdentitiesDataPlaneIdentityURL"];

/** A checked input's value; undefined when absent or the engine's unknown placeholder. */
export function known<Value>(value: Value | typeof unknownValue | undefined): Value | undefined {
  return value === unknownValue ? undefined : value;
}

/** True when a value is, or contains, the engine's unknown placeholder. */
export function containsUnknown(value: unknown): boolean {
  return value === unknownValue || (typeof value === "object" && value !== null && Object.values(value).some(containsUnknown));
}

/**
 * Validates and normalises inputs: resource IDs in canonical form, operator maps with sorted keys,
 * unknown values as they are. With failures, `inputs` holds the properties that passed.
 */
export function checkInputs(news: unknown): { inputs: Partial<ProviderInputs>; failures: DesiredSetFailure[] } {
  if (!isJsonObject(news)) {
    return { inputs: {}, failures: [{ property: "clusterResourceId", reason: `is required: the inputs are ${describeType(news)}, expected an object` }] };
  }
  const failures: DesiredSetFailure[] = Object.keys(news)
    .filter((property) => !knownProperties.includes(property) && !property.startsWith("__"))
    .map((property) => ({ property, reason: `is not a property of ServiceProviderClusterIdentityStatus; expected ${knownProperties.join(", ")}` }));
  /** One value: the unknown placeholder as it is, else its checked form, or undefined after recording why not. */
  const check = (property: string, value: unknown, parse: Check): string | undefined => {
    const checked = value === unknownValue ? { value } : parse(value);
    if ("value" in checked) return checked.value;
    failures.push({ property, reason: checked.reason });
    return undefined;
  };
  const inputs: { -readonly [Key in keyof ProviderInputs]?: ProviderInputs[Key] } = {};
  /** A string property, when present, checked into `inputs`. */
  const checkInto = (property: Exclude<keyof ProviderInputs, "dataPlaneOperators">, parse: Check): void => {
    const checked = news[property] === undefined || news[property] === null ? undefined : check(property, news[property], parse);
    if (checked !== undefined) inputs[property] = checked;
  };

  if (news.clusterResourceId === undefined || news.clusterResourceId === null) {
    failures.push({ property: "clusterResourceId", reason: `is required: the ARM ID of the ${clusterResourceType} cluster` });
  }
  checkInto("clusterResourceId", resourceIdOf(clusterResourceType));
  const operators = news.dataPlaneOperators;
  if (operators === unknownValue) {
    inputs.dataPlaneOperators = operators;
  } else if (operators !== undefined && operators !== null) {
    const count = isJsonObject(operators) ? Object.keys(operators).length : 0;
    if (!isJsonObject(operators)) {
      failures.push({ property: "dataPlaneOperators", reason: `must be a map of operator name to identity resource ID, got ${describeType(operators)}` });
    } else if (count > maxDataPlaneOperators) {
      failures.push({ property: "dataPlaneOperators", reason: `has ${count} operators; at most ${maxDataPlaneOperators} are supported` });
    } else {
      const normalized: Record<string, string> = {};
      for (const name of Object.keys(operators).sort()) {
        const property = `dataPlaneOperators.${name}`;
        if (name.trim().length === 0) {
          failures.push({ property, reason: "operator name must not be empty or whitespace" });
          continue;
        }
        const identity = check(property, operators[name], resourceIdOf(userAssignedIdentityResourceType, "identity resource ID "));
        if (identity !== undefined) normalized[name] = identity;
      }
      inputs.dataPlaneOperators = normalized;
    }
  }
  checkInto("serviceManagedIdentity", resourceIdOf(userAssignedIdentityResourceType));
  checkInto("managedIdentitiesDataPlaneIdentityURL", identityUrlProblem);
  return { inputs, failures };
}

/** {@link checkInputs} as a parse: the checked inputs when every property passed. */
export function parseInputs(news: unknown): Parsed<ProviderInputs> {
  const { inputs, failures } = checkInputs(news);
  const { clusterResourceId } = inputs;
  return failures.length > 0 || clusterResourceId === undefined ? { ok: false, failures } : { ok: true, value: { ...inputs, clusterResourceId } };
}

/** The cluster of a resource, or a TypeError naming clusterResourceId. */
export function parseCluster(clusterResourceId: string): ParsedResourceId {
  const parsed = parseResourceIdOfType(clusterResourceId, clusterResourceType);
  if (!parsed.ok) throw new TypeError(`clusterResourceId ${parsed.reason}`);
  return parsed.resourceId;
}

/** The declared set of checked inputs, or undefined when the cluster document holds it. */
export function desiredFromInputs(inputs: ProviderInputs): readonly DesiredIdentity[] | undefined {
  if (inputs.dataPlaneOperators === undefined) return undefined;
  if (inputs.dataPlaneOperators === unknownValue) {
    // Only a preview passes unknowns, and diff answers those before asking for the set.
    throw new TypeError("dataPlaneOperators is not known yet; the engine passes unknown values only to a preview");
  }
  const { identities, failures } = desiredIdentitySet(inputs.dataPlaneOperators);
  if (failures.length > 0) throw new TypeError(failures.map((failure) => `${failure.property}: ${failure.reason}`).join("; "));
  return identities;
}

/** A resource ID of the type in canonical form, or what is wrong with it. */
function resourceIdOf(type: string, prefix = ""): Check {
  return (value) => {
    const parsed = parseResourceIdOfType(value, type);
    return parsed.ok ? { value: parsed.resourceId.canonical } : { reason: prefix + parsed.reason };
  };
}

/** An https:// identity URL, its query kept as given, or what is wrong with it. */
function identityUrlProblem(value: unknown): ReturnType<Check> {
  if (typeof value !== "string") return { reason: `must be a string, got ${describeType(value)}` };
  if (!URL.canParse(value)) {
    return { reason: "is not a URL; expected the https:// URL of the cluster's service managed identity at the Managed Identities data plane" };
  }
  const { protocol } = new URL(value);
  return protocol === "https:" ? { value } : { reason: `must use https:// (got ${protocol}//)` };
}
