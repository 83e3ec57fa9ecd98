/**
 * The summary `npm run pulumi` prints after a run in which clusters failed (cli/failureSummary.ts):
 * failures grouped by cause, built from messages as the error classes write them.
 */
import { describe, expect, it } from "vitest";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { failureCollector, formatFailureSummary } from "../../cli/failureSummary";
import { causeOf, groupFailures } from "../../resources/core/clusterMessage";
import { AzureAccessError } from "../../resources/core/errors";
import { UserAssignedIdentityReadError } from "../../resources/core/errors";

const subscription = "0465bc32-c654-41b8-8d87-9815d7abe8f6";
const clusterName = (index: number): string => `${subscription}/rg-${index}/cluster-${index}`;
const documentId = (index: number): string => `00000000-0000-5000-8000-${String(index).padStart(12, "0")}`;

/** The message a cluster whose first-party certificate file is missing fails with. */
function missingCertificate(index: number): string {
  return new AzureAccessError({
    documentId: documentId(index),
    clusterName: clusterName(index),
    error: {
      code: "CredentialUnavailable",
      message:
        "the certificate file /etc/aro/fp.pem ('aro-hcp-identity-status:firstPartyCertificateFile' (or ARO_HCP_FIRST_PARTY_CERTIFICATE_FILE)) does not exist",
    },
    credential: undefined,
  }).message;
}

/** The message a cluster fails with when ARM refuses one of its identities. */
function forbiddenIdentity(index: number): string {
  return new UserAssignedIdentityReadError({
    documentId: documentId(index),
    clusterName: clusterName(index),
    persisted: true,
    total: 2,
    failures: [
      {
        resourceId: `/subscriptions/${subscription}/resourceGroups/rg-${index}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/op`,
        error: { code: "AuthorizationFailed", statusCode: 403, message: "no access" },
      },
    ],
  }).message;
}

describe("the failure summary", () => {
  it("takes the cause from before the cluster, with the cluster's names and IDs taken out", () => {
    expect(causeOf({ resource: clusterName(1), message: missingCertificate(1) })).toBe(causeOf({ resource: clusterName(2), message: missingCertificate(2) }));
    // The engine's own prefix of a refresh's error is not part of the cause.
    expect(causeOf({ resource: clusterName(2), message: `Preview failed: ${missingCertificate(2)}` })).toBe(
      causeOf({ resource: clusterName(1), message: missingCertificate(1) }),
    );
    expect(causeOf({ resource: clusterName(1), message: missingCertificate(1) })).toMatch(/^the certificate file \/etc\/aro\/fp\.pem .* does not exist$/);
    // A message without the cluster marker: its first line, names and IDs taken out.
    expect(causeOf({ resource: "sub/rg/c", message: `\u001b[31mthe document of cluster sub/rg/c (${documentId(7)}) does not exist\u001b[0m\nmore` })).toBe(
      "the document of cluster <cluster> (<id>) does not exist",
    );
  });

  it("groups failures by cause, the most frequent first, counting each cluster once", () => {
    const failures = [
      ...[1, 2, 3, 4, 5].map((index) => ({ resource: clusterName(index), message: missingCertificate(index) })),
      { resource: clusterName(6), message: forbiddenIdentity(6) },
      { resource: clusterName(1), message: missingCertificate(1) },
    ];
    const groups = groupFailures(failures);
    expect(groups.map(({ count }) => count)).toEqual([5, 1]);
    expect(groups[0].resources).toEqual([1, 2, 3, 4, 5].map(clusterName));
    expect(groups[1].cause).toBe("a data plane operator managed identity could not be read: AuthorizationFailed (HTTP 403)");
    const summary = formatFailureSummary(failures, 2) ?? "";
    expect(summary.split("\n")).toEqual([
      "6 clusters failed, by cause (each cluster's own message is above):",
      `  5 × ${groups[0].cause}`,
      `      ${clusterName(1)}, ${clusterName(2)}, and 3 more`,
      `  1 × ${groups[1].cause}`,
      `      ${clusterName(6)}`,
    ]);
    expect(formatFailureSummary([])).toBeUndefined();
  });

  it("collects the first error diagnostic of each resource from the engine's events, never the stack's own", () => {
    const collector = failureCollector();
    const urn = (name: string): string =>
      `urn:pulumi:dev::aro-hcp-identity-status::aro-hcp-identity-status:index:ServiceProviderClusterIdentityStatus::${name}`;
    const diagnostic = (severity: "error" | "warning", urnValue: string | undefined, message: string): EngineEvent => ({
      sequence: 0,
      timestamp: 0,
      diagnosticEvent: { severity, message, color: "never", ...(urnValue === undefined ? {} : { urn: urnValue }) },
    });
    collector.onEvent(diagnostic("warning", urn(clusterName(1)), "drift"));
    collector.onEvent(diagnostic("error", urn(clusterName(1)), missingCertificate(1)));
    collector.onEvent(diagnostic("error", urn(clusterName(1)), "a second error of the same resource"));
    collector.onEvent(diagnostic("error", "urn:pulumi:dev::aro-hcp-identity-status::pulumi:pulumi:Stack::aro-hcp-identity-status-dev", "update failed"));
    collector.onEvent(diagnostic("error", undefined, "no resource"));
    expect(collector.failures).toEqual([{ resource: clusterName(1), message: missingCertificate(1) }]);
  });
});
