/** What no exported span may carry (tokens, keys, certificates, URL queries, secret settings): every span text passes {@link redactSpanText}. */
import { redactSecrets } from "../core/retrievalError";

const redacted = "[redacted]";

/** A PEM block: a certificate or a private key. */
const pemBlock = /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)/g;

const urlWithQuery = /\b([a-z][a-z0-9+.-]*:\/\/[^\s?#"'<>]*)\?([^\s#"'<>]*)/gi;

/** Key-like base64 runs: mixed case and digits, and with `/` also a `+` or `=` padding, which no resource ID, path or GUID has. */
const keyMaterial = /[A-Za-z0-9+/=_~.-]{32,}/g;

function looksLikeKeyMaterial(run: string): boolean {
  const mixed = /[a-z]/.test(run) && /[A-Z]/.test(run) && /[0-9]/.test(run);
  return mixed && (!run.includes("/") || run.includes("+") || /[A-Za-z0-9]=+$/.test(run));
}

/** Every run of {@link keyMaterial} redacted, or the slash-free parts of a run that is a path. */
function redactKeyMaterial(text: string): string {
  return text.replace(keyMaterial, (run) =>
    looksLikeKeyMaterial(run)
      ? redacted
      : run
          .split("/")
          .map((part) => (part.length >= 32 && looksLikeKeyMaterial(part) ? redacted : part))
          .join("/"),
  );
}

function redactQuery(query: string): string {
  return query
    .split("&")
    .map((parameter) => {
      const name = parameter.split("=")[0] ?? "";
      // `api-version` says nothing secret and helps reading a request.
      return name.toLowerCase() === "api-version" ? parameter : `${name}=${redacted}`;
    })
    .join("&");
}

/** Environment variables whose values are secrets: keys, secrets, passwords, passphrases, tokens. */
const secretVariableName = /KEY|SECRET|PASSWORD|PASSPHRASE|TOKEN|CERTIFICATE|CONNECTION_STRING|IDENTITY_HEADER/i;

/** The values of the environment's secret variables (8 characters or more: shorter ones would redact ordinary words). */
export function secretValuesOf(environment: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(environment)
    .filter(([name, value]) => secretVariableName.test(name) && value !== undefined && value.length >= 8)
    .map(([, value]) => value as string);
}

/** The text without known secret values, PEM blocks, URL queries (but `api-version`), bearer tokens, JWTs, `key=`/`sig=` values, key-like runs. */
export function redactSpanText(text: string, secretValues: readonly string[] = []): string {
  const withoutSecrets = secretValues.reduce((result, secret) => result.split(secret).join(redacted), text);
  const withoutQueries = withoutSecrets
    .replace(pemBlock, redacted)
    .replace(urlWithQuery, (_match, base: string, query: string) => `${base}?${redactQuery(query)}`);
  return redactKeyMaterial(redactSecrets(withoutQueries));
}

/** Attributes with every string value (and every string of an array value) redacted. */
export function redactAttributes<T>(attributes: Readonly<Record<string, T>>, secretValues: readonly string[] = []): Record<string, T> {
  const redactValue = (value: unknown): unknown => (typeof value === "string" ? redactSpanText(value, secretValues) : value);
  return Object.fromEntries(
    Object.entries(attributes).map(([name, value]) => [name, Array.isArray(value) ? value.map(redactValue) : redactValue(value)]),
  ) as Record<string, T>;
}
