/**
 * Each half of the status the hook writes is byte for byte what upstream's Go types give after
 * decoding it (issue 44 item 2): tools/go-vectors decodes the subtrees with a mirror of upstream's
 * types (strictly: a field the types lack is an error) and encodes them again with encoding/json.
 * Keys are chosen where Go's map order (UTF-8 bytes) and JavaScript's default sort (UTF-16 units)
 * differ, with values Go escapes (`<`, `&`) and the empty string.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { compareGoMapKeys } from "../../../resources/core/goJson";
import type { JsonObject } from "../../../resources/core/json";
import { dataPlaneHalf } from "../../../resources/core/serviceProviderClusterDocument";
import { msiHalf } from "../../../resources/core/msiManagedIdentities";

const projectDirectory = path.resolve(__dirname, "../../..");
const prefix = "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/test-rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/";
/** U+FF5A (fullwidth z) sorts after U+1F600 (an emoji) in UTF-16 units, before it in UTF-8 bytes. */
const names = ["plain-a", "\uff5a-fullwidth", "\u{1f600}-emoji", "plain-b"];
const ids = names.map((name) => `${prefix}${name}`);
const keyOf = (id: string): string => id.toLowerCase();

/** The go-vectors program, built once for the file (a first build on a new machine takes a minute or more). */
let program = "";

beforeAll(() => {
  const built = spawnSync("bash", [path.join(projectDirectory, "tools/build-go-tool.sh"), "go-vectors"], { encoding: "utf8" });
  expect(built.status, built.stderr).toBe(0);
  program = built.stdout.trim().split("\n").pop() ?? "";
}, 300_000);

/** The halves as upstream's Go types decode and encode them, from the go-vectors program. */
function goReencoded(status: JsonObject): { msiManagedIdentities: unknown; dataPlaneOperatorsManagedIdentities: unknown } {
  const decoded = spawnSync(program, ["-decode"], { input: JSON.stringify({ properties: { status } }), encoding: "utf8" });
  expect(decoded.stderr).toBe("");
  expect(decoded.status).toBe(0);
  return JSON.parse(decoded.stdout) as { msiManagedIdentities: unknown; dataPlaneOperatorsManagedIdentities: unknown };
}

describe("the JSON of both halves", () => {
  it("orders map keys as Go does (UTF-8 bytes), unlike JavaScript's default sort", () => {
    const keys = ids.map(keyOf);
    expect([...keys].sort(compareGoMapKeys)).not.toEqual([...keys].sort());
  });

  it("is byte for byte what upstream's Go types write after decoding it", () => {
    const dataPlane = dataPlaneHalf.toJson({
      identities: Object.fromEntries(
        ids.map((id, index) => [
          keyOf(id),
          {
            resourceID: id,
            ...(index === 3 ? {} : { clientId: index === 0 ? "" : `client-${index}`, principalId: `principal-${index}` }),
            ...(index === 3 ? { retrievalError: "ResourceNotFound (HTTP 404): The Resource <name> & co was not found." } : {}),
          },
        ]),
      ),
      earliestRecheckTime: "2026-08-15T00:00:00Z",
    });
    const msi = msiHalf.toJson({
      earliestRecheckTime: "2026-08-15T00:00:00Z",
      controlPlaneOperatorsIdentities: Object.fromEntries(
        ids.slice(0, 3).map((id, index) => [keyOf(id), { resourceId: id, clientId: `c${index}`, principalId: `p${index}` }]),
      ),
      serviceManagedIdentity: { resourceId: ids[3] },
    });
    const go = goReencoded({ msiManagedIdentities: msi, dataPlaneOperatorsManagedIdentities: dataPlane });
    expect(JSON.stringify(dataPlane)).toBe(JSON.stringify(go.dataPlaneOperatorsManagedIdentities));
    expect(JSON.stringify(msi)).toBe(JSON.stringify(go.msiManagedIdentities));
  });

  it("is refused by the strict decode when it holds a field upstream's types lack (what a field of the hook's own would be)", () => {
    const status = { msiManagedIdentities: {}, dataPlaneOperatorsManagedIdentities: { claimedBy: "0123456789abcdef" } };
    const decoded = spawnSync(program, ["-decode"], { input: JSON.stringify({ properties: { status } }), encoding: "utf8" });
    expect(decoded.status).not.toBe(0);
    expect(decoded.stderr).toContain('unknown field "claimedBy"');
  });
});
