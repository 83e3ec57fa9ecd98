/** The provider's output boundary: the output shape, a pass's result as outputs, the parse of stored outputs. Pure. */
import { parseResourceIdOfType, describeType, userAssignedIdentityResourceType } from "../core/azureResourceId";
import { isJsonObject } from "../core/json";
import type { OutputsStatus, StatusReading } from "../core/outputsStatus";
import { encodeOutputsStatus, inputsDigest, operatorNamesFromKeys, operatorNamesFromOutputs, presentFields } from "../core/outputsStatus";
import { outputsStatusText, readOutputsStatusText } from "../core/outputsStatus";
import type { StoredMsiOutputs } from "../core/msiOutputs";
import { encodeMsiOutputs, readMsiOutputsText } from "../core/msiOutputs";
import type { MsiManagedIdentities } from "../core/msiManagedIdentities";
import { outputsSchemaVersion } from "../core/serviceProviderClusterDocument";
import type { Parsed, ProviderInputs } from "./providerInputs";
import type { DesiredSetFailure } from "../core/clusterDocument";
import { known } from "./providerInputs";
import type { SyncRequest, SyncResult } from "../sync/syncManagedIdentityStatus";
import type { RefreshResult } from "../sync/refreshManagedIdentityStatus";
import type { RunRecord } from "../report/runRecordFormat";
import { failedOutcomes } from "../report/runRecordFormat";
import { failureCauseOf } from "../core/clusterMessage";

/** Outputs: the persisted status plus what a user needs to read it; plain JSON, small, optional fields absent when empty. */
export interface ProviderOutputs {
  readonly schemaVersion: number;
  readonly clusterResourceId: string;
  /** {@link inputsDigest} of the declared `dataPlaneOperators` and `serviceManagedIdentity`: what `diff` compares. */
  readonly inputsDigest: string;
  /** The service managed identity read from the cluster document; absent when the inputs name one (or none is there). */
  readonly serviceManagedIdentity?: string;
  /** `properties.status.dataPlaneOperatorsManagedIdentities` as persisted, by operator name (core/outputsStatus.ts), as JSON text. */
  readonly status: string;
  /** `properties.status.msiManagedIdentities` as fingerprints (core/msiOutputs.ts), as JSON text. */
  readonly msiStatus: string;
  /** Why nothing was done, e.g. `clusterDeleting`; absent otherwise. */
  readonly skippedReason?: string;
  /** Why the MSI half was not looked at (`identityUrlNotSet`); absent otherwise. */
  readonly msiSkippedReason?: string;
  /** Differences `read` (refresh) found between state, Cosmos and Azure, which the next update fixes; absent when none. */
  readonly drift?: readonly string[];
  /** Why the last create or update of the cluster failed, and which halves; absent after a pass that succeeded. */
  readonly failure?: PassFailure;
}

/** The halves of the status, as the stack output names them, in the order outputs list them. */
export const halfNames = ["dataPlaneOperators", "msiIdentities"] as const;
export type HalfName = (typeof halfNames)[number];

/** A failed pass beside the status it kept: the engine stores these outputs with the error (a partial failure). */
export interface PassFailure {
  /** The cause, the same for every cluster that failed the same way (core/clusterMessage.ts). */
  readonly cause: string;
  /** The halves that failed or kept their IDs beside the failure. */
  readonly halves: readonly HalfName[];
}

/** The part of stored outputs the provider reads back, with absent fields filled in. */
export interface StoredOutputs {
  readonly clusterResourceId: string;
  readonly status: OutputsStatus;
  readonly drift: readonly string[];
  readonly inputsDigest: string;
  /** The service managed identity recorded from the cluster document; null when none. */
  readonly serviceManagedIdentity: string | null;
  readonly skippedReason: string | null;
  readonly msiStatus: StoredMsiOutputs;
  readonly msiSkippedReason: string | null;
  readonly failure: PassFailure | null;
}

/** The MSI half as outputs store it. */
export function msiStatusText(status: MsiManagedIdentities): string {
  return JSON.stringify(encodeMsiOutputs(status));
}

/** What `diff` compares of the inputs: the declared operator map, service managed identity and identity URL. */
export function inputsDigestOf(inputs: ProviderInputs): string {
  return inputsDigest(
    known(inputs.dataPlaneOperators) ?? null,
    inputs.serviceManagedIdentity ?? null,
    known(inputs.managedIdentitiesDataPlaneIdentityURL) ?? null,
  );
}

/** The declared operators' names with their identity's key, in the inputs' order (`check` refuses a malformed ID). */
export function declaredOperatorKeys(inputs: ProviderInputs): Array<readonly [string, string]> {
  return Object.entries(known(inputs.dataPlaneOperators) ?? {}).flatMap(([name, resourceId]) => {
    const parsed = parseResourceIdOfType(resourceId, userAssignedIdentityResourceType);
    return parsed.ok ? [[name, parsed.resourceId.key] as const] : [];
  });
}

/** What of a pass's result its outputs record. */
export type PassOutcome = Pick<SyncResult, "status"> & Partial<Pick<SyncResult, "serviceManagedIdentity" | "skippedReason" | "msiStatus" | "msiSkippedReason">>;

/** The outputs of a pass (and of a partial pass that failed on some identities). */
export function toOutputs(inputs: ProviderInputs, result: PassOutcome, drift: readonly string[]): ProviderOutputs {
  return {
    schemaVersion: outputsSchemaVersion,
    clusterResourceId: inputs.clusterResourceId,
    // Never unknown here: reconcile asked desiredFromInputs first, which refuses it.
    inputsDigest: inputsDigestOf(inputs),
    // Recorded only when it is not an input: the inputs are in state already.
    ...presentFields({ serviceManagedIdentity: inputs.serviceManagedIdentity === undefined ? result.serviceManagedIdentity : undefined }),
    status: outputsStatusText(encodeOutputsStatus(result.status, operatorNamesFromKeys(declaredOperatorKeys(inputs)))),
    msiStatus: msiStatusText(result.msiStatus ?? {}),
    ...presentFields({ skippedReason: result.skippedReason, msiSkippedReason: result.msiSkippedReason, drift }),
  };
}

/** The failure a failed pass's run record describes: its cause and the halves that failed or kept their IDs beside it. */
export function passFailureOf(record: Pick<RunRecord, "cluster" | "dataPlane" | "msi" | "message">): PassFailure {
  const outcomes = { dataPlaneOperators: record.dataPlane, msiIdentities: record.msi };
  return { cause: failureCauseOf(record.message ?? "", record.cluster), halves: halfNames.filter((half) => failedOutcomes.includes(outcomes[half])) };
}

/** The outputs of a failed pass: what it wrote (`partial`), else the stored outputs as they were (none for a create), the failure beside them. */
export function failedPassOutputs<Props extends object>(
  inputs: ProviderInputs,
  stored: Props | undefined,
  partial: PassOutcome | undefined,
  failure: PassFailure,
): object {
  const outputs = partial !== undefined ? toOutputs(inputs, partial, []) : (stored ?? toOutputs(inputs, { status: {} }, []));
  // The engine gives the program an output a partial failure leaves out as unknown: each optional one is null instead.
  return { serviceManagedIdentity: null, skippedReason: null, msiSkippedReason: null, drift: null, ...outputs, failure };
}

/**
 * The outputs a refresh leaves: the stored ones (`__provider` and fields this version does not read
 * included) with the status read from Cosmos, or kept when only the ServiceProviderCluster document is missing, and the drift.
 */
export function refreshedOutputs<Props extends ProviderOutputs>(props: Props, stored: StoredOutputs, result: RefreshResult): Props {
  const { drift: _drift, ...rest } = props;
  const status =
    result.presence === "present"
      ? { status: outputsStatusText(encodeOutputsStatus(result.status, operatorNamesFromOutputs(stored.status))), msiStatus: msiStatusText(result.msiStatus) }
      : {};
  return { ...rest, ...status, ...presentFields({ drift: result.drift }) } as Props;
}

/** The service managed identity and identity URL checked inputs declare (never the engine's unknown placeholder). */
export function declaredCredentialOf(inputs: ProviderInputs): Pick<SyncRequest, "serviceManagedIdentity" | "identityUrl"> {
  return presentFields({ serviceManagedIdentity: known(inputs.serviceManagedIdentity), identityUrl: known(inputs.managedIdentitiesDataPlaneIdentityURL) });
}

/**
 * Reads stored outputs of the one shape this version writes ({@link outputsSchemaVersion}). Anything
 * else (another schema version, a hand edit) fails, and the provider treats the state as unknown:
 * `diff` reports a change, `update` runs a full pass, `read` returns the outputs as they are.
 */
export function parseStoredOutputs(value: unknown): Parsed<StoredOutputs> {
  if (!isJsonObject(value)) {
    return { ok: false, failures: [{ property: "outputs", reason: `are ${describeType(value)}, expected an object` }] };
  }
  const failures: DesiredSetFailure[] = [];
  /** A field as `read` gives it, or undefined after naming what was expected. */
  const field = <T>(property: string, expected: string, read: (raw: unknown) => T | undefined): T | undefined => {
    const result = read(value[property]);
    if (result === undefined) failures.push({ property, reason: `is ${describeType(value[property])}, expected ${expected}` });
    return result;
  };
  const text = (raw: unknown): string | undefined => (typeof raw === "string" ? raw : undefined);
  const optionalText = (raw: unknown): string | null | undefined => (raw === undefined || raw === null ? null : text(raw));
  const reading = <Status>(property: string, read: StatusReading<Status>): Status => {
    if (read.problems.length > 0) failures.push({ property, reason: read.problems.join("; ") });
    return read.status;
  };
  field("schemaVersion", `${outputsSchemaVersion}`, (raw) => (raw === outputsSchemaVersion ? raw : undefined));
  const stored: { readonly [Key in keyof StoredOutputs]: StoredOutputs[Key] | undefined } = {
    clusterResourceId: field("clusterResourceId", "a string", text),
    inputsDigest: field("inputsDigest", "a string", text),
    // An empty drift list is left out (null after a failed pass).
    drift: field("drift", "a list of strings", (raw) =>
      raw === undefined || raw === null ? [] : Array.isArray(raw) && raw.every((line): line is string => typeof line === "string") ? raw : undefined,
    ),
    serviceManagedIdentity: field("serviceManagedIdentity", "a string or null", optionalText),
    skippedReason: field("skippedReason", "a string or null", optionalText),
    msiSkippedReason: field("msiSkippedReason", "a string or null", optionalText),
    failure: field("failure", "{cause, halves}", readPassFailure),
    status: reading("status", readOutputsStatusText(value.status)),
    msiStatus: reading("msiStatus", readMsiOutputsText(value.msiStatus)),
  };
  // Every field has its value when no failure was recorded.
  return failures.length > 0 ? { ok: false, failures } : { ok: true, value: stored as StoredOutputs };
}

/** A stored {@link PassFailure}: null when absent, undefined when malformed. */
function readPassFailure(value: unknown): PassFailure | null | undefined {
  if (value === undefined || value === null) return null;
  if (!isJsonObject(value) || typeof value.cause !== "string" || !Array.isArray(value.halves)) return undefined;
  const halves = value.halves.filter((half): half is HalfName => typeof half === "string" && (halfNames as readonly string[]).includes(half));
  return halves.length === value.halves.length ? { cause: value.cause, halves } : undefined;
}
