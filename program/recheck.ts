/**
 * ARO_HCP_RECHECK as the program sees it (resources/core/recheckValue.ts): every cluster it
 * names must be one this update declares, so a typo in an ID is refused before anything is
 * declared instead of rechecking nothing and saying nothing.
 */
import { goToLower } from "../resources/core/goStrings";
import { parseRecheck, recheckVariable } from "../resources/core/recheckValue";

/**
 * @throws Error naming the variable and the clusters it names that the update does not declare,
 * or what is wrong with its value.
 */
export function checkRecheck(value: string | undefined, declared: readonly string[]): void {
  const recheck = parseRecheck(value);
  if (!recheck.ok) throw new Error(recheck.reason);
  if (recheck.value.kind !== "clusters") return;
  const known = new Set(declared.map(goToLower));
  const unknown = [...recheck.value.ids].filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new Error(
      `${recheckVariable} names ${unknown.length === 1 ? "a cluster" : `${unknown.length} clusters`} this update does not declare (${unknown.join(", ")}): name declared clusters, or "all"; nothing was declared or written`,
    );
  }
}
