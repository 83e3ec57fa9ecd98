/** Thrown for a JSON pointer that cannot be applied. */
export class JsonPointerError extends Error {
  override readonly name = "JsonPointerError";
}

type JsonContainer = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is JsonContainer {
  return typeof value === "object" && value !== null;
}

/**
 * Splits an RFC 6901 JSON pointer into unescaped tokens.
 *
 * @param pointer - E.g. `/properties/status/a~1b`.
 * @returns The tokens, e.g. `["properties", "status", "a/b"]`.
 * @throws JsonPointerError when the pointer is not empty and does not start with `/`.
 */
export function parseJsonPointer(pointer: string): string[] {
  if (pointer === "") {
    return [];
  }
  if (!pointer.startsWith("/")) {
    throw new JsonPointerError(`JSON pointer must start with '/': ${pointer}`);
  }
  return pointer
    .slice(1)
    .split("/")
    .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/**
 * Sets a value at a JSON pointer, creating missing parent objects on the way.
 *
 * @param document - The object to change in place.
 * @param pointer - Where to set; must not be empty.
 * @param value - The value to set.
 * @throws JsonPointerError when the pointer is empty or crosses a non-object value.
 */
export function setAtJsonPointer(document: Record<string, unknown>, pointer: string, value: unknown): void {
  const tokens = parseJsonPointer(pointer);
  const last = tokens.pop();
  if (last === undefined) {
    throw new JsonPointerError("cannot set the document root");
  }
  let current: JsonContainer = document;
  for (const token of tokens) {
    const next: unknown = Array.isArray(current) ? current[Number(token)] : current[token];
    if (next === undefined) {
      const created: Record<string, unknown> = {};
      if (Array.isArray(current)) {
        current[Number(token)] = created;
      } else {
        current[token] = created;
      }
      current = created;
    } else if (isContainer(next)) {
      current = next;
    } else {
      throw new JsonPointerError(`cannot descend into a non-object at '${token}' of ${pointer}`);
    }
  }
  if (Array.isArray(current)) {
    current[last === "-" ? current.length : Number(last)] = value;
  } else {
    current[last] = value;
  }
}

/**
 * Reads the value at a JSON pointer.
 *
 * @param document - The value to read from.
 * @param pointer - Where to read; empty means the whole document.
 * @returns The value, or undefined when any part of the path is missing.
 */
export function getAtJsonPointer(document: unknown, pointer: string): unknown {
  let current: unknown = document;
  for (const token of parseJsonPointer(pointer)) {
    if (!isContainer(current)) {
      return undefined;
    }
    current = Array.isArray(current) ? current[Number(token)] : current[token];
  }
  return current;
}

/**
 * Removes the value at a JSON pointer, if present.
 *
 * @param document - The object to change in place.
 * @param pointer - What to remove.
 * @returns Whether something was removed.
 */
export function removeAtJsonPointer(document: Record<string, unknown>, pointer: string): boolean {
  const tokens = parseJsonPointer(pointer);
  const last = tokens.pop();
  if (last === undefined) {
    throw new JsonPointerError("cannot remove the document root");
  }
  const parent = getAtJsonPointer(document, tokens.length === 0 ? "" : `/${tokens.map((token) => token.replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`);
  if (!isContainer(parent)) {
    return false;
  }
  if (Array.isArray(parent)) {
    const index = Number(last);
    if (index >= parent.length) {
      return false;
    }
    parent.splice(index, 1);
    return true;
  }
  if (!(last in parent)) {
    return false;
  }
  delete parent[last];
  return true;
}
