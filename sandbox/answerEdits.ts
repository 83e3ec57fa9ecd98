/**
 * What a `malformedAnswer` fault does to a 200 answer before it is sent: the edits of its rule
 * (faultInjector.ts `AnswerEdit`), applied in order to a copy of the answer. ARM edits apply to the
 * identity body; data plane edits apply to one entry of `explicit_identities` (the one answering
 * for `identityId`, case-insensitive, or the first) or, with `within: "answer"`, to the whole body.
 */
import type { AnswerEdit } from "./faultInjector";
import { removeAtJsonPointer, setAtJsonPointer } from "./jsonPointer";

type Json = Record<string, unknown>;

/** A copy of an ARM identity body with the edits applied. */
export function editArmAnswer(body: Json, edits: readonly AnswerEdit[]): Json {
  const edited = structuredClone(body);
  for (const edit of edits) {
    if (edit.op === "set") setAtJsonPointer(edited, edit.pointer, structuredClone(edit.value));
    else if (edit.op === "remove") removeAtJsonPointer(edited, edit.pointer);
  }
  return edited;
}

/** A copy of a data plane answer (`{"explicit_identities": [...]}`) with the edits applied. */
export function editDataPlaneAnswer(body: Json, edits: readonly AnswerEdit[]): Json {
  const edited = structuredClone(body);
  for (const edit of edits) {
    const entries = Array.isArray(edited.explicit_identities) ? (edited.explicit_identities as unknown[]) : [];
    if ((edit.op === "set" || edit.op === "remove") && edit.within === "answer") {
      if (edit.op === "set") setAtJsonPointer(edited, edit.pointer, structuredClone(edit.value));
      else removeAtJsonPointer(edited, edit.pointer);
      continue;
    }
    const index = entryIndex(entries, edit.identityId);
    const entry = entries[index];
    if (index < 0 || typeof entry !== "object" || entry === null) continue;
    if (edit.op === "set") setAtJsonPointer(entry as Json, edit.pointer, structuredClone(edit.value));
    else if (edit.op === "remove") removeAtJsonPointer(entry as Json, edit.pointer);
    else if (edit.op === "dropEntry") entries.splice(index, 1);
    else entries.push({ ...structuredClone(entry as Json), resource_id: edit.resourceId });
  }
  return edited;
}

/** The index of the entry answering for `identityId` (case-insensitive), the first when not given, or -1. */
function entryIndex(entries: readonly unknown[], identityId: string | undefined): number {
  if (identityId === undefined) return entries.length === 0 ? -1 : 0;
  const wanted = identityId.toLowerCase();
  return entries.findIndex((entry) => {
    const resourceId = (entry as { resource_id?: unknown } | null)?.resource_id;
    return typeof resourceId === "string" && resourceId.toLowerCase() === wanted;
  });
}
