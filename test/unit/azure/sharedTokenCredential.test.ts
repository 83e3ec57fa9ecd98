import { describe, expect, it } from "vitest";
import { pendingTokenRequestStaleAfterMs, sharedTokenCredential, tokenRefreshMarginInMs } from "../../../resources/azure/credentials";

const hour = 60 * 60 * 1000;

/** A credential that counts its calls and answers after the test releases it. */
function countingCredential(lifetimeInMs: number, now: () => number) {
  const calls: Array<{ scopes: string | string[]; options: unknown }> = [];
  const waiting: Array<() => void> = [];
  let failNext = false;
  return {
    calls,
    release: () => waiting.splice(0).forEach((resolve) => resolve()),
    failNext: () => (failNext = true),
    credential: {
      async getToken(scopes: string | string[], options?: unknown) {
        calls.push({ scopes, options });
        await new Promise<void>((resolve) => waiting.push(resolve));
        if (failNext) {
          failNext = false;
          throw Object.assign(new Error("token endpoint unavailable"), { name: "CredentialUnavailableError" });
        }
        return { token: `token-${calls.length}`, expiresOnTimestamp: now() + lifetimeInMs };
      },
    },
  };
}

async function settle<T>(promise: Promise<T>, release: () => void): Promise<T> {
  await Promise.resolve();
  release();
  return promise;
}

describe("sharedTokenCredential", () => {
  it("asks once for concurrent callers of the same scope", async () => {
    const now = 0;
    const inner = countingCredential(hour, () => now);
    const shared = sharedTokenCredential(inner.credential, () => now);
    const tokens = await settle(
      Promise.all([shared.getToken("https://management.azure.com/.default"), shared.getToken(["https://management.azure.com/.default"])]),
      inner.release,
    );
    expect(tokens.map((token) => token?.token)).toEqual(["token-1", "token-1"]);
    expect(inner.calls).toHaveLength(1);
  });

  it("reuses the token until the refresh margin before expiry, then asks again", async () => {
    let now = 0;
    const inner = countingCredential(hour, () => now);
    const shared = sharedTokenCredential(inner.credential, () => now);
    await settle(shared.getToken("scope/.default"), inner.release);
    now = hour - tokenRefreshMarginInMs - 1;
    expect((await shared.getToken("scope/.default"))?.token).toBe("token-1");
    now = hour - tokenRefreshMarginInMs;
    expect((await settle(shared.getToken("scope/.default"), inner.release))?.token).toBe("token-2");
    expect(inner.calls).toHaveLength(2);
  });

  it("keeps one token per scope and tenant", async () => {
    const inner = countingCredential(hour, () => 0);
    const shared = sharedTokenCredential(inner.credential, () => 0);
    await settle(
      Promise.all([shared.getToken("arm/.default"), shared.getToken("cosmos/.default"), shared.getToken("arm/.default", { tenantId: "other" })]),
      inner.release,
    );
    expect(inner.calls).toHaveLength(3);
    expect(inner.calls[2].options).toEqual({ tenantId: "other" });
  });

  it("does not cache a failure: the next caller asks again", async () => {
    const inner = countingCredential(hour, () => 0);
    const shared = sharedTokenCredential(inner.credential, () => 0);
    inner.failNext();
    await expect(settle(shared.getToken("scope/.default"), inner.release)).rejects.toMatchObject({ name: "CredentialUnavailableError" });
    expect((await settle(shared.getToken("scope/.default"), inner.release))?.token).toBe("token-2");
  });

  it("passes a claims challenge straight through", async () => {
    const inner = countingCredential(hour, () => 0);
    const shared = sharedTokenCredential(inner.credential, () => 0);
    await settle(shared.getToken("scope/.default"), inner.release);
    await settle(shared.getToken("scope/.default", { claims: "challenge" }), inner.release);
    expect(inner.calls).toHaveLength(2);
    expect(inner.calls[1].options).toEqual({ claims: "challenge" });
  });

  it("lets a caller stop waiting for the shared request when its own abort signal fires", async () => {
    const inner = countingCredential(hour, () => 0);
    const shared = sharedTokenCredential(inner.credential, () => 0);
    const controller = new AbortController();
    const waiting = shared.getToken("scope/.default", { abortSignal: controller.signal });
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
    // The request itself goes on for the other callers.
    const other = shared.getToken("scope/.default");
    expect((await settle(other, inner.release))?.token).toBe("token-1");
    expect(inner.calls).toHaveLength(1);
  });

  it("asks again once the shared request has hung past the stale limit, and the hung one no longer counts", async () => {
    let clock = 0;
    const inner = countingCredential(hour, () => clock);
    const shared = sharedTokenCredential(inner.credential, () => clock);
    const hung = shared.getToken("scope/.default");
    await Promise.resolve();
    expect(inner.calls).toHaveLength(1);
    clock += pendingTokenRequestStaleAfterMs - 1;
    void shared.getToken("scope/.default");
    expect(inner.calls, "still within the limit: joins the pending request").toHaveLength(1);
    clock += 2;
    const fresh = shared.getToken("scope/.default");
    expect(inner.calls, "past the limit: a new request").toHaveLength(2);
    inner.release();
    expect((await fresh)?.token).toBe("token-2");
    expect((await hung)?.token).toBe("token-2");
    // The newest answer is the cached one, and the next caller is served from it.
    expect((await shared.getToken("scope/.default"))?.token).toBe("token-2");
    expect(inner.calls).toHaveLength(2);
  });

  it("with holdFailuresForMs, answers a refusal again for that tenant only, until the hold ends; a bundle file's failure is never held", async () => {
    let clock = 0;
    const calls: string[] = [];
    let refuse: Error | undefined = Object.assign(new Error("AADSTS700027: the certificate is not registered"), { name: "AuthenticationError" });
    const inner = {
      getToken: (_scopes: string | string[], options?: { tenantId?: string }) => {
        calls.push(options?.tenantId ?? "home");
        return refuse === undefined ? Promise.resolve({ token: "t", expiresOnTimestamp: clock + hour }) : Promise.reject(refuse);
      },
    };
    const shared = sharedTokenCredential(inner, () => clock, { holdFailuresForMs: 30_000 });
    await expect(shared.getToken("dp/.default", { tenantId: "tenant-a" })).rejects.toThrow(/AADSTS700027/);
    refuse = undefined;
    await expect(shared.getToken("dp/.default", { tenantId: "tenant-a" }), "held: not asked again").rejects.toThrow(/AADSTS700027/);
    expect((await shared.getToken("dp/.default", { tenantId: "tenant-b" }))?.token, "another tenant is asked").toBe("t");
    expect(calls).toEqual(["tenant-a", "tenant-b"]);
    clock += 30_000;
    expect((await shared.getToken("dp/.default", { tenantId: "tenant-a" }))?.token).toBe("t");
    expect(calls).toEqual(["tenant-a", "tenant-b", "tenant-a"]);
    refuse = Object.defineProperty(new Error("the file does not exist"), "certificateFileProblem", { value: true });
    await expect(shared.getToken("other/.default", { tenantId: "tenant-a" })).rejects.toThrow(/does not exist/);
    refuse = undefined;
    expect((await shared.getToken("other/.default", { tenantId: "tenant-a" }))?.token, "read again at once").toBe("t");
  });
});
