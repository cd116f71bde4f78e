import type { GeminiPartialArg } from './payload.ts';

type Segment = string | number;

/**
 * The subset of RFC 9535 that Vertex uses to address a streamed argument: `$` then `.name`,
 * `[0]`, `['name']` or `["name"]` segments. Undefined for anything else.
 */
export function parseJsonPath(path: string): Segment[] | undefined {
  if (!path.startsWith('$')) return undefined;
  const out: Segment[] = [];
  let i = 1;
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      const m = /^[A-Za-z_\u0080-\uffff][\w\u0080-\uffff]*/.exec(path.slice(i + 1));
      if (!m) return undefined;
      out.push(m[0]);
      i += 1 + m[0].length;
    } else if (c === '[') {
      const index = /^\[(0|[1-9]\d*)\]/.exec(path.slice(i));
      if (index) {
        out.push(Number(index[1]));
        i += index[0].length;
        continue;
      }
      const quoted = readQuoted(path, i + 1);
      if (!quoted || path[quoted.end] !== ']') return undefined;
      out.push(quoted.value);
      i = quoted.end + 1;
    } else {
      return undefined;
    }
  }
  return out;
}

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', '/': '/', '\\': '\\', "'": "'", '"': '"' };

/** A quoted name starting at `at` (RFC 9535 escapes); `end` is the index after the closing quote. */
function readQuoted(path: string, at: number): { value: string; end: number } | undefined {
  const quote = path[at];
  if (quote !== "'" && quote !== '"') return undefined;
  let value = '';
  for (let j = at + 1; j < path.length; j++) {
    const c = path[j];
    if (c === quote) return { value, end: j + 1 };
    if (c !== '\\') {
      value += c;
      continue;
    }
    const e = path[++j];
    if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(path.slice(j + 1, j + 5))) {
      value += String.fromCharCode(Number.parseInt(path.slice(j + 1, j + 5), 16));
      j += 4;
    } else if (e !== undefined && Object.hasOwn(ESCAPES, e)) value += ESCAPES[e];
    else return undefined;
  }
  return undefined;
}

/**
 * Vertex streams a call's arguments as PartialArgs (vertex-streamed-function-call-args.jsonl):
 * one value per JSON path, a string possibly cut into pieces joined by `willContinue`. They are
 * assembled into the arguments object and sent once when the call closes, which is correct
 * whatever order the paths come in (streaming JSON text would break on a path that revisits a
 * closed object).
 */
export class PartialArgsAssembler {
  // Null-prototype objects: a path segment named `__proto__` is just a key.
  private readonly root: Record<string, unknown> = Object.create(null);
  /** The path whose string value the next PartialArg continues. */
  private continuing: string | undefined;

  /** Adds one fragment; returns a description of the problem when it cannot be placed. */
  add(arg: GeminiPartialArg): string | undefined {
    const path = arg.jsonPath ?? '';
    const segments = parseJsonPath(path);
    if (!segments || segments.length === 0) return `unsupported function-call argument path ${JSON.stringify(path)}`;
    let container: Record<string, unknown> | unknown[] = this.root;
    for (let k = 0; k < segments.length - 1; k++) {
      const key = segments[k];
      const next = segments[k + 1];
      let child = (container as Record<Segment, unknown>)[key];
      if (child === undefined || child === null || typeof child !== 'object') {
        child = typeof next === 'number' ? [] : Object.create(null);
        (container as Record<Segment, unknown>)[key] = child;
      }
      if (Array.isArray(child) !== (typeof next === 'number')) {
        return `function-call argument path ${JSON.stringify(path)} conflicts with an earlier value`;
      }
      container = child as Record<string, unknown> | unknown[];
    }
    const leaf = segments[segments.length - 1];
    if (Array.isArray(container) !== (typeof leaf === 'number')) {
      return `function-call argument path ${JSON.stringify(path)} conflicts with an earlier value`;
    }
    const slot = container as Record<Segment, unknown>;
    if (arg.stringValue != null) {
      const previous = slot[leaf];
      slot[leaf] = this.continuing === path && typeof previous === 'string' ? previous + arg.stringValue : arg.stringValue;
    } else if (arg.numberValue != null) slot[leaf] = arg.numberValue;
    else if (arg.boolValue != null) slot[leaf] = arg.boolValue;
    else if (arg.nullValue !== undefined) slot[leaf] = null;
    this.continuing = arg.willContinue ? path : undefined;
    return undefined;
  }

  json(): string {
    return JSON.stringify(this.root);
  }
}
