/**
 * The invariant "a non-definitive answer changes no stored ID": which answers of a pass said
 * nothing definitive about an identity (read from the fault rules that fired in it), and the check
 * that the stored IDs they were about are what they were before the pass.
 *
 * Non-definitive, as the hook must judge them (docs/design.md, "What may change a stored ID"):
 * ARM's 404 with another code than ResourceNotFound or with no Azure error (`status` with another
 * `errorCode`, `bareStatus`), ARM's 200 with values of another type (`malformedAnswer`), and a data
 * plane answer that is malformed or partial (`malformedAnswer` on the data plane: the MSI half).
 */
import { isDeepStrictEqual } from "node:util";
import type { FaultRule } from "../../sandbox/faultInjector";
import type { Document } from "./reliabilitySandbox";
import { msiHalf, ownedStatus } from "./reliabilitySandbox";

/** What in a pass was answered without a definitive answer. */
export interface NonDefinitiveAnswers {
  /** Lowercase keys of data plane operator identities ARM answered that way. */
  readonly identityKeys: ReadonlySet<string>;
  /** True when the MSI half's data plane answer was malformed or partial. */
  readonly msiHalf: boolean;
}

/** True for an ARM answer a rule gives that says nothing definitive about the identity. */
function isNonDefinitiveArmAnswer(rule: FaultRule): boolean {
  if (rule.kind === "bareStatus" || rule.kind === "malformedAnswer") return true;
  return rule.kind === "status" && rule.statusCode === 404 && rule.errorCode !== "ResourceNotFound";
}

/**
 * The non-definitive answers of a pass, from the rules that fired in it; `desired` maps each
 * desired identity's lowercase key to its ARM ID (a lane-wide rule matches by path). A
 * `malformedAnswer` rule edits a 200 answer: for an identity absent from ARM (`existsInArm`) it
 * fires, yet ARM answers ResourceNotFound, a definitive answer.
 */
export function nonDefinitiveAnswersOf(
  rules: readonly FaultRule[],
  desired: ReadonlyMap<string, string>,
  existsInArm: (resourceId: string) => boolean = () => true,
): NonDefinitiveAnswers {
  const identityKeys = new Set<string>();
  let msi = false;
  for (const rule of rules) {
    if (rule.triggered === 0) continue;
    if (rule.target === "dataPlane" && rule.kind === "malformedAnswer") msi = true;
    if (rule.target !== "arm" || !isNonDefinitiveArmAnswer(rule)) continue;
    const match = rule.match ?? {};
    for (const [key, resourceId] of desired) {
      const byId = match.resourceId === undefined || match.resourceId.toLowerCase() === key;
      const byPath = match.pathContains === undefined || resourceId.toLowerCase().includes(match.pathContains.toLowerCase());
      if (byId && byPath && (rule.kind !== "malformedAnswer" || existsInArm(resourceId))) identityKeys.add(key);
    }
  }
  return { identityKeys, msiHalf: msi };
}

type Entry = Record<string, unknown>;

const ids = (entry: Entry | undefined): { clientId: unknown; principalId: unknown } => ({ clientId: entry?.clientId, principalId: entry?.principalId });
const hasIds = (entry: Entry | undefined): boolean => entry?.clientId !== undefined || entry?.principalId !== undefined;

/** The MSI half's entries by lowercase resource ID (the SMI under its own ID). */
function msiEntries(document: Document | undefined): Map<string, Entry> {
  const half = msiHalf(document);
  const entries = new Map<string, Entry>();
  for (const entry of Object.values((half?.controlPlaneOperatorsIdentities as Record<string, Entry> | undefined) ?? {})) {
    if (typeof entry.resourceId === "string") entries.set(entry.resourceId.toLowerCase(), entry);
  }
  const smi = half?.serviceManagedIdentity as Entry | undefined;
  if (typeof smi?.resourceId === "string") entries.set(smi.resourceId.toLowerCase(), smi);
  return entries;
}

/**
 * Violations of the invariant for one pass: an identity ARM answered without a definitive answer
 * whose stored clientId/principalId changed, or whose entry this pass recorded as ResourceNotFound;
 * an MSI half whose stored IDs changed on a malformed or partial data plane answer. Entries another
 * writer changed between the pass's read and its write are theirs and not judged.
 */
export function nonDefinitiveViolations(
  answers: NonDefinitiveAnswers | undefined,
  before: Document | undefined,
  after: Document | undefined,
  theirs: { readonly entries: ReadonlySet<string>; readonly wholeSubtree: boolean } = { entries: new Set(), wholeSubtree: false },
): string[] {
  if (answers === undefined || after === undefined) return [];
  const violations: string[] = [];
  const beforeEntries = (ownedStatus(before)?.identities ?? {}) as Record<string, Entry>;
  const afterEntries = (ownedStatus(after)?.identities ?? {}) as Record<string, Entry>;
  for (const key of [...answers.identityKeys].sort()) {
    if (theirs.wholeSubtree || theirs.entries.has(key)) continue;
    const previous = beforeEntries[key];
    const entry = afterEntries[key];
    if (hasIds(previous) && !isDeepStrictEqual(ids(entry), ids(previous))) {
      violations.push(
        `${key}: a non-definitive answer from ARM changed its stored IDs (clientId ${String(previous?.clientId)} became ${String(entry?.clientId)})`,
      );
    }
    const retrievalError = entry?.retrievalError;
    if (!isDeepStrictEqual(entry, previous) && typeof retrievalError === "string" && retrievalError.startsWith("ResourceNotFound")) {
      violations.push(`${key}: a non-definitive answer from ARM was taken for ResourceNotFound (${retrievalError.slice(0, 120)})`);
    }
  }
  if (answers.msiHalf) {
    const previous = msiEntries(before);
    const current = msiEntries(after);
    for (const [resourceId, entry] of previous) {
      if (hasIds(entry) && !isDeepStrictEqual(ids(current.get(resourceId)), ids(entry))) {
        violations.push(
          `${resourceId}: a non-definitive answer from the data plane (malformed or partial) changed its stored IDs in the MSI half (clientId ${String(entry.clientId)} became ${String(current.get(resourceId)?.clientId)})`,
        );
      }
    }
  }
  return violations;
}
