/**
 * Cosmos item ids, as the upstream backend derives them: a UUID version 5 (SHA-1) of the
 * ARM resource ID lowercased as Go does (goStrings.ts), in a fixed namespace (upstream-behaviour.md §1.1).
 */
import { goToLower } from "./core/goStrings";

/** Upstream's namespace UUID for resource item ids. */
export const resourceIdNamespace = "bf1ee0a1-0147-41ed-a083-d3cbbf7bea99";

/** The Cosmos `id` of the item holding the resource with this ARM ID. */
export function cosmosItemIdFor(armResourceId: string): string {
  return uuidVersion5(resourceIdNamespace, goToLower(armResourceId));
}

/** RFC 4122 name-based UUID, version 5. */
export function uuidVersion5(namespace: string, name: string): string {
  // Required here, not imported at the top: this module is serialized into the provider closure,
  // and a module-level import of a built-in does not survive serialization under vitest.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const crypto = require("node:crypto") as typeof import("node:crypto");
  const namespaceBytes = Buffer.from(namespace.replace(/-/g, ""), "hex");
  if (namespaceBytes.length !== 16) {
    throw new RangeError(`namespace must be a UUID, got '${namespace}'`);
  }
  const hash = crypto.createHash("sha1").update(namespaceBytes).update(Buffer.from(name, "utf8")).digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
