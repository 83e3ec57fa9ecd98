/**
 * What a failed create or update tells the engine, which prints it under the cluster's resource and
 * keeps it in state (`initErrors`). Pure.
 */
import { bothHalvesFailed, failureCauseOf } from "../core/clusterMessage";

/**
 * The reason for the engine: the pass's message, except that when both halves failed with one cause
 * the `status.msiManagedIdentities` half's part says `the same cause` instead of repeating it, and
 * keeps what it says of the cluster and of what was written. A cause read from the MSI half alone
 * (its Entra trace IDs, say) stays in the run records, which keep the whole message.
 * @param message The failed pass's message: one half's, or both joined by `and:`.
 * @returns The message with each cause once.
 */
export function engineReasonOf(message: string): string {
  const join = message.indexOf(bothHalvesFailed);
  if (join === -1) return message;
  const dataPlane = message.slice(0, join);
  const msi = message.slice(join + bothHalvesFailed.length);
  // The cause ends where the first line names the cluster (core/clusterMessage.ts).
  const clusterPart = (msi.split("\n")[0] ?? "").indexOf(" Cluster ");
  return clusterPart !== -1 && failureCauseOf(dataPlane) === failureCauseOf(msi)
    ? `${dataPlane}${bothHalvesFailed}the same cause.${msi.slice(clusterPart)}`
    : message;
}
