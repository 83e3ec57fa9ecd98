/**
 * The MSI half's one answer about a cluster's identities: the data plane, asked once for all as
 * upstream's FetchMSIIdentitiesInfo does, or in `fixedIdentity` mode upstream's stand-in (the fixed
 * identity's IDs for every identity, without a call).
 */
import type { MsiAnswerEntry, StandIn } from "../core/msiManagedIdentities";
import { standInAnswer } from "../core/msiManagedIdentities";
import type { ManagedIdentitiesDataPlane } from "./managedIdentitiesDataPlane";

/** One answer naming every identity asked for. */
export interface MsiAnswerSource {
  answer(identityUrl: string, identityIds: readonly string[], options: { readonly abortSignal: AbortSignal }): Promise<readonly MsiAnswerEntry[]>;
  /** Set for upstream's stand-in: the IDs it answers for every identity. */
  readonly standIn?: StandIn;
}

/** The data plane as the first party asks it; each entry's IDs only, never its credential. */
export function dataPlaneMsiAnswers(dataPlane: ManagedIdentitiesDataPlane): MsiAnswerSource {
  return {
    async answer(identityUrl, identityIds, options) {
      const identities = await dataPlane.requestCredentials(identityUrl, identityIds, options);
      return identities.map(({ resourceId, clientId, objectId }) => ({ resourceId, clientId, objectId }));
    },
  };
}

/** Upstream's stand-in: the fixed identity for every identity. */
export function standInMsiAnswers(fixed: { readonly clientId: string; readonly principalId: string; readonly overwriteAllowed?: boolean }): MsiAnswerSource {
  const standIn = { clientId: fixed.clientId, principalId: fixed.principalId, overwriteAllowed: fixed.overwriteAllowed ?? false };
  return { answer: (_identityUrl, identityIds) => Promise.resolve(standInAnswer(identityIds, standIn)), standIn };
}
