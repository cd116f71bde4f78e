import fc from 'fast-check';
import { hostileLiteral, pick } from './hostile-values.ts';
import type { Recording } from './recordings.ts';

type Path = (string | number)[];

/** One JSON field of one frame replaced by a hostile literal, or deleted (`value` undefined). */
export interface JsonEdit {
  block: number;
  path: number;
  value: string | undefined;
}

type ByteEdit =
  | { kind: 'truncate'; at: number }
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'duplicate'; at: number; length: number };

/** A recording and what is done to it before it reaches a decoder: the fuzz input. */
export interface BodyCase {
  recording: Recording;
  /** Long recordings keep their first `head` and last `tail` frames (a run stays fast; the end still comes). */
  head: number;
  tail: number;
  jsonEdits: JsonEdit[];
  byteEdits: ByteEdit[];
  /** Sizes of the reads the body arrives in, repeated to the end; empty: one read. */
  splits: number[];
}

const text = (s: string) => new TextEncoder().encode(s);

/** Bytes that mean something to a framer or a UTF-8 decoder, inserted anywhere. */
const INSERTS: readonly Uint8Array[] = [
  '\n',
  '\r',
  '\r\n',
  '\n\n',
  'data: ',
  'data: [DONE]\n\n',
  'event: error\n',
  ': ping\n\n',
  'id: 1\n',
  'retry: x\n',
  'bogus: 1\n',
  '{',
  '"',
  '\\',
  '\u0000',
].map(text);
const RAW_BYTES: readonly Uint8Array[] = [
  new Uint8Array([0xff]),
  new Uint8Array([0xc3]), // a UTF-8 lead byte with no continuation
  new Uint8Array([0xed, 0xa0, 0x80]), // an encoded lone surrogate (invalid UTF-8)
  new Uint8Array([0xef, 0xbb, 0xbf]), // a BOM
  new Uint8Array([0, 0, 0, 0x10]), // an eventstream length prelude
];

const position = fc.nat();
const byteEdit: fc.Arbitrary<ByteEdit> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: position }),
  fc.record({ kind: fc.constant('flip' as const), at: position, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: position,
    bytes: fc.oneof(pick([...INSERTS, ...RAW_BYTES]), fc.uint8Array({ minLength: 1, maxLength: 8 })),
  }),
  fc.record({ kind: fc.constant('delete' as const), at: position, length: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant('duplicate' as const), at: position, length: fc.integer({ min: 1, max: 256 }) }),
);

/** A field of a random frame (`block`), at a random path, made hostile; sometimes deleted. */
export const jsonEdit: fc.Arbitrary<JsonEdit> = fc.record({
  block: fc.nat(),
  path: fc.nat(),
  value: fc.option(hostileLiteral, { nil: undefined, freq: 8 }),
});

/** Splits biased towards small reads (where framing bugs live), sometimes one byte at a time. */
const splits = fc.oneof(
  { weight: 4, arbitrary: fc.constant([] as number[]) },
  { weight: 1, arbitrary: fc.constant<number[]>([1]) },
  { weight: 27, arbitrary: fc.array(fc.integer({ min: 1, max: 96 }), { minLength: 1, maxLength: 24 }) },
);

/**
 * A fuzz input over a family of recordings: mostly mutated (hostile JSON fields, flipped, inserted,
 * deleted or duplicated bytes, a truncation), sometimes as recorded; always split at random points.
 */
export function bodyCase(recordings: readonly Recording[]): fc.Arbitrary<BodyCase> {
  return fc.record({
    recording: pick(recordings),
    head: fc.integer({ min: 1, max: 40 }),
    tail: fc.integer({ min: 0, max: 4 }),
    jsonEdits: fc.array(jsonEdit, { maxLength: 2 }),
    byteEdits: fc.array(byteEdit, { maxLength: 3 }),
    splits,
  });
}

export function isMutated(c: BodyCase): boolean {
  return c.jsonEdits.length > 0 || c.byteEdits.length > 0;
}

/** The bytes a decoder gets for this case. */
export function buildBody(c: BodyCase): Buffer {
  const all = c.recording.blocks;
  const keep =
    all.length <= c.head + c.tail ? all.map((_, i) => i) : [...all.keys()].filter((i) => i < c.head || i >= all.length - c.tail);
  const blocks = keep.map((i) => all[i]);
  const payloads = keep.map((i) => c.recording.payloads[i]);
  for (const edit of c.jsonEdits) {
    const withJson = payloads.flatMap((p, i) => (p === null ? [] : [i]));
    if (withJson.length === 0) break;
    const at = withJson[edit.block % withJson.length];
    const edited = editJson(payloads[at] as string, edit);
    if (edited === null) continue;
    payloads[at] = edited;
    blocks[at] = c.recording.withPayload(keep[at], edited);
  }
  let body: Buffer = Buffer.concat(blocks);
  for (const edit of c.byteEdits) body = editBytes(body, edit);
  return body;
}

/**
 * At most this many reads per body: a 70,000-character hostile string is not fed one byte at a
 * time, which costs the bedrock decoder quadratic time (it joins its pending bytes on every read)
 * and would make it most of the fuzz's run time.
 */
const MAX_READS = 2000;

/** The reads the body arrives in. */
export function splitBody(body: Buffer, sizes: readonly number[]): Buffer[] {
  if (sizes.length === 0) return [body];
  const smallest = Math.ceil(body.length / MAX_READS);
  const pieces: Buffer[] = [];
  for (let at = 0, i = 0; at < body.length; i++) {
    const n = Math.max(sizes[i % sizes.length], smallest);
    pieces.push(body.subarray(at, at + n));
    at += n;
  }
  return pieces;
}

function editBytes(body: Buffer, edit: ByteEdit): Buffer {
  const at = edit.at % (body.length + 1);
  switch (edit.kind) {
    case 'truncate':
      return body.subarray(0, at);
    case 'flip': {
      if (at >= body.length) return body;
      const copy = Buffer.from(body);
      copy[at] ^= 1 << edit.bit;
      return copy;
    }
    case 'insert':
      return Buffer.concat([body.subarray(0, at), edit.bytes, body.subarray(at)]);
    case 'delete':
      return Buffer.concat([body.subarray(0, at), body.subarray(at + edit.length)]);
    case 'duplicate':
      return Buffer.concat([body.subarray(0, at + edit.length), body.subarray(at)]);
  }
}

const SENTINEL = '\u0000fuzz-sentinel\u0000';
const SENTINEL_JSON = JSON.stringify(SENTINEL);

/** The payload with one node replaced by a raw literal (or deleted); null when it has no such node. */
export function editJson(payload: string, edit: JsonEdit): string | null {
  let root: unknown;
  try {
    root = JSON.parse(payload);
  } catch {
    return null;
  }
  const all = pathsOf(root);
  if (all.length === 0) return null;
  const path = all[edit.path % all.length];
  let node = root as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (edit.value === undefined) {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
    try {
      return JSON.stringify(root);
    } catch {
      return null;
    }
  }
  node[last] = SENTINEL;
  try {
    return JSON.stringify(root).replace(SENTINEL_JSON, () => edit.value as string);
  } catch {
    return null; // a payload already nested past JSON.stringify's reach by an earlier edit
  }
}

/** Recorded payloads nest a few levels; an edited one may hold a hostile 20,000 levels, not walked. */
const MAX_PATH_DEPTH = 32;

/** Every node below the root, as a path (the root itself is replaced by byte edits, not here). */
function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  if (value === null || typeof value !== 'object' || prefix.length >= MAX_PATH_DEPTH) return out;
  const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  for (const [key, child] of entries) {
    const path = [...prefix, key];
    out.push(path);
    pathsOf(child, path, out);
  }
  return out;
}
