import { describe, expect, it } from "vitest";
import type { ParsedResourceId } from "../../../resources/core/azureResourceId";
import type { UserAssignedIdentityValues } from "../../../resources/azure/userAssignedIdentityReader";
import { createConcurrencyLimiter } from "../../../resources/sync/concurrencyLimiter";
import { retryAfterInMs } from "../../../resources/core/errorClassification";
import { backoffInMs, lookUpIdentity, maxLookupAttempts, maxTotalAttempts } from "../../../resources/sync/lookUpIdentity";
import { FakeClock } from "../../fakes/fakeClock";

const identityId =
  "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/identity-a";

/** An ARM-shaped RestError, with the response headers a throttled answer carries. */
function armError(code: string, statusCode: number | undefined, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`${code} message`), {
    name: "RestError",
    code,
    statusCode,
    response: { headers: { get: (name: string) => headers[name.toLowerCase()] } },
  });
}

type Step = Error | UserAssignedIdentityValues;

/** A reader that answers with the scripted steps in turn and records what the limiter looked like. */
function harness(steps: Step[], options: { timeoutInMs?: number; limit?: number } = {}) {
  const clock = new FakeClock(new Date("2026-08-14T12:00:00Z"));
  const limiter = createConcurrencyLimiter(options.limit ?? 1);
  const activeDuringSleep: number[] = [];
  const calls: ParsedResourceId[] = [];
  const dependencies = {
    limiter,
    now: clock.now,
    random: () => 0.5,
    sleep: async (durationInMs: number) => {
      activeDuringSleep.push(limiter.active);
      await clock.sleep(durationInMs);
    },
    options: {
      lookupTimeoutInMs: options.timeoutInMs ?? 30_000,
      documentWaitInMs: 0,
      documentPollIntervalInMs: 1,
      maxWriteAttempts: 1,
      idsOnLookupFailure: "keep" as const,
    },
    userAssignedIdentityReader: {
      getUserAssignedIdentity(resourceId: ParsedResourceId) {
        calls.push(resourceId);
        const step = steps.shift();
        if (step === undefined) return Promise.reject(new Error("unexpected lookup"));
        if (step instanceof Error) return Promise.reject(step);
        return Promise.resolve(step);
      },
    },
  };
  return { dependencies, clock, calls, activeDuringSleep };
}

describe("lookUpIdentity", () => {
  it("waits the Retry-After a throttled answer asks for, outside the concurrency slot, then resolves", async () => {
    const { dependencies, clock, calls, activeDuringSleep } = harness([
      armError("TooManyRequests", 429, { "retry-after": "2" }),
      { clientId: "c", principalId: "p" },
    ]);
    expect(await lookUpIdentity(dependencies, identityId)).toEqual({ kind: "resolved", clientId: "c", principalId: "p" });
    expect(calls).toHaveLength(2);
    expect(clock.sleeps).toEqual([2000]);
    expect(activeDuringSleep).toEqual([0]);
  });

  it("lets another identity use the slot while a throttled one waits", async () => {
    const { dependencies } = harness([]);
    const order: string[] = [];
    let throttledOnce = false;
    const reader = {
      getUserAssignedIdentity(resourceId: ParsedResourceId) {
        order.push(resourceId.name);
        if (resourceId.name === "identity-a" && !throttledOnce) {
          throttledOnce = true;
          return Promise.reject(armError("TooManyRequests", 429, { "retry-after-ms": "50" }));
        }
        return Promise.resolve({ clientId: resourceId.name, principalId: "p" });
      },
    };
    const realSleep = (durationInMs: number) => new Promise<void>((resolve) => setTimeout(resolve, durationInMs));
    const shared = { ...dependencies, userAssignedIdentityReader: reader, sleep: realSleep, now: () => new Date() };
    await Promise.all([lookUpIdentity(shared, identityId), lookUpIdentity(shared, identityId.replace("identity-a", "identity-b"))]);
    expect(order).toEqual(["identity-a", "identity-b", "identity-a"]);
  });

  it.each([
    ["500", armError("InternalServerError", 500)],
    ["503", armError("ServiceUnavailable", 503)],
    ["a connection failure", armError("REQUEST_SEND_ERROR", undefined)],
    ["a 429 without Retry-After", armError("TooManyRequests", 429)],
  ])("retries %s with a growing backoff and gives up after the last attempt", async (_title, error) => {
    const { dependencies, clock, calls } = harness(Array.from({ length: maxLookupAttempts }, () => error));
    const outcome = await lookUpIdentity(dependencies, identityId);
    expect(outcome.kind).toBe("failed");
    expect(calls).toHaveLength(maxLookupAttempts);
    expect(clock.sleeps).toEqual([375, 750, 1500, 3000, 6000]);
  });

  it.each([
    ["403", armError("AuthorizationFailed", 403), "failed"],
    ["400", armError("BadRequest", 400), "failed"],
    ["404 ResourceNotFound", armError("ResourceNotFound", 404), "notFound"],
  ])("does not retry %s", async (_title, error, kind) => {
    const { dependencies, calls, clock } = harness([error]);
    expect((await lookUpIdentity(dependencies, identityId)).kind).toBe(kind);
    expect(calls).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it("does not use up an attempt for an answer that carries Retry-After: only the deadline bounds them", async () => {
    // Ten 429s in a row (more than maxLookupAttempts), 1 s each asked: 10 s of a 30 s deadline.
    const throttled = Array.from({ length: 10 }, () => armError("TooManyRequests", 429, { "retry-after": "1" }));
    const { dependencies, calls, clock } = harness([...throttled, { clientId: "c", principalId: "p" }]);
    expect(await lookUpIdentity(dependencies, identityId)).toEqual({ kind: "resolved", clientId: "c", principalId: "p" });
    expect(calls).toHaveLength(11);
    expect(clock.sleeps).toEqual(Array.from({ length: 10 }, () => 1_000));
  });

  it("still gives up after maxTotalAttempts when the service keeps asking for no wait at all", async () => {
    const { dependencies, calls } = harness(Array.from({ length: maxTotalAttempts }, () => armError("TooManyRequests", 429, { "retry-after": "0" })));
    expect(await lookUpIdentity(dependencies, identityId)).toEqual({
      kind: "failed",
      error: { code: "TooManyRequests", statusCode: 429, message: "TooManyRequests message" },
    });
    expect(calls).toHaveLength(maxTotalAttempts);
  });

  it("a token that does not come within the deadline is a credential failure (global), never a Timeout of the identity", async () => {
    const { dependencies, calls } = harness([{ clientId: "c", principalId: "p" }], { timeoutInMs: 50 });
    const reader = { ...dependencies.userAssignedIdentityReader, acquireToken: () => new Promise<never>(() => undefined) };
    const outcome = await lookUpIdentity({ ...dependencies, userAssignedIdentityReader: reader }, identityId);
    expect(outcome.kind).toBe("global");
    expect(outcome.kind === "global" && outcome.error.code).toBe("CredentialUnavailable");
    expect(outcome.kind === "global" && outcome.error.message).toContain("lookupTimeoutSeconds");
    expect(calls).toHaveLength(0);
  });

  it("any other failure to get the token is a credential failure too, without retries", async () => {
    const { dependencies, calls, clock } = harness([{ clientId: "c", principalId: "p" }]);
    const reader = { ...dependencies.userAssignedIdentityReader, acquireToken: () => Promise.reject(armError("ServiceUnavailable", 503)) };
    expect(await lookUpIdentity({ ...dependencies, userAssignedIdentityReader: reader }, identityId)).toEqual({
      kind: "global",
      error: { code: "CredentialUnavailable", statusCode: 503, message: "ServiceUnavailable: ServiceUnavailable message" },
    });
    expect(calls).toHaveLength(0);
    expect(clock.sleeps).toEqual([]);
  });

  it("gets the token, then looks the identity up", async () => {
    const { dependencies, calls } = harness([{ clientId: "c", principalId: "p" }]);
    let tokens = 0;
    const reader = { ...dependencies.userAssignedIdentityReader, acquireToken: () => Promise.resolve((tokens += 1)) };
    expect(await lookUpIdentity({ ...dependencies, userAssignedIdentityReader: reader }, identityId)).toEqual({
      kind: "resolved",
      clientId: "c",
      principalId: "p",
    });
    expect([tokens, calls.length]).toEqual([1, 1]);
  });

  it("ends at once with the throttling error when Retry-After would cross the lookup deadline", async () => {
    const { dependencies, calls, clock } = harness([armError("TooManyRequests", 429, { "retry-after": "60" })], { timeoutInMs: 30_000 });
    expect(await lookUpIdentity(dependencies, identityId)).toEqual({
      kind: "failed",
      error: { code: "TooManyRequests", statusCode: 429, message: "TooManyRequests message" },
    });
    expect(calls).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it("does not count the wait for a concurrency slot against the lookup deadline", async () => {
    // Limit 1, each answer takes 1 s of (fake) time, deadline 5 s: the 20th lookup waits 19 s in
    // the queue, then is throttled once with Retry-After 1 s. Its deadline runs from its slot, so
    // it retries and resolves instead of failing (and having its IDs cleared).
    const { dependencies, clock } = harness([], { timeoutInMs: 5_000, limit: 1 });
    const attemptsByName = new Map<string, number>();
    const reader = {
      async getUserAssignedIdentity(resourceId: ParsedResourceId) {
        const attempt = (attemptsByName.get(resourceId.name) ?? 0) + 1;
        attemptsByName.set(resourceId.name, attempt);
        await Promise.resolve();
        clock.advance(1_000);
        if (resourceId.name === "identity-19" && attempt === 1) {
          throw armError("TooManyRequests", 429, { "retry-after": "1" });
        }
        return { clientId: `client-${resourceId.name}`, principalId: "p" };
      },
    };
    const names = Array.from({ length: 20 }, (_unused, index) => `identity-${index}`);
    const outcomes = await Promise.all(
      names.map((name) => lookUpIdentity({ ...dependencies, userAssignedIdentityReader: reader }, identityId.replace("identity-a", name))),
    );
    expect(outcomes).toEqual(names.map((name) => ({ kind: "resolved", clientId: `client-${name}`, principalId: "p" })));
    expect([...attemptsByName.values()]).toEqual(names.map((name) => (name === "identity-19" ? 2 : 1)));
    expect(clock.sleeps).toEqual([1_000]);
  });

  it("still bounds a queued lookup's own attempts and Retry-After waits by the deadline", async () => {
    // Ten quick lookups hold the single slot for 10 s first; then the throttled one gets its slot
    // and has 5 s for its own attempts (1 s each) and Retry-After waits (1 s each).
    const { dependencies, clock } = harness([], { timeoutInMs: 5_000, limit: 1 });
    const throttledAttemptTimes: number[] = [];
    const reader = {
      async getUserAssignedIdentity(resourceId: ParsedResourceId) {
        await Promise.resolve();
        if (resourceId.name === "throttled") {
          throttledAttemptTimes.push(clock.now().getTime());
          clock.advance(1_000);
          throw armError("TooManyRequests", 429, { "retry-after": "1" });
        }
        clock.advance(1_000);
        return { clientId: resourceId.name, principalId: "p" };
      },
    };
    const shared = { ...dependencies, userAssignedIdentityReader: reader };
    const quick = Array.from({ length: 10 }, (_unused, index) => lookUpIdentity(shared, identityId.replace("identity-a", `quick-${index}`)));
    const throttled = lookUpIdentity(shared, identityId.replace("identity-a", "throttled"));
    await Promise.all(quick);
    const start = new Date("2026-08-14T12:00:00Z").getTime();
    expect(await throttled).toEqual({ kind: "failed", error: { code: "TooManyRequests", statusCode: 429, message: "TooManyRequests message" } });
    // Slot at 10 s; attempts at 10, 12, 14 s; the next wait would end at the deadline (15 s).
    expect(throttledAttemptTimes.map((time) => time - start)).toEqual([10_000, 12_000, 14_000]);
    expect(clock.sleeps).toEqual([1_000, 1_000]);
    expect(clock.now().getTime() - start).toBe(15_000);
  });

  it("does not count the wait for a slot between retries against the deadline either", async () => {
    // The throttled identity retries after 1 s, but by then a 10 s lookup holds the only slot.
    // Its second attempt (throttled again) gets the slot at 11 s; only 1 s of its own 5 s is
    // spent, so it waits once more and resolves on the third attempt.
    const { dependencies, clock } = harness([], { timeoutInMs: 5_000, limit: 1 });
    let throttledAttempts = 0;
    const reader = {
      async getUserAssignedIdentity(resourceId: ParsedResourceId) {
        if (resourceId.name === "slow") {
          // A macrotask: the throttled lookup is already sleeping and queued when time jumps.
          await new Promise((resolve) => setTimeout(resolve, 0));
          clock.advance(10_000);
          return { clientId: "slow", principalId: "p" };
        }
        throttledAttempts += 1;
        await Promise.resolve();
        if (throttledAttempts <= 2) {
          throw armError("TooManyRequests", 429, { "retry-after": "1" });
        }
        return { clientId: resourceId.name, principalId: "p" };
      },
    };
    const shared = { ...dependencies, userAssignedIdentityReader: reader };
    const throttled = lookUpIdentity(shared, identityId.replace("identity-a", "throttled"));
    const slow = lookUpIdentity(shared, identityId.replace("identity-a", "slow"));
    expect(await Promise.all([throttled, slow])).toEqual([
      { kind: "resolved", clientId: "throttled", principalId: "p" },
      { kind: "resolved", clientId: "slow", principalId: "p" },
    ]);
    expect(throttledAttempts).toBe(3);
    expect(clock.sleeps).toEqual([1_000, 1_000]);
  });

  it("ends with the last answer, not Timeout, when the deadline cuts the retry that follows a 503", async () => {
    const { dependencies, calls, clock } = harness([armError("ServiceUnavailable", 503)], { timeoutInMs: 400 });
    const reader = {
      getUserAssignedIdentity(resourceId: ParsedResourceId) {
        return calls.length === 0
          ? dependencies.userAssignedIdentityReader.getUserAssignedIdentity(resourceId)
          : new Promise<never>(() => calls.push(resourceId));
      },
    };
    expect(await lookUpIdentity({ ...dependencies, userAssignedIdentityReader: reader }, identityId)).toEqual({
      kind: "failed",
      error: { code: "ServiceUnavailable", statusCode: 503, message: "ServiceUnavailable message" },
    });
    expect(calls).toHaveLength(2);
    expect(clock.sleeps).toEqual([375]);
  });

  it("ends with Timeout when the deadline cuts the first attempt before any answer", async () => {
    const { dependencies, calls } = harness([], { timeoutInMs: 20 });
    const reader = { getUserAssignedIdentity: (resourceId: ParsedResourceId) => new Promise<never>(() => calls.push(resourceId)) };
    expect(await lookUpIdentity({ ...dependencies, userAssignedIdentityReader: reader }, identityId)).toMatchObject({
      kind: "failed",
      error: { code: "Timeout" },
    });
    expect(calls).toHaveLength(1);
  });

  it("refuses an identity ID it cannot parse without calling Azure", async () => {
    const { dependencies, calls } = harness([]);
    expect(await lookUpIdentity(dependencies, "/subscriptions/x")).toMatchObject({ kind: "failed", error: { code: "InvalidResourceId" } });
    expect(calls).toHaveLength(0);
  });
});

describe("backoffInMs", () => {
  it.each([
    [1, 0, 250],
    [1, 0.999999, 500],
    [2, 0.5, 750],
    [5, 0.5, 6000],
    [9, 0.999999, 8000],
  ])("attempt %i with random %f waits %i ms", (attempt, random, expected) => {
    expect(backoffInMs(attempt, () => random)).toBe(expected);
  });
});

describe("retryAfterInMs", () => {
  it.each([
    ["retry-after in seconds", { "retry-after": "3" }, 3000],
    ["retry-after-ms", { "retry-after-ms": "250", "retry-after": "9" }, 250],
    ["x-ms-retry-after-ms", { "x-ms-retry-after-ms": "40" }, 40],
    ["no header", {}, undefined],
    ["an unparseable header", { "retry-after": "soon" }, undefined],
  ])("reads %s", (_title, headers, expected) => {
    expect(retryAfterInMs(armError("TooManyRequests", 429, headers))).toBe(expected);
  });

  it("reads an HTTP date as the time left until it", () => {
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString();
    const value = retryAfterInMs(armError("TooManyRequests", 429, { "retry-after": inTenSeconds })) as number;
    expect(value).toBeGreaterThan(8000);
    expect(value).toBeLessThanOrEqual(10_000);
  });

  it("is undefined for an error without a response", () => {
    expect(retryAfterInMs(new Error("boom"))).toBeUndefined();
  });
});
