/**
 * The engine's `readStackResourceOutputs` invoke on the wire (pulumi/proto/pulumi/resource.proto and
 * provider.proto, google/protobuf/struct.proto): the request, and of its answer only what the program
 * keeps, each cluster resource's URN and the cluster ID its outputs record.
 *
 * Why the wire is read here and not through the SDK's `invoke`: the answer carries every output of
 * every resource, about 6.5 MB at 2,000 clusters. The SDK decodes it into google-protobuf messages,
 * then copies it twice into plain objects (0.1–0.2 s of the program's CPU), and that garbage, made
 * before the program declares anything, kept the program's collector busier for the rest of a
 * no-op `up`: 2.5 s of collection against 1.7 s without the read (CPU profiles of a 2,000-cluster
 * no-op `up`'s program, docs/performance.md "What bounds the targets"). This walk reads each
 * entry's key and skips every value it does not keep, so it allocates only the URNs and IDs it
 * returns. protobufjs reads and writes the wire format's primitives; the field numbers are the
 * protocol's, named below.
 */
import { Reader, Writer } from "protobufjs/minimal";

/** Wire types (protobuf encoding). */
const lengthDelimited = 2;
const varint = 0;

/** ResourceInvokeRequest: tok = 1, args = 2 (a Struct), acceptResources = 5. */
const invokeRequestField = { tok: 1, args: 2, acceptResources: 5 } as const;
/** InvokeResponse: return = 1 (a Struct), failures = 2 (CheckFailure: property = 1, reason = 2). */
const invokeResponseField = { return: 1, failures: 2 } as const;
const checkFailureField = { property: 1, reason: 2 } as const;
/** Struct: fields = 1, a map whose entries are key = 1, value = 2 (a Value). */
const structField = { fields: 1 } as const;
const mapEntryField = { key: 1, value: 2 } as const;
/** Value: string_value = 3, struct_value = 5 (the other kinds are skipped). */
const valueField = { string: 3, struct: 5 } as const;

function tag(field: number, wireType: number): number {
  return (field << 3) | wireType;
}

/**
 * The request the SDK's `invoke` sends for `token` with `{ stackName }` and no provider: the
 * engine's built-in `pulumi` provider answers it. acceptResources as the SDK sets it by default.
 */
export function stackOutputsRequest(token: string, stackName: string): Uint8Array {
  const writer = Writer.create();
  writer.uint32(tag(invokeRequestField.tok, lengthDelimited)).string(token);
  writer.uint32(tag(invokeRequestField.args, lengthDelimited)).fork();
  writer.uint32(tag(structField.fields, lengthDelimited)).fork();
  writer.uint32(tag(mapEntryField.key, lengthDelimited)).string("stackName");
  writer.uint32(tag(mapEntryField.value, lengthDelimited)).fork();
  writer.uint32(tag(valueField.string, lengthDelimited)).string(stackName);
  writer.ldelim().ldelim().ldelim();
  writer.uint32(tag(invokeRequestField.acceptResources, varint)).bool(true);
  return writer.finish();
}

/** One resource of the answer: its URN and the `clusterResourceId` output, when that is a string. */
export interface StackResource {
  readonly urn: string;
  readonly clusterResourceId: string | undefined;
}

/** A length-delimited field's bytes, as [start, end) of the reader's buffer. */
interface Span {
  readonly start: number;
  readonly end: number;
}

function lengthDelimitedSpan(reader: Reader): Span {
  const length = reader.uint32();
  return { start: reader.pos, end: reader.pos + length };
}

/** A length-delimited field's span, with the reader moved past it: for a field read later. */
function spanSkipped(reader: Reader): Span {
  const span = lengthDelimitedSpan(reader);
  reader.pos = span.end;
  return span;
}

/** Calls `visit` for each field of the message in `span` with the reader at its value; skips what `visit` leaves. */
function eachField(reader: Reader, span: Span, visit: (field: number, wireType: number) => void): void {
  reader.pos = span.start;
  while (reader.pos < span.end) {
    const fieldTag = reader.uint32();
    const before = reader.pos;
    visit(fieldTag >>> 3, fieldTag & 7);
    if (reader.pos === before) reader.skipType(fieldTag & 7);
  }
  if (reader.pos !== span.end) throw new RangeError(`a field runs past its message's end (offset ${reader.pos}, end ${span.end})`);
}

/** Each entry of the Struct in `span`, as its key and the span of its Value; entries without a value are left out. */
function structEntries(reader: Reader, span: Span): Array<{ readonly key: string; readonly value: Span }> {
  const entries: Array<{ key: string; value: Span }> = [];
  eachField(reader, span, (field, wireType) => {
    if (field !== structField.fields || wireType !== lengthDelimited) return;
    const entry = lengthDelimitedSpan(reader);
    let key = "";
    let value: Span | undefined;
    eachField(reader, entry, (entryField, entryWireType) => {
      if (entryWireType !== lengthDelimited) return;
      if (entryField === mapEntryField.key) key = reader.string();
      else if (entryField === mapEntryField.value) value = spanSkipped(reader);
    });
    if (value !== undefined) entries.push({ key, value });
  });
  return entries;
}

/** The key and value by which Pulumi marks a secret object: `{ <key>: <value>, value: <the secret> }` (sdk/go/common/resource/sig). */
const secretSignature = { key: "4dabf18193072939515e22adb298388d", value: "1b47061264138c4ac30d75fd1eb44270" } as const;

/**
 * The Value in `span` as a string, or undefined when it is another kind. A secret string is read
 * as its value: the SDK's invoke lifts a nested secret to the top of the answer and unwraps it there.
 */
function stringValue(reader: Reader, span: Span): string | undefined {
  let found: string | undefined;
  let struct: Span | undefined;
  eachField(reader, span, (field, wireType) => {
    if (wireType !== lengthDelimited) return;
    if (field === valueField.string) found = reader.string();
    else if (field === valueField.struct) struct = spanSkipped(reader);
  });
  if (struct === undefined) return found;
  const entries = structEntries(reader, struct);
  const signature = entries.find((entry) => entry.key === secretSignature.key);
  const secret = entries.find((entry) => entry.key === "value");
  return signature !== undefined && secret !== undefined && stringValue(reader, signature.value) === secretSignature.value
    ? stringValue(reader, secret.value)
    : undefined;
}

/** The span of the Struct the Value in `span` holds, or undefined when it holds another kind. */
function structValue(reader: Reader, span: Span): Span | undefined {
  let found: Span | undefined;
  eachField(reader, span, (field, wireType) => {
    if (field === valueField.struct && wireType === lengthDelimited) found = spanSkipped(reader);
  });
  return found;
}

/** The failures of an InvokeResponse, as the SDK words them: `<reason> (<property>)`. */
function failureOf(reader: Reader, span: Span): string {
  let property = "";
  let reason = "";
  eachField(reader, span, (field, wireType) => {
    if (wireType !== lengthDelimited) return;
    if (field === checkFailureField.property) property = reader.string();
    else if (field === checkFailureField.reason) reason = reader.string();
  });
  return `${reason} (${property})`;
}

/**
 * The resources of type `resourceType` in a `readStackResourceOutputs` answer (an InvokeResponse
 * whose return is `{ name, outputs: { <urn>: { type, outputs } } }`), in the order of the wire.
 * @throws Error naming the token and the engine's reasons when the answer carries failures, as the SDK's invoke does.
 * @throws RangeError when the bytes are not a well-formed message.
 */
export function resourcesOfStackAnswer(answer: Uint8Array, token: string, resourceType: string): StackResource[] {
  const reader = Reader.create(answer);
  const failures: string[] = [];
  let returned: Span | undefined;
  eachField(reader, { start: 0, end: answer.length }, (field, wireType) => {
    if (wireType !== lengthDelimited) return;
    if (field === invokeResponseField.failures) failures.push(failureOf(reader, lengthDelimitedSpan(reader)));
    else if (field === invokeResponseField.return) returned = spanSkipped(reader);
  });
  if (failures.length > 0) throw new Error(`Invoke of '${token}' failed: ${failures.join("; ")}`);
  const resources: StackResource[] = [];
  const outputs = returned && structEntries(reader, returned).find((entry) => entry.key === "outputs");
  const byUrn = outputs && structValue(reader, outputs.value);
  for (const { key: urn, value } of byUrn ? structEntries(reader, byUrn) : []) {
    const resource = structValue(reader, value);
    if (resource === undefined) continue;
    const fields = structEntries(reader, resource);
    const type = fields.find((entry) => entry.key === "type");
    if (type === undefined || stringValue(reader, type.value) !== resourceType) continue;
    const resourceOutputs = fields.find((entry) => entry.key === "outputs");
    const outputFields = resourceOutputs && structValue(reader, resourceOutputs.value);
    const clusterId = outputFields && structEntries(reader, outputFields).find((entry) => entry.key === "clusterResourceId");
    resources.push({ urn, clusterResourceId: clusterId && stringValue(reader, clusterId.value) });
  }
  return resources;
}
