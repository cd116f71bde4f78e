import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createStreamChecker, type CheckReport, type StreamKind } from '../protocol/check/check-stream.ts';
import { OperatorError } from './operator-error.ts';

export interface CheckOptions {
  /** A file, an http(s) URL, or `-` for stdin. */
  source: string;
  json: boolean;
  /** Skip detection: check as this surface. */
  kind: StreamKind | undefined;
  /** A URL is POSTed this JSON file instead of fetched with GET. */
  data: string | undefined;
  /** Sent as `Authorization: Bearer` to a URL (--key or SLUICE_API_KEY). */
  key: string | undefined;
}

/**
 * Exit 2, not 1, for what keeps the stream from being read at all: 1 means violations were found.
 */
function cannotRead(message: string): OperatorError {
  return new OperatorError(message, 2);
}

const KIND_NAMES: Record<StreamKind, string> = {
  chat: 'chat completions stream',
  responses: 'Responses stream',
  messages: 'Anthropic Messages stream',
  media: 'images or audio stream',
};

/**
 * `sluice check <file|url|->`: reads a recorded or live stream as it arrives, checks it against
 * the stream contract (src/protocol/check) and prints every violation with its frame. Returns the
 * exit code: 0 conforming, 1 violations.
 */
export async function check(options: CheckOptions): Promise<number> {
  const checker = createStreamChecker(options.kind ? { kind: options.kind } : {});
  for await (const piece of await open(options)) checker.push(piece as Uint8Array);
  const report = checker.end();
  console.log(options.json ? JSON.stringify(asJson(options.source, report)) : asText(options.source, report));
  return report.violations.length === 0 ? 0 : 1;
}

async function open(options: CheckOptions): Promise<AsyncIterable<Uint8Array>> {
  const { source } = options;
  if (source === '-') return process.stdin;
  if (/^https?:\/\//i.test(source)) return fetchStream(options);
  if (options.data !== undefined) throw cannotRead(`--data is for a URL, and ${source} is a file.`);
  const file = createReadStream(source);
  // Surface a missing or unreadable file before the first read, as one line.
  await new Promise<void>((resolve, reject) => {
    file.once('readable', resolve);
    file.once('error', (err: NodeJS.ErrnoException) => reject(cannotRead(`cannot read ${source}: ${err.code ?? err.message}`)));
  });
  return file;
}

async function fetchStream(options: CheckOptions): Promise<AsyncIterable<Uint8Array>> {
  const url = options.source;
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.data !== undefined) {
    body = await readFile(options.data, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw cannotRead(`cannot read --data ${options.data}: ${err.code ?? err.message}`);
    });
    headers['content-type'] = 'application/json';
  }
  let res: Response;
  try {
    res = await fetch(url, { method: body === undefined ? 'GET' : 'POST', headers, body });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw cannotRead(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const type = res.headers.get('content-type') ?? 'no content type';
  if (!res.ok || !type.startsWith('text/event-stream') || !res.body) {
    const text = (await res.text().catch(() => '')).trim().slice(0, 300);
    const hint = body !== undefined && res.ok ? ' (does the --data body ask for "stream": true?)' : '';
    throw cannotRead(`${url} answered HTTP ${res.status} with ${type}, not a stream${hint}${text ? `: ${text}` : ''}`);
  }
  return res.body;
}

function asJson(source: string, report: CheckReport) {
  return {
    source,
    kind: report.kind,
    frames: report.frames,
    conforming: report.violations.length === 0,
    violations: report.violations,
  };
}

function asText(source: string, report: CheckReport): string {
  const what = `${source === '-' ? 'stdin' : source}: ${KIND_NAMES[report.kind]}, ${report.frames} frame${report.frames === 1 ? '' : 's'}`;
  const count = report.violations.length;
  if (count === 0) return `${what}: conforming`;
  const lines = report.violations.map((v) => {
    const where = v.frame === null ? 'end' : `frame ${v.frame}`;
    return `  ${where.padEnd(11)} ${v.rule.padEnd(28)} ${v.message}`;
  });
  return `${what}, ${count} violation${count === 1 ? '' : 's'}:\n${lines.join('\n')}`;
}
