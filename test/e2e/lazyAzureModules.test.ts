/**
 * The provider host loads @azure/cosmos only when it first reads or writes a document (a no-op
 * `up` whose inputs declare the operators does neither), and @azure/identity (with MSAL) and
 * @azure/arm-msi only when it first needs a token or an ARM lookup: a `refresh` before the recheck
 * time with a Cosmos key needs neither. Checked in a separate Node process over the built package
 * (module loading is what is measured).
 */
import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { resolve } from "node:path";

const script = `
const dist = process.argv[1] + "/dist/resources";
const loaded = () => [...new Set(Object.keys(require.cache)
  .map((key) => /node_modules\\/(@azure\\/(?:cosmos|identity|arm-msi|msal-node))\\//.exec(key)?.[1])
  .filter((name) => name !== undefined))].sort();
require(dist + "/providerEntry.js");
const afterRequire = loaded();
const { sharedAzureAdapters } = require(dist + "/provider/azureAdapters.js");
const { readSettings } = require(dist + "/core/settings.js");
const { parseResourceIdOfType, userAssignedIdentityResourceType } = require(dist + "/core/azureResourceId.js");
const adapters = sharedAzureAdapters(readSettings(undefined, {
  ARO_HCP_COSMOS_ENDPOINT: "https://127.0.0.1:9", ARO_HCP_COSMOS_DATABASE: "db", COSMOS_KEY: "a2V5",
  ARO_HCP_MANAGED_IDENTITY_CLIENT_ID: "5e2b1a3c-7d4f-4b6a-8c9d-0e1f2a3b4c5d",
}));
const afterAdapters = loaded();
// Port 9 refuses the connection; only what the call loads matters.
adapters.documentStore.readDocument("pk", "id").catch(() => undefined);
const afterRead = loaded();
const identity = parseResourceIdOfType("/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id", userAssignedIdentityResourceType).resourceId;
// Aborted before it starts: nothing leaves the process, but the reader needs its client and credential.
adapters.userAssignedIdentityReader.getUserAssignedIdentity(identity, { abortSignal: AbortSignal.abort() }).catch(() => undefined).then(() => {
  console.log(JSON.stringify({ afterRequire, afterAdapters, afterRead, afterLookup: loaded() }));
  process.exit(0);
});
`;

describe("Azure SDK modules in the provider host", () => {
  it("loads @azure/cosmos at the first document read, and neither @azure/identity nor @azure/arm-msi until the first lookup", () => {
    const output = execFileSync(process.execPath, ["-e", script, resolve(__dirname, "..", "..")], { encoding: "utf8", timeout: 60_000 });
    expect(JSON.parse(output.trim().split("\n").pop()!)).toEqual({
      afterRequire: [],
      afterAdapters: [],
      afterRead: ["@azure/cosmos"],
      afterLookup: ["@azure/arm-msi", "@azure/cosmos", "@azure/identity", "@azure/msal-node"],
    });
  });
});
