/** The reason a failed create or update gives the engine (resources/provider/engineReason.ts). */
import { describe, expect, it } from "vitest";
import { bothHalvesFailed, clusterMessage, nothingWritten } from "../../../resources/core/clusterMessage";
import { engineReasonOf } from "../../../resources/provider/engineReason";

const clusterName = "1d3f8a2e-6b7c-4e9a-9f21-3c5d7e9a1b20/demo-rg-one/demo-cluster-one";
const refused = (traceId: string): string =>
  `invalid_client: AADSTS90033: The certificate used by the client has been revoked. Trace ID: ${traceId} Correlation ID: ${traceId} Timestamp: 2026-12-06 20:12:45.869Z (the first-party credential, asked for a token in tenant 4b6d8f0a-2c4e-4a6b-8d0f-1a3c5e7a9b11)`;
const dataPlaneFailure = (cause: string): string =>
  `${clusterMessage({ cause, clusterName, outcome: `no identity was checked; ${nothingWritten}`, reference: "ServiceProviderCluster document 6a921709" })} Credential in use: the first party`;
const msiFailure = (cause: string): string =>
  clusterMessage({ cause, clusterName, outcome: "nothing of status.msiManagedIdentities was written", reference: "ServiceProviderCluster document 6a921709" });
const msiOutcome = ` Cluster ${clusterName}: nothing of status.msiManagedIdentities was written. [ServiceProviderCluster document 6a921709]`;

describe("engineReasonOf", () => {
  it.each([
    {
      name: "says the MSI half failed with the same cause, naming the cluster and what was written, instead of repeating it",
      message: `${dataPlaneFailure(refused("80ae0d32-c1e7-4546-84a2-5db8b36c9c65"))}${bothHalvesFailed}${msiFailure(refused("80ae0d32-c1e7-4546-84a2-5db8b36c9c65"))}`,
      reason: `${dataPlaneFailure(refused("80ae0d32-c1e7-4546-84a2-5db8b36c9c65"))}${bothHalvesFailed}the same cause.${msiOutcome}`,
    },
    {
      name: "reads causes that differ only in Entra's trace IDs as the same",
      message: `${dataPlaneFailure(refused("80ae0d32-c1e7-4546-84a2-5db8b36c9c65"))}${bothHalvesFailed}${msiFailure(refused("714c4457-41c4-4e86-9145-f9ba2e446c42"))}`,
      reason: `${dataPlaneFailure(refused("80ae0d32-c1e7-4546-84a2-5db8b36c9c65"))}${bothHalvesFailed}the same cause.${msiOutcome}`,
    },
    {
      name: "keeps both causes when the halves failed in different ways",
      message: `${dataPlaneFailure(refused("80ae0d32-c1e7-4546-84a2-5db8b36c9c65"))}${bothHalvesFailed}${msiFailure("the Managed Identities data plane answered 503")}`,
      reason: `${dataPlaneFailure(refused("80ae0d32-c1e7-4546-84a2-5db8b36c9c65"))}${bothHalvesFailed}${msiFailure("the Managed Identities data plane answered 503")}`,
    },
    {
      name: "keeps one half's message as it is",
      message: msiFailure(refused("80ae0d32-c1e7-4546-84a2-5db8b36c9c65")),
      reason: msiFailure(refused("80ae0d32-c1e7-4546-84a2-5db8b36c9c65")),
    },
    {
      name: "keeps a second part that names no cluster",
      message: `${dataPlaneFailure("boom")}${bothHalvesFailed}boom`,
      reason: `${dataPlaneFailure("boom")}${bothHalvesFailed}boom`,
    },
  ])("$name", ({ message, reason }) => {
    expect(engineReasonOf(message)).toBe(reason);
  });

  it("keeps the detail lines of the data plane half before the MSI half's part", () => {
    const dataPlane = clusterMessage({
      cause: "2 data plane operator managed identities could not be read: AuthorizationFailed (HTTP 403)",
      clusterName,
      outcome: "the other identities were written",
      details: ["/subscriptions/s/identity-a: AuthorizationFailed (HTTP 403): no", "/subscriptions/s/identity-b: AuthorizationFailed (HTTP 403): no"],
    });
    const message = `${dataPlane}${bothHalvesFailed}${msiFailure("2 data plane operator managed identities could not be read: AuthorizationFailed (HTTP 403)")}`;
    expect(engineReasonOf(message)).toBe(`${dataPlane}${bothHalvesFailed}the same cause.${msiOutcome}`);
  });
});
