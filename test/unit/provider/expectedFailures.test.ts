/**
 * The SDK's dynamic provider host prints an error thrown by `read` or `diff` as
 * `${error}: ${error.stack}` on stderr, shown under pulumi:pulumi:Stack: the hook's own failures
 * lose that line (resources/provider/expectedFailures.ts); any other error keeps its stack. The
 * filter over console.error is seen at work through the literal CLI in
 * test/e2e/driftCorrectionWorkflow.test.ts (no stack trace in the run's output).
 */
import { describe, expect, it } from "vitest";
import { isExpectedFailure, takeHostLine, withoutStackTrace } from "../../../resources/provider/expectedFailures";
import { AzureAccessError } from "../../../resources/core/errors";

const hostLine = (error: Error): string => `${String(error)}: ${error.stack ?? ""}`;

describe("expected failures without stack traces", () => {
  it("marks the host's line of the hook's own failure to be dropped, once; a bug's line stays", () => {
    const failure = new AzureAccessError({
      documentId: "d",
      clusterName: "s/rg/c",
      error: { code: "CredentialUnavailable", message: "no" },
      credential: undefined,
    });
    const bug = new TypeError("a bug");
    expect(isExpectedFailure(failure)).toBe(true);
    expect(isExpectedFailure(bug)).toBe(false);
    expect(withoutStackTrace(failure)).toBe(failure);
    expect(withoutStackTrace(bug)).toBe(bug);
    expect(takeHostLine(hostLine(bug))).toBe(false);
    expect(takeHostLine(hostLine(failure))).toBe(true);
    expect(takeHostLine(hostLine(failure))).toBe(false);
  });
});
