/** The MSI half, `properties.status.msiManagedIdentities`, as upstream's FetchMSIIdentitiesInfo writes it (note `resourceId`, not `resourceID`). */
import type { StoredHalf } from "./goJson";
import type { DesiredIdentity, Half } from "./statusHalf";
import { defineHalf } from "./statusHalf";

/** One identity's entry (a control plane operator's, or the SMI's). Written by: FetchMSIIdentitiesInfo and this hook. */
export interface MsiIdentityEntry {
  readonly resourceId?: string;
  readonly clientId?: string;
  readonly principalId?: string;
}

/** `properties.status.msiManagedIdentities`. Written by: FetchMSIIdentitiesInfo and this hook. */
export interface MsiManagedIdentities {
  readonly earliestRecheckTime?: string;
  /** Keyed by the lowercased identity resource ID. */
  readonly controlPlaneOperatorsIdentities?: Readonly<Record<string, MsiIdentityEntry>>;
  readonly serviceManagedIdentity?: MsiIdentityEntry;
}

/** What the MSI half resolves for one cluster (control plane operators sorted by key). */
export interface MsiDesired {
  readonly controlPlaneOperators: readonly DesiredIdentity[];
  readonly serviceManagedIdentity: DesiredIdentity;
}

/** The MSI half: upstream's `MSIManagedIdentities` struct (core/statusHalf.ts). */
export const msiHalf: Half<MsiManagedIdentities, MsiDesired> = defineHalf(
  {
    name: "msiManagedIdentities",
    problemsNamed: { subtree: "msiManagedIdentities", fieldPrefix: "msiManagedIdentities." },
    fields: { earliestRecheckTime: "time", controlPlaneOperatorsIdentities: "map", serviceManagedIdentity: "entry" },
    entryFields: ["resourceId", "clientId", "principalId"],
  },
  (desired) => ({ controlPlaneOperatorsIdentities: desired.controlPlaneOperators, serviceManagedIdentity: desired.serviceManagedIdentity }),
);

export type StoredMsiStatus = StoredHalf<MsiManagedIdentities>;
