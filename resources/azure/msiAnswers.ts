/**
 * Where the MSI half of a pass (sync/azureAnswers.ts) gets its one answer about a cluster's control
 * plane operator identities and service managed identity, per credential mode:
 *
 * - `clusterServiceManagedIdentity`: the Managed Identities data plane, asked as the first party at
 *   the cluster's identity URL for every identity at once (one request, as upstream's
 *   FetchMSIIdentitiesInfo makes it); each entry's `client_id` and `object_id` as answered.
 * - `fixedIdentity`: upstream's stand-in where no data plane exists: the fixed identity's client
 *   and principal IDs for every identity asked for, without a call.
 *
 * (`processCredential` has no source here: the pass reads each identity through ARM instead.)
 */
import type { MsiAnswerEntry, StandIn } from "../core/msiDecision";
import { standInAnswer } from "../core/msiDecision";
import type { ManagedIdentitiesDataPlane } from "./managedIdentitiesDataPlane";

/** One answer naming every identity asked for. */
export interface MsiAnswerSource {
  answer(identityUrl: string, identityIds: readonly string[], options: { readonly abortSignal: AbortSignal }): Promise<readonly MsiAnswerEntry[]>;
  /** Set for upstream's stand-in: the IDs it answers for every identity (core/msiDecision.ts guards stored IDs that are not these). */
  readonly standIn?: StandIn;
}

/** The data plane as the first party asks it. */
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
