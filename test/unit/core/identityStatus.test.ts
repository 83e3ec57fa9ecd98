import { describe, expect, it } from "vitest";
import { desiredIdentitySet } from "../../../resources/core/clusterDocument";
import { nextRecheckTime, recheckIntervalInMs } from "../../../resources/core/statusHalf";
import { entryFor } from "../../../resources/core/statusDecision";
import {
  formatRetrievalError,
  isFailedRetrievalError,
  isNotFoundRetrievalError,
  maxRetrievalErrorLength,
  redactSecrets,
  shortMessage,
  truncateCodePoints,
} from "../../../resources/core/retrievalError";
import { formatTimestamp, parseTimestamp } from "../../../resources/core/goJson";
import { statusCounts } from "../../../resources/core/outputsStatus";
import type { DesiredIdentity } from "../../../resources/core/statusHalf";
import type { DataPlaneOperatorsManagedIdentities } from "../../../resources/core/serviceProviderClusterDocument";
import { fixedNow, identityResourceId } from "../../fixtures/documents";
import { dataPlaneHalf } from "../../../resources/core/serviceProviderClusterDocument";

const now = fixedNow;
const hour = 60 * 60 * 1000;
const identityA = identityResourceId("identity-a");
const identityB = identityResourceId("identity-b");
const mixedCaseA = identityResourceId("Identity-A", { resourceGroupName: "Test-RG" });
const keyA = identityA.toLowerCase();
const keyB = identityB.toLowerCase();

/** What upstream stores for a missing identity: the raw, multi-line azcore ResponseError text. */
const upstreamNotFoundText = [
  `GET https://management.azure.com${identityA}`,
  "--------------------------------------------------------------------------------",
  "RESPONSE 404: 404 Not Found",
  "ERROR CODE: ResourceNotFound",
  "--------------------------------------------------------------------------------",
  '{ "error": { "code": "ResourceNotFound", "message": "The Resource was not found." } }',
].join("\n");

function desired(...resourceIds: string[]): DesiredIdentity[] {
  const { identities, failures } = desiredIdentitySet(Object.fromEntries(resourceIds.map((id, index) => [`operator-${index}`, id])));
  expect(failures).toEqual([]);
  return [...identities];
}

function stored(keys: string[], earliestRecheckTime?: Date, errors: Record<string, string> = {}): DataPlaneOperatorsManagedIdentities {
  return {
    identities: Object.fromEntries(
      keys.map((key) => [
        key,
        errors[key] === undefined ? { resourceID: key, clientId: "c", principalId: "p" } : { resourceID: key, retrievalError: errors[key] },
      ]),
    ),
    ...(earliestRecheckTime === undefined ? {} : { earliestRecheckTime: formatTimestamp(earliestRecheckTime) }),
  };
}

describe("desiredIdentitySet", () => {
  it("collapses two operators that name the same identity into one lowercase key (upstream 6)", () => {
    const { identities, failures } = desiredIdentitySet({ "operator-a": identityA, "operator-b": identityA });
    expect(failures).toEqual([]);
    expect(identities).toEqual([{ key: keyA, resourceId: identityA }]);
  });

  it("keys a mixed-case identity by its lowercased canonical string (upstream 7)", () => {
    const { identities } = desiredIdentitySet({ operator: mixedCaseA.replace("/resourceGroups/", "/RESOURCEGROUPS/") });
    expect(identities).toEqual([{ key: mixedCaseA.toLowerCase(), resourceId: mixedCaseA }]);
  });

  it("reports a null identity ID as a failure naming the operator instead of an empty set (upstream 8)", () => {
    const { identities, failures } = desiredIdentitySet({ "operator-a": identityA, "operator-b": null });
    expect(failures).toEqual([{ property: "dataPlaneOperators.operator-b", reason: "identity resource ID is missing (null)" }]);
    expect(identities).toEqual([{ key: keyA, resourceId: identityA }]);
  });

  it("deduplicates across casing and keeps the spelling of the operator that sorts first", () => {
    const { identities } = desiredIdentitySet({ zeta: identityA, alpha: identityA.toUpperCase().replace("/SUBSCRIPTIONS/", "/subscriptions/") });
    expect(identities).toHaveLength(1);
    expect(identities[0].key).toBe(keyA);
    expect(identities[0].resourceId).toContain("IDENTITY-A");
  });

  it("sorts identities by key whatever the operator order", () => {
    const { identities } = desiredIdentitySet({ a: identityB, b: identityA, c: identityResourceId("identity-0") });
    expect(identities.map((identity) => identity.key)).toEqual([identityResourceId("identity-0").toLowerCase(), keyA, keyB]);
  });

  it("gives an empty set for an empty operator map", () => {
    expect(desiredIdentitySet({})).toEqual({ identities: [], failures: [] });
  });

  it.each([
    ["an empty operator name", { "": identityA }, "dataPlaneOperators.", "operator name must not be empty or whitespace"],
    ["a whitespace operator name", { "  ": identityA }, "dataPlaneOperators.  ", "operator name must not be empty or whitespace"],
    ["a number", { op: 7 }, "dataPlaneOperators.op", "identity resource ID must be a string, got a number"],
    [
      "a cluster ID",
      { op: "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/c" },
      "dataPlaneOperators.op",
      "must be a Microsoft.ManagedIdentity/userAssignedIdentities ID",
    ],
  ])("reports %s as a failure naming the property", (_title, operators, property, reason) => {
    const { failures } = desiredIdentitySet(operators, "dataPlaneOperators");
    expect(failures).toHaveLength(1);
    expect(failures[0].property).toBe(property);
    expect(failures[0].reason).toContain(reason);
  });

  it("prefixes failure properties with the given path", () => {
    const { failures } = desiredIdentitySet({ op: null }, "properties.x.dataPlaneOperators");
    expect(failures[0].property).toBe("properties.x.dataPlaneOperators.op");
  });
});

describe("workReason (upstream set match and needsWork)", () => {
  it.each([
    // Set match (upstream 1-5), with a future recheck so only the key sets decide.
    ["1: an empty desired set matches an empty stored map", [], [], now.getTime() + hour, undefined],
    ["2: {A} matches {A}", [identityA], [keyA], now.getTime() + hour, undefined],
    ["3: a mixed-case A matches a stored lowercase A", [mixedCaseA], [mixedCaseA.toLowerCase()], now.getTime() + hour, undefined],
    ["4: {A} does not match {A, B} (count differs)", [identityA], [keyA, keyB], now.getTime() + hour, "desiredSetChanged"],
    ["5: {A} does not match {B}", [identityA], [keyB], now.getTime() + hour, "desiredSetChanged"],
    // needsWork (upstream 9-12), stored {A}.
    ["9: {A} with the recheck an hour ahead has no work", [identityA], [keyA], now.getTime() + hour, undefined],
    ["10: {A} with the recheck an hour ago is due", [identityA], [keyA], now.getTime() - hour, "recheckDue"],
    ["11: {A} with no recheck time has never been checked", [identityA], [keyA], undefined, "neverChecked"],
    ["12: {B} with the recheck an hour ahead ignores the gate because the set changed", [identityB], [keyA], now.getTime() + hour, "desiredSetChanged"],
    // Edges.
    ["a recheck time exactly now is due (strictly-before rule)", [identityA], [keyA], now.getTime(), "recheckDue"],
    ["a recheck time one second ahead is not due", [identityA], [keyA], now.getTime() + 1000, undefined],
    ["an empty desired set on a never-synced document has work", [], [], undefined, "neverChecked"],
  ])("%s", (_title, desiredIds, storedKeys, recheckAt, expected) => {
    const status = stored(storedKeys, recheckAt === undefined ? undefined : new Date(recheckAt));
    expect(dataPlaneHalf.workReason(desired(...desiredIds), status, now)).toBe(expected);
  });

  it("treats a missing identities map like an empty one", () => {
    expect(dataPlaneHalf.workReason([], { earliestRecheckTime: formatTimestamp(new Date(now.getTime() + hour)) }, now)).toBeUndefined();
  });

  it.each([
    ["the hook's ResourceNotFound", "ResourceNotFound (HTTP 404): The Resource 'x' under resource group 'rg' was not found."],
    ["the hook's ResourceNotFound with no status", "ResourceNotFound: gone"],
    ["upstream's raw SDK text", upstreamNotFoundText],
  ])("has no work inside the recheck window when the only error is NotFound (%s): it is data", (_title, text) => {
    const status = stored([keyA, keyB], new Date(now.getTime() + hour), { [keyA]: text });
    expect(dataPlaneHalf.workReason(desired(identityA, identityB), status, now)).toBeUndefined();
  });

  it("still rechecks a NotFound entry once the recheck time has passed", () => {
    const status = stored([keyA], new Date(now.getTime() - hour), { [keyA]: "ResourceNotFound (HTTP 404): gone" });
    expect(dataPlaneHalf.workReason(desired(identityA), status, now)).toBe("recheckDue");
  });

  it.each([
    ["403", "AuthorizationFailed (HTTP 403): The client does not have authorization"],
    ["429", "TooManyRequests (HTTP 429): throttled"],
    ["a timeout", "Timeout: the lookup did not complete within the configured lookup timeout"],
    ["a 403 whose message mentions a 404", "AuthorizationFailed (HTTP 403): earlier answer was ResourceNotFound (HTTP 404)"],
    ["a 404 with another code", "ResourceGroupNotFound (HTTP 404): Resource group 'rg' could not be found."],
    ["a 404 without an Azure error code", "HTTP404 (HTTP 404): 404 page not found"],
    [
      "upstream's raw text of a 500",
      upstreamNotFoundText.replace("404: 404 Not Found", "500: 500 Internal Server Error").replaceAll("ResourceNotFound", "InternalServerError"),
    ],
  ])("has work inside the recheck window when an entry records a real failure (%s)", (_title, text) => {
    const status = stored([keyA, keyB], new Date(now.getTime() + hour), { [keyA]: "ResourceNotFound (HTTP 404): gone", [keyB]: text });
    expect(dataPlaneHalf.workReason(desired(identityA, identityB), status, now)).toBe("entryHasError");
  });

  it("treats an unparseable recheck time as never checked", () => {
    expect(dataPlaneHalf.workReason(desired(identityA), { identities: stored([keyA]).identities, earliestRecheckTime: "tomorrow" }, now)).toBe("neverChecked");
  });
});

describe("entryFor", () => {
  const identity: DesiredIdentity = { key: keyA, resourceId: identityA };

  it.each([
    ["real IDs are copied", { clientId: "client-1", principalId: "principal-1" }, { resourceID: identityA, clientId: "client-1", principalId: "principal-1" }],
    ["empty strings stay empty strings", { clientId: "", principalId: "" }, { resourceID: identityA, clientId: "", principalId: "" }],
    ["null values are left out", { clientId: null, principalId: null }, { resourceID: identityA }],
    ["a null principal keeps the client", { clientId: "client-1", principalId: null }, { resourceID: identityA, clientId: "client-1" }],
  ])("stores a resolved identity: %s", (_title, values, expected) => {
    expect(entryFor(identity, { kind: "resolved", ...values })).toEqual(expected);
  });

  it.each(["notFound", "failed"] as const)("stores a %s lookup without IDs and with a retrievalError", (kind) => {
    const entry = entryFor(identity, { kind, error: { code: "ResourceNotFound", statusCode: 404, message: "gone" } });
    expect(entry).toEqual({ resourceID: identityA, retrievalError: "ResourceNotFound (HTTP 404): gone" });
  });
});

describe("formatRetrievalError", () => {
  it("renders code, HTTP status and the short message on one line", () => {
    expect(formatRetrievalError({ code: "AuthorizationFailed", statusCode: 403, message: "The client does not have authorization.\nDetails: ..." })).toBe(
      "AuthorizationFailed (HTTP 403): The client does not have authorization.",
    );
  });

  it("leaves out the status when there was no response", () => {
    expect(formatRetrievalError({ code: "ConnectionFailed", message: "connect ECONNREFUSED" })).toBe("ConnectionFailed: connect ECONNREFUSED");
  });

  it("caps the service message at 400 code points", () => {
    const text = formatRetrievalError({ code: "X", message: "😀".repeat(1000) });
    expect(Array.from(text)).toHaveLength("X: ".length + 400);
  });

  it("caps the whole text at 1024 code points even with a huge code", () => {
    const text = formatRetrievalError({ code: "𝔸".repeat(2000), statusCode: 500, message: "m" });
    expect(Array.from(text)).toHaveLength(maxRetrievalErrorLength);
    expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  it("redacts a bearer token in the message", () => {
    expect(formatRetrievalError({ code: "Unauthorized", statusCode: 401, message: "header was Bearer abcdefghijklmnop.qrs" })).toBe(
      "Unauthorized (HTTP 401): header was Bearer [redacted]",
    );
  });
});

describe("shortMessage", () => {
  it.each([
    ["keeps the first non-empty line", "\n\n  first line  \nsecond", "first line"],
    ["folds whitespace", "a\t\t b    c", "a b c"],
    ["handles CRLF", "one\r\ntwo", "one"],
    ["returns empty for blank text", "  \n ", ""],
    [
      "keeps Entra ID's description alone of MSAL's wording of a refusal, its trace ID, correlation ID and timestamp once",
      "invalid_client: Error(s): 7000215 - Timestamp: 2026-12-05 02:52:44Z - Description: AADSTS7000215: Invalid client secret. Trace ID: 7e27 Correlation ID: ba01 Timestamp: 2026-12-05 02:52:44Z - Correlation ID: ba01a8dc-26a5-440f-a233-ae3fea49180d - Trace ID: 7e2735f9-db25-4226-9ec7-6ee7edeac056",
      "invalid_client: AADSTS7000215: Invalid client secret. Trace ID: 7e27 Correlation ID: ba01 Timestamp: 2026-12-05 02:52:44Z",
    ],
  ])("%s", (_title, input, expected) => {
    expect(shortMessage(input)).toBe(expected);
  });
});

describe("redactSecrets", () => {
  it.each([
    ["a bearer token", "Authorization: Bearer eyAbc123456789xyz", "Authorization: Bearer [redacted]"],
    ["a SAS signature", "https://x.blob.core.windows.net/c?sv=1&sig=abcDEF%2B123&se=2", "https://x.blob.core.windows.net/c?sv=1&sig=[redacted]&se=2"],
    ["an account key", "AccountEndpoint=https://a/;AccountKey=c2VjcmV0a2V5;", "AccountEndpoint=https://a/;AccountKey=[redacted];"],
    ["a client secret", "client_secret: s3cr3t-value", "client_secret: [redacted]"],
    ["a bare JWT", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig_nature-1", "token [redacted-jwt]"],
  ])("redacts %s", (_title, input, expected) => {
    expect(redactSecrets(input)).toBe(expected);
  });

  it("leaves ordinary text alone", () => {
    const text = "The Resource 'Microsoft.ManagedIdentity/userAssignedIdentities/a' under resource group 'rg' was not found.";
    expect(redactSecrets(text)).toBe(text);
  });
});

describe("truncateCodePoints", () => {
  const alphabet = ["a", "Z", " ", "é", "中", "\u00ad", "😀", "𝔸", "🏳️‍🌈", "\u{10FFFF}"];

  function randomText(seed: number, length: number): string {
    let state = seed;
    const next = (): number => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state / 2147483648;
    };
    let text = "";
    for (let index = 0; index < length; index += 1) text += alphabet[Math.floor(next() * alphabet.length)];
    return text;
  }

  it("keeps text at or under the cap unchanged", () => {
    const text = "😀".repeat(1024);
    expect(truncateCodePoints(text, 1024)).toBe(text);
  });

  it("cuts astral text to exactly 1024 code points (2048 UTF-16 units)", () => {
    const text = truncateCodePoints("😀".repeat(1500), 1024);
    expect(Array.from(text)).toHaveLength(1024);
    expect(text.length).toBe(2048);
  });

  it("never splits a surrogate pair at the boundary", () => {
    const text = truncateCodePoints(`${"a".repeat(1023)}😀😀`, 1024);
    expect(text).toBe(`${"a".repeat(1023)}😀`);
  });

  it("keeps the first code points, is a prefix, and is well formed, for many random texts", () => {
    for (let seed = 1; seed <= 300; seed += 1) {
      const input = randomText(seed, 900 + (seed % 400));
      const output = truncateCodePoints(input, maxRetrievalErrorLength);
      const inputPoints = Array.from(input);
      expect(Array.from(output)).toEqual(inputPoints.slice(0, maxRetrievalErrorLength));
      expect(input.startsWith(output)).toBe(true);
      expect(output).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    }
  });

  it.each([0, 1, 2, 7])("cuts to %i code points", (maximum) => {
    expect(Array.from(truncateCodePoints("𝔸é中a😀xyz", maximum))).toHaveLength(maximum);
  });
});

describe("formatTimestamp and parseTimestamp", () => {
  it.each([
    ["2026-08-14T12:00:00.000Z", "2026-08-14T12:00:00Z"],
    ["2026-08-14T12:00:00.999Z", "2026-08-14T12:00:00Z"],
    ["2026-12-31T23:59:59.500Z", "2026-12-31T23:59:59Z"],
  ])("writes %s as RFC 3339 whole seconds in UTC: %s", (iso, expected) => {
    expect(formatTimestamp(new Date(iso))).toBe(expected);
  });

  it.each([
    ["a Z timestamp", "2026-08-14T12:00:00Z", "2026-08-14T12:00:00.000Z"],
    ["an offset timestamp", "2026-08-14T14:00:00+02:00", "2026-08-14T12:00:00.000Z"],
  ])("parses %s", (_title, input, expected) => {
    expect(parseTimestamp(input)?.toISOString()).toBe(expected);
  });

  it.each([undefined, null, "", "not a time", 12345])("returns undefined for %j", (value) => {
    expect(parseTimestamp(value)).toBeUndefined();
  });
});

describe("nextRecheckTime", () => {
  it.each([
    ["random 0 gives exactly 12 hours", 0, "2026-08-15T00:00:00Z"],
    ["random 0.5 gives 15 hours", 0.5, "2026-08-15T03:00:00Z"],
    ["random 0.999 gives just under 18 hours, whole seconds", 0.999, "2026-08-15T05:59:38Z"],
    ["random 1 (out of contract) stays under 18 hours", 1, "2026-08-15T05:59:59Z"],
    ["a negative random is clamped to 12 hours", -3, "2026-08-15T00:00:00Z"],
  ])("%s", (_title, random, expected) => {
    expect(nextRecheckTime(now, () => random)).toBe(expected);
  });

  it("always lands in [12 h, 18 h) for many random values", () => {
    for (let step = 0; step < 1000; step += 1) {
      const value = step / 1000;
      const recheck = new Date(nextRecheckTime(now, () => value)).getTime() - now.getTime();
      expect(recheck).toBeGreaterThanOrEqual(recheckIntervalInMs);
      expect(recheck).toBeLessThan(recheckIntervalInMs * 1.5);
    }
  });

  it("is in whole seconds even when now has milliseconds", () => {
    expect(nextRecheckTime(new Date("2026-08-14T12:00:00.750Z"), () => 0)).toBe("2026-08-15T00:00:00Z");
  });
});

describe("dataPlaneHalf.equals", () => {
  const base: DataPlaneOperatorsManagedIdentities = {
    identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p" } },
    earliestRecheckTime: "2026-08-15T00:00:00Z",
  };

  it.each([
    ["the same status", base, true],
    [
      "resource IDs differing only in casing",
      { ...base, identities: { [keyA]: { resourceID: identityA.toUpperCase(), clientId: "c", principalId: "p" } } },
      true,
    ],
    ["the same instant written with an offset", { ...base, earliestRecheckTime: "2026-08-15T02:00:00+02:00" }, true],
    ["another recheck time", { ...base, earliestRecheckTime: "2026-08-15T00:00:01Z" }, false],
    ["no recheck time", { identities: base.identities }, false],
    ["another clientId", { ...base, identities: { [keyA]: { resourceID: identityA, clientId: "C", principalId: "p" } } }, false],
    ["an empty clientId instead of a missing one", { ...base, identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "" } } }, false],
    ["a retrievalError added", { ...base, identities: { [keyA]: { resourceID: identityA, clientId: "c", principalId: "p", retrievalError: "x" } } }, false],
    ["another key", { ...base, identities: { [keyB]: { resourceID: identityA, clientId: "c", principalId: "p" } } }, false],
  ])("compares against %s", (_title, other, expected) => {
    expect(dataPlaneHalf.equals(base, other)).toBe(expected);
  });

  it("treats a missing identities map as equal to an empty one", () => {
    expect(dataPlaneHalf.equals({}, { identities: {} })).toBe(true);
  });
});

describe("isNotFoundRetrievalError and isFailedRetrievalError", () => {
  it.each([
    ["ResourceNotFound (HTTP 404): gone", true],
    ["ResourceNotFound: gone", true],
    ["ResourceGroupNotFound (HTTP 404): gone", false],
    ["SubscriptionNotFound (HTTP 404): gone", false],
    ["HTTP404 (HTTP 404): 404 page not found", false],
    ["ParentResourceNotFound (HTTP 404): gone", false],
    [upstreamNotFoundText, true],
    // Upstream counts the code, whatever the status.
    [upstreamNotFoundText.replace("RESPONSE 404: 404 Not Found", "RESPONSE 400: 400 Bad Request"), true],
    [upstreamNotFoundText.replace("ERROR CODE: ResourceNotFound", "ERROR CODE: SubscriptionNotFound"), false],
    [upstreamNotFoundText.replace("ERROR CODE: ResourceNotFound", "ERROR CODE: ParentResourceNotFound"), false],
    [upstreamNotFoundText.replace("ERROR CODE: ResourceNotFound", "ERROR CODE UNAVAILABLE"), false],
    ["AuthorizationFailed (HTTP 403): ResourceNotFound was expected", false],
    ["Timeout: ERROR CODE: ResourceNotFound in the message", false],
    ["InternalServerError (HTTP 500): (HTTP 404) in the body", false],
    ["ConnectionFailed: connect ECONNREFUSED", false],
    ["Timeout: the lookup did not complete", false],
  ])("%j is NotFound: %s", (text, notFound) => {
    expect(isNotFoundRetrievalError(text)).toBe(notFound);
    expect(isFailedRetrievalError(text)).toBe(!notFound);
  });

  it("treats an entry without a retrievalError as neither", () => {
    expect(isNotFoundRetrievalError(undefined)).toBe(false);
    expect(isFailedRetrievalError(undefined)).toBe(false);
  });
});

describe("statusCounts", () => {
  it("classifies resolved, not-found and failed entries", () => {
    const counts = statusCounts({
      identities: {
        a: { resourceID: "a", clientId: "c", principalId: "p" },
        b: { resourceID: "b", retrievalError: "ResourceNotFound (HTTP 404): gone" },
        c: { resourceID: "c", retrievalError: "ResourceGroupNotFound (HTTP 404): gone" },
        d: { resourceID: "d", retrievalError: "AuthorizationFailed (HTTP 403): no" },
        e: { resourceID: "e" },
      },
    });
    expect(counts).toEqual({ identityCount: 5, resolvedCount: 2, notFoundCount: 1, failedCount: 2 });
  });

  it("counts nothing in an empty status", () => {
    expect(statusCounts({})).toEqual({ identityCount: 0, resolvedCount: 0, notFoundCount: 0, failedCount: 0 });
  });
});

describe("desiredIdentitySet order", () => {
  it("sorts the identities by key in code-unit order, not locale", () => {
    const id = (name: string) =>
      `/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${name}`;
    const { identities, failures } = desiredIdentitySet({ one: id("f"), two: id("é"), three: id("a"), four: id("_z") });
    expect(failures).toEqual([]);
    expect(identities.map((identity) => identity.key.split("/").pop())).toEqual(["_z", "a", "f", "é"]);
  });
});
