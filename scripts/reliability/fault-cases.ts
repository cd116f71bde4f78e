/**
 * The fault matrix as a table: each fault, and the tests that exercise it (a file and a part of a
 * test's name). docs/reliability/report.md marks each test as it ran in the last `npm run reliability`, so a
 * renamed or failing test shows instead of a stale claim. `asserts` says what those tests check:
 * the client's frames, the upstream connection, the ledger row.
 */
export interface TestRef {
  file: string;
  name: string;
}

export interface FaultCase {
  fault: string;
  asserts: string;
  tests: TestRef[];
}

const matrix = (name: string): TestRef => ({ file: 'test/e2e/faults-matrix.test.ts', name });
const stream = (name: string): TestRef => ({ file: 'test/e2e/faults-stream.test.ts', name });
const ALL = 'frames, upstream, ledger row';

export const faultCases: FaultCase[] = [
  {
    fault: 'client disconnects before the first token',
    asserts: ALL,
    tests: [stream('client disconnect before the first token'), matrix('client disconnect before the first token')],
  },
  {
    fault: 'client disconnects mid-text',
    asserts: ALL,
    tests: [
      stream('client disconnect after the first token'),
      { file: 'test/e2e/faults-mixed-load.test.ts', name: 'every request ends as its case says' },
      matrix('client disconnect mid-text'),
    ],
  },
  { fault: 'client disconnects mid-tool-call', asserts: ALL, tests: [matrix('client disconnect mid-tool-call')] },
  {
    fault: 'upstream refuses the connection',
    asserts: 'HTTP 502, ledger row',
    tests: [{ file: 'test/e2e/faults-http.test.ts', name: 'connection refused' }, matrix('upstream connection refused')],
  },
  {
    fault: 'upstream connect timeout (accept queue full)',
    asserts: 'HTTP 502, ledger row',
    tests: [matrix('upstream connect timeout')],
  },
  {
    fault: 'upstream accepts, never answers (headers timeout)',
    asserts: ALL,
    tests: [matrix('upstream accepts and never answers')],
  },
  {
    fault: '200, then reset before the body',
    asserts: 'HTTP 502, ledger row',
    tests: [matrix('200 then reset before any byte')],
  },
  {
    fault: '200, then reset mid-stream',
    asserts: ALL,
    tests: [
      stream('upstream reset mid-stream'),
      { file: 'test/e2e/faults-mixed-load.test.ts', name: 'every request ends' },
      matrix('200 then reset mid-stream'),
    ],
  },
  { fault: 'truncated body (no finish, no [DONE])', asserts: ALL, tests: [stream('truncated stream'), matrix('truncated body')] },
  { fault: 'truncated inside a frame', asserts: ALL, tests: [matrix('truncated inside a frame')] },
  {
    fault: 'malformed chunk',
    asserts: ALL,
    tests: [stream('a malformed JSON chunk mid-stream'), stream('is not SSE'), matrix('malformed chunk')],
  },
  { fault: "a frame larger than the parser's 4 MiB limit", asserts: ALL, tests: [matrix("larger than the parser's limit")] },
  {
    fault: 'upstream silent (idle timeout)',
    asserts: ALL,
    tests: [
      stream('upstream hang before any byte'),
      stream('upstream hang mid-stream'),
      stream('heartbeats before the first byte'),
    ],
  },
  { fault: 'endless pings, no content', asserts: ALL, tests: [matrix('endless pings')] },
  {
    fault: 'a stream that never ends (deadline)',
    asserts: ALL,
    tests: [stream('deadline: a slow upstream'), matrix('a stream that never ends')],
  },
  {
    fault: 'a 200 whose first event is an error',
    asserts: 'HTTP error, ledger row',
    tests: [stream('`event: error` as the first frame'), matrix('a 200 whose first event is an error')],
  },
  {
    fault: 'upstream HTTP errors (400, 401, 404, 429, 500, 503, 529, empty body)',
    asserts: 'status and OpenAI error shape',
    tests: [
      { file: 'test/e2e/faults-http.test.ts', name: '429 passes retry-after on' },
      { file: 'test/e2e/faults-http.test.ts', name: '500 becomes 502' },
    ],
  },
  {
    fault: 'slow reader: upstream paused, bytes buffered in sluice bounded',
    asserts: 'bytes in flight, order, resume',
    tests: [
      { file: 'test/e2e/faults-backpressure.test.ts', name: 'a client that reads nothing stalls the upstream' },
      matrix('a client that stops reading'),
    ],
  },
  {
    fault: 'graceful shutdown (drain, then cancelled)',
    asserts: ALL,
    tests: [
      { file: 'test/e2e/faults-shutdown.test.ts', name: 'stops accepting, lets a stream finish' },
      { file: 'test/e2e/faults-backpressure.test.ts', name: 'shutdown is not held open' },
      matrix('gateway.shutdown (what SIGTERM runs) ends 1000 open streams'),
      { file: 'test/e2e/signals.test.ts', name: '' },
    ],
  },
  {
    fault: 'many faults at once under load (240 streams, 6 endings)',
    asserts: ALL,
    tests: [{ file: 'test/e2e/faults-mixed-load.test.ts', name: 'every request ends as its case says' }],
  },
  {
    fault: 'hostile values in every upstream field',
    asserts: 'frames valid JSON, choice 0 only',
    tests: [{ file: 'test/e2e/hostile-upstream.test.ts', name: '' }],
  },
  {
    fault: 'PostgreSQL cut, stalled or down under load (test/helpers/tcp-proxy.ts)',
    asserts: 'no ledger row lost',
    tests: [{ file: 'test/e2e/ledger-postgres-outage.test.ts', name: '' }],
  },
  {
    fault: 'Redis slow (past limits.redis_timeout_ms), cut, and back, under fail_open and fail_closed (two instances)',
    asserts: 'spend against budget, 5xx count, ledger rows',
    tests: [{ file: 'test/e2e/faults-redis.test.ts', name: '' }],
  },
  {
    fault: 'PostgreSQL down while the request log is read',
    asserts: '503 store_unavailable within the query timeout, no 500',
    tests: [{ file: 'test/e2e/ledger-postgres-outage.test.ts', name: 'PostgreSQL down' }],
  },
  {
    fault: 'a parameter that multiplies output (n=8, n=64) against a $0.01 budget; a budget below the least cost',
    asserts: 'spend against budget, refusal before any upstream call',
    tests: [{ file: 'test/e2e/budgets-choices.test.ts', name: '' }],
  },
  {
    fault: 'ledger records with values the store cannot hold',
    asserts: 'no ledger row lost',
    tests: [{ file: 'test/e2e/ledger-bad-records.test.ts', name: '' }],
  },
  {
    fault: 'kill -9 of the gateway mid-stream (40 streams), durable journal on and off',
    asserts: 'every X-Request-ID has its one row (interrupted or ok); without the journal, the documented window',
    tests: [
      { file: 'test/e2e/faults-crash.test.ts', name: 'kill -9 of the process, journal on' },
      { file: 'test/e2e/faults-crash.test.ts', name: 'kill -9 of the process, journal off' },
      { file: 'test/e2e/ledger-durable.test.ts', name: '' },
    ],
  },
  {
    fault: 'kill -9 of one worker mid-stream (--workers 2), durable journal on and off',
    asserts: 'every X-Request-ID has its one row, settled by the replacement; without the journal, the documented window',
    tests: [
      { file: 'test/e2e/faults-crash.test.ts', name: 'kill -9 of one worker (--workers 2), journal on' },
      { file: 'test/e2e/faults-crash.test.ts', name: 'kill -9 of one worker (--workers 2), journal off' },
    ],
  },
];

/** Every test file the reliability run executes: those above, and the bad-input table. */
export const faultFiles: string[] = [
  ...new Set([...faultCases.flatMap((c) => c.tests.map((t) => t.file)), 'test/e2e/bad-input.test.ts']),
];
