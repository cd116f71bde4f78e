import type { IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http';
import { after } from 'node:test';
import { readStreamText, SluiceStreamError } from '../../src/client/index.ts';
import { createStreamChecker, type StreamChecker } from '../../src/protocol/check/check-stream.ts';

/**
 * The stream tap: every `text/event-stream` response a test gateway sends is read by the same
 * checker as `sluice check` (src/protocol/check), and the test file fails when one breaks the
 * stream contract; each whole stream the checker passes is then read by sluice/client (src/client),
 * which must accumulate it or raise the stream's own error frame, nothing else. startGateway (gateway.ts) taps each gateway it starts; fake upstreams are
 * other servers and are never tapped. Nothing in src/ changes: the tap wraps `write` / `end` of
 * each response of the tapped server, before the gateway's own handler runs.
 *
 * What is not checked, and said so in the file's diagnostics:
 * - a stream the client abandoned (it closed its side of the connection before the gateway ended
 *   the response): sluice stops writing to a client that left, so the body is partial by design.
 *   A connection the gateway itself drops mid-stream is checked, and fails (no `[DONE]`);
 * - a request carrying `x-test-partial-stream: <reason>`: a test that makes a stream partial on
 *   purpose opts out explicitly, with its reason;
 * - a resume (`Last-Event-ID`): it continues a stream, and is not a whole stream on its own.
 */
export const PARTIAL_STREAM_HEADER = 'x-test-partial-stream';

/** A broken rule of the checker, or the client reader's failure (rule `client/read`). */
interface Finding {
  request: string;
  violations: { frame: number | null; rule: string; message: string }[];
  body: string;
}

const findings: Finding[] = [];
const skipped: string[] = [];
let checked = 0;
let abandoned = 0;

/** A response's body is kept for the failure message, up to this many characters. */
const KEEP_BODY = 4000;
/** Streams longer than this are checked but not read by the client (the soak's, the benches'). */
const READ_BODY = 8_000_000;

export function tapStreams(server: Server): void {
  server.prependListener('request', watch);
}

function watch(req: IncomingMessage, res: ServerResponse): void {
  const request = `${req.method} ${req.url}`;
  let headers: OutgoingHttpHeaders = {};
  let checker: StreamChecker | undefined;
  let decided = false;
  let body = '';
  const whole: string[] = [];
  let wholeLength = 0;
  // Whether the client closed its side (FIN or reset): a stream cut then is the client's doing;
  // a stream cut without it is the gateway dropping the connection, and is checked as it stands.
  let clientLeft = false;
  const socket = req.socket;
  const onClientGone = (): void => {
    clientLeft = true;
  };
  socket.once('end', onClientGone);
  socket.once('error', onClientGone);
  res.once('close', () => {
    socket.off('end', onClientGone);
    socket.off('error', onClientGone);
  });

  // The content type is known once the headers are: from writeHead's argument or setHeader.
  const decide = (): void => {
    if (decided) return;
    decided = true;
    const type = String(headerValue(headers, 'content-type') ?? res.getHeader('content-type') ?? '');
    if (!type.startsWith('text/event-stream')) return;
    // MCP's Streamable HTTP (/mcp) sends JSON-RPC messages as SSE: no model stream, no contract of sluice's to check.
    if (/\/mcp(\?|$)/.test(req.url ?? '')) return;
    const optOut = req.headers[PARTIAL_STREAM_HEADER];
    if (optOut !== undefined) return void skipped.push(`${request}: ${String(optOut)}`);
    if (req.headers['last-event-id'] !== undefined) return void skipped.push(`${request}: a resume (Last-Event-ID)`);
    checker = createStreamChecker();
    res.once('close', () => {
      if (!checker) return;
      if (!res.writableEnded && clientLeft) return void (abandoned += 1);
      checked += 1;
      const violations: Finding['violations'] = checker.end().violations;
      if (violations.length === 0 && wholeLength <= READ_BODY) {
        const failure = readFailure(whole.join(''));
        if (failure) violations.push({ frame: null, rule: 'client/read', message: failure });
      }
      if (violations.length > 0) {
        const id = res.getHeader('x-request-id') ?? headerValue(headers, 'x-request-id');
        findings.push({ request: `${request}${id ? ` (X-Request-ID ${String(id)})` : ''}`, violations, body });
      }
    });
  };
  const take = (chunk: unknown, encoding?: unknown): void => {
    decide();
    if (!checker || chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const text =
      typeof chunk === 'string'
        ? chunk
        : Buffer.from(chunk as Uint8Array).toString(typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    checker.push(text);
    wholeLength += text.length;
    if (wholeLength <= READ_BODY) whole.push(text);
    if (body.length < KEEP_BODY) body += text.slice(0, KEEP_BODY - body.length);
  };

  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    const last = args.at(-1);
    if (last && typeof last === 'object' && !Array.isArray(last)) headers = last as OutgoingHttpHeaders;
    return writeHead(...args);
  }) as ServerResponse['writeHead'];
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    take(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as ServerResponse['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    take(chunk, rest[0]);
    return end(chunk, ...rest);
  }) as ServerResponse['end'];
}

/** Why sluice/client could not read a whole stream, or undefined: a stream's own error frame is a reading. */
function readFailure(text: string): string | undefined {
  try {
    readStreamText(text);
    return undefined;
  } catch (err) {
    if (err instanceof SluiceStreamError) return undefined;
    return `sluice/client could not read it: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
  }
}

function headerValue(headers: OutgoingHttpHeaders, name: string): unknown {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

function describeFindings(list: Finding[]): string {
  return list
    .map((f) => {
      const lines = f.violations.map((v) => `    ${v.frame === null ? 'end' : `frame ${v.frame}`}: ${v.rule}: ${v.message}`);
      return `  ${f.request}\n${lines.join('\n')}\n    body: ${JSON.stringify(f.body)}`;
    })
    .join('\n');
}

// Registered when this module loads, at the top of a test file's imports: a hook of the file's
// root test, after all of its tests, saying what was checked. Not outside the test runner (the
// soak run starts gateways too).
if (process.env.NODE_TEST_CONTEXT !== undefined || /\.test\.[cm]?[jt]s$/.test(process.argv[1] ?? '')) {
  after((t) => {
    t.diagnostic(
      `stream tap: ${checked} streams checked, ${abandoned} abandoned by their client (not checked)` +
        (skipped.length > 0 ? `, not checked on purpose: ${skipped.join('; ')}` : ''),
    );
  });
}

/**
 * The verdict waits for the process to exit, so streams that end late (a gateway closed last, a
 * drain on shutdown) count too. A failing `after` hook would not do: the runner then skips the
 * file's later hooks, the gateways stay open and the file hangs instead of failing.
 */
process.on('exit', () => {
  if (findings.length === 0) return;
  console.error(`stream tap: streams that break the stream contract (sluice check):\n${describeFindings(findings)}`);
  process.exitCode = 1;
});
