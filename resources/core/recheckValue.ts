/**
 * The value of `ARO_HCP_RECHECK`, read by the provider host (provider/recheckRequest.ts) and by the
 * program (program/recheck.ts), which must not load the provider's modules to read it.
 */
import { clusterResourceType, parseResourceIdOfType } from "./azureResourceId";
import { goToLower } from "./goStrings";

/** The variable, read by the provider host and the program at each command. */
export const recheckVariable = "ARO_HCP_RECHECK";

export type RecheckRequest = { readonly kind: "all" } | { readonly kind: "tenants" } | { readonly kind: "clusters"; readonly ids: ReadonlySet<string> };

/** Parses the variable's value (unset or blank: no cluster); a value that names no cluster ID is refused, naming it. */
export function parseRecheck(value: string | undefined): { ok: true; value: RecheckRequest } | { ok: false; reason: string } {
  const text = (value ?? "").trim();
  const keyword = text.toLowerCase();
  if (keyword === "all" || keyword === "tenants") return { ok: true, value: { kind: keyword } };
  const ids = new Set<string>();
  for (const entry of text.split(/[\s,]+/).filter((part) => part.length > 0)) {
    const parsed = parseResourceIdOfType(entry, clusterResourceType);
    if (!parsed.ok) {
      return {
        ok: false,
        reason: `${recheckVariable} names '${entry}', which is not a cluster resource ID (${parsed.reason}): set it to "all", "tenants" or cluster resource IDs separated by commas; nothing was asked or written`,
      };
    }
    ids.add(goToLower(entry));
  }
  return { ok: true, value: { kind: "clusters", ids } };
}
