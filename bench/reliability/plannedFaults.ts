/**
 * The faults of one pass as the sandbox holds them: building a kind's rules for a lane (with what
 * another writer would record right now), retiring them after the pass, and reading back what the
 * race rules did to the owned subtree, so the checks judge the pass against the document as its
 * last decision saw it rather than as it was before the pass.
 */
import { isDeepStrictEqual } from "node:util";
import type { FaultRule } from "../../sandbox/faultInjector";
import { parseJsonPointer, setAtJsonPointer } from "../../sandbox/jsonPointer";
import type { Sandbox } from "../../sandbox/sandbox";
import type { FleetClusterDescription } from "../../sandbox/seed";
import type { FaultKindSpecification, FaultScope } from "./faultCatalogue";
import { ownedSubtreePointer } from "./faultCatalogue";
import type { Document } from "./reliabilitySandbox";
import { ownedStatus } from "./reliabilitySandbox";

/** A fault kind's rules, as added to the sandbox for one pass. */
export interface PlannedFault {
  readonly kind: FaultKindSpecification;
  /** The rule whose firings the report counts. */
  readonly rule: FaultRule;
  /** The rule that sets the scene for it, when the kind has one. */
  readonly alongside: FaultRule | undefined;
}

/** The scope of a lane's faults, with what another writer reading ARM now would record. */
export function faultScopeFor(sandbox: Sandbox, cluster: FleetClusterDescription, identityId: string, passNumber: number): FaultScope {
  const freshEntries: Record<string, Record<string, string>> = {};
  for (const resourceId of Object.values(cluster.dataPlaneOperators)) {
    const inArm = sandbox.identities.get(resourceId);
    freshEntries[resourceId.toLowerCase()] =
      inArm === undefined
        ? { resourceID: resourceId, retrievalError: `ResourceNotFound (HTTP 404): recorded by another writer in pass ${passNumber}` }
        : { resourceID: resourceId, clientId: inArm.clientId, principalId: inArm.principalId };
  }
  return {
    resourceGroupPath: `/resourcegroups/${cluster.clusterResourceId.split("/")[4]?.toLowerCase()}/`,
    documentId: cluster.serviceProviderClusterDocumentId,
    identityId,
    passNumber,
    freshEntries,
    now: new Date(),
  };
}

/** Adds a kind's rules for one pass of a lane (rotating its identity first when the kind asks). */
export function planFault(
  sandbox: Sandbox,
  kind: FaultKindSpecification,
  cluster: FleetClusterDescription,
  identityId: string,
  passNumber: number,
  limits: { readonly maxWriteAttempts: number; readonly lookupTimeoutInMs: number },
): PlannedFault {
  if (kind.rotatesIdentityFirst === true) {
    sandbox.identities.rotate(identityId);
  }
  const scope = faultScopeFor(sandbox, cluster, identityId, passNumber);
  const rule = sandbox.faults.add(kind.rule(scope, limits.maxWriteAttempts, limits.lookupTimeoutInMs));
  const alongside = kind.alongside === undefined ? undefined : sandbox.faults.add(kind.alongside(scope, limits.maxWriteAttempts, limits.lookupTimeoutInMs));
  return { kind, rule, alongside };
}

/** Stops a pass's rules: they are scoped to one lane, and one that did not use up its firings must not leak into the next pass. */
export function retireFault(planned: PlannedFault): void {
  planned.rule.remaining = 0;
  if (planned.alongside !== undefined) planned.alongside.remaining = 0;
}

/** What other writers did to the owned subtree between a pass's read and its write. */
export interface OwnedSubtreeRaces {
  /** The document the pass's last decision saw: the one before the pass with those edits applied. */
  readonly before: Document | undefined;
  /**
   * Entries that are another writer's, as they wrote them, by key: every entry when they recorded
   * the whole subtree, else those whose known fields they changed.
   */
  readonly entries: ReadonlyMap<string, Document>;
  /** True when another writer recorded the whole subtree. */
  readonly wholeSubtree: boolean;
}

const knownEntryFields = ["resourceID", "clientId", "principalId", "retrievalError"] as const;

/** Replays, on a copy of `before`, the edits the fired race rules made inside the owned subtree. */
export function ownedSubtreeRaces(before: Document | undefined, rules: readonly FaultRule[]): OwnedSubtreeRaces {
  const entries = new Map<string, Document>();
  let wholeSubtree = false;
  if (before === undefined) {
    return { before, entries, wholeSubtree };
  }
  const edited = structuredClone(before);
  const storedEntries = (ownedStatus(before)?.identities ?? {}) as Record<string, Document>;
  for (const rule of rules) {
    const edit = rule.foreignEdit;
    if (rule.kind !== "race" || rule.triggered === 0 || edit === undefined || !edit.path.startsWith(ownedSubtreePointer)) {
      continue;
    }
    setAtJsonPointer(edited, edit.path, structuredClone(edit.value));
    if (edit.path === ownedSubtreePointer) {
      wholeSubtree = true;
      continue;
    }
    const [identitiesToken, key, ...deeper] = parseJsonPointer(edit.path.slice(ownedSubtreePointer.length));
    if (identitiesToken === "identities" && key !== undefined && deeper.length === 0) {
      const theirs = edit.value as Document;
      const stored = storedEntries[key];
      const changed = stored === undefined || knownEntryFields.some((field) => !isDeepStrictEqual(theirs[field], stored[field]));
      if (changed) entries.set(key, structuredClone(theirs));
    }
  }
  if (wholeSubtree) {
    // Their subtree as a whole, entries edited after it included: none of its entries is ours to judge against ARM.
    for (const [key, entry] of Object.entries((ownedStatus(edited)?.identities ?? {}) as Record<string, Document>)) entries.set(key, structuredClone(entry));
  }
  return { before: edited, entries, wholeSubtree };
}
