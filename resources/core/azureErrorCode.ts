/**
 * The Azure error code of a failed answer as upstream's azcore reads it (x-ms-error-code header,
 * else the JSON body's error code, else an XML `<Code>`; `""` when none), so "the identity is gone"
 * is decided on upstream's code. Undefined when the error carries no answer text. Not
 * @azure/core-client's `code`: it reads the body only, and keeps a code of any type.
 */
export function azureErrorCode(error: unknown): string | undefined {
  const response = (error as { response?: { headers?: { get?: (name: string) => string | undefined }; bodyAsText?: unknown } } | undefined)?.response;
  if (typeof response !== "object" || response === null) return undefined;
  const header = typeof response.headers?.get === "function" ? response.headers.get("x-ms-error-code") : undefined;
  if (typeof header === "string" && header !== "") return header;
  const body = response.bodyAsText;
  if (typeof body !== "string") return undefined;
  return body === "" ? "" : jsonErrorCode(body) || xmlErrorCode(body);
}

/** `code` of a JSON object body (unwrapped from `error` or `odata.error`), or `""`. */
function jsonErrorCode(body: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return "";
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return "";
  const record = parsed as Record<string, unknown>;
  const has = (key: string): boolean => Object.prototype.hasOwnProperty.call(record, key);
  const wrapped = has("error") ? record.error : has("odata.error") ? record["odata.error"] : record;
  if (typeof wrapped !== "object" || wrapped === null || Array.isArray(wrapped)) return "";
  const code = (wrapped as Record<string, unknown>).code;
  return typeof code === "string" ? code : "";
}

/** The first `<Code>` (any namespace prefix) of a body, as azcore's pattern finds it (Go's `\s` is these five). */
function xmlErrorCode(body: string): string {
  return /<(?:\w+:)?[c|C]ode>[\t\n\f\r ]*(\w+)[\t\n\f\r ]*<\/(?:\w+:)?[c|C]ode>/.exec(body)?.[1] ?? "";
}
