/**
 * What each stage of a request costs, read from a V8 CPU profile of the gateway (issue 29's cost
 * budget): every sample is charged to the innermost frame on its stack that belongs to a stage,
 * so a stage's figure is its own code and everything it calls that is not another stage (the
 * SSE write's `res.write` down into the socket, encoding's `JSON.stringify`), and a stage called
 * from the stream loop is not counted in the loop. Samples with no stage on the stack are Node's
 * own work between requests (the HTTP parser, timers, the socket reads) or GC, each its own row.
 *
 * Why a profile and not timers around each stage: a stage runs thousands of times a second for
 * a few µs, where `process.cpuUsage()` (a syscall, ~1 µs) or `performance.now()` pairs would cost
 * as much as what they measure and change the code they measure; the profiler samples every
 * 1 ms (its own cost is in every row alike, and in the bench's measured phases not at all: the
 * stage phase is a separate one).
 */
import type { CpuProfile } from './profile-summary.ts';

export interface StageRule {
  stage: string;
  /** A repo-relative path prefix (`src/routing/`) or file (`src/server/auth.ts`). */
  paths: readonly string[];
}

/**
 * The stages, by the files that do their work. Order does not decide a sample (the innermost
 * matching frame does); it is the order of the printed table, the request's own order.
 */
export const STAGES: readonly StageRule[] = [
  { stage: 'HTTP edge and dispatch', paths: ['src/server/'] },
  { stage: 'authentication', paths: ['src/governance/keys/', 'src/admission/'] },
  {
    stage: 'parsing the request',
    paths: [
      'src/protocol/http/read-json-body.ts',
      'src/surfaces/chat/parse-request.ts',
      'src/surfaces/chat/request-schema.ts',
      'src/surfaces/chat/to-canonical.ts',
      'src/surfaces/responses/parse-request.ts',
      'src/surfaces/responses/request-schema.ts',
      'src/surfaces/responses/to-canonical.ts',
      'src/surfaces/messages/parse-request.ts',
      'src/surfaces/messages/request-schema.ts',
      'src/surfaces/messages/to-canonical.ts',
    ],
  },
  { stage: 'routing', paths: ['src/routing/'] },
  { stage: 'admission (limits, budgets)', paths: ['src/governance/'] },
  { stage: 'upstream request and client', paths: ['src/upstream/', 'src/providers/http-provider.ts', 'node_modules/undici/'] },
  {
    stage: 'decoding the upstream stream',
    paths: ['src/protocol/sse/parse-upstream.ts', 'src/providers/', 'node_modules/eventsource-parser/'],
  },
  { stage: 'accounting (tokens, cost)', paths: ['src/accounting/', 'node_modules/gpt-tokenizer/'] },
  {
    stage: 'encoding for the client',
    paths: [
      'src/surfaces/chat/encode-stream.ts',
      'src/surfaces/chat/encode-response.ts',
      'src/surfaces/responses/encode',
      'src/surfaces/messages/encode',
      'src/protocol/stream-profiles.ts',
    ],
  },
  { stage: 'the SSE write', paths: ['src/protocol/sse/sse-writer.ts', 'src/protocol/http/send-json.ts'] },
  { stage: 'stream loop and lifecycle', paths: ['src/pipeline/', 'src/surfaces/'] },
  { stage: 'the log line', paths: ['src/telemetry/request-line.ts', 'src/telemetry/logger.ts', 'node_modules/pino/'] },
  { stage: 'metrics', paths: ['src/telemetry/metrics.ts', 'src/telemetry/series-metrics.ts', 'node_modules/prom-client/'] },
  { stage: 'traces', paths: ['src/telemetry/traces.ts', 'src/telemetry/request-trace.ts', 'node_modules/@opentelemetry/'] },
  { stage: 'the journal', paths: ['src/store/ledger-journal.ts'] },
  {
    stage: 'the analytics export',
    paths: [
      'src/telemetry/ledger-export.ts',
      'src/telemetry/ledger-log-record.ts',
      'node_modules/@opentelemetry/sdk-logs/',
      'node_modules/@opentelemetry/exporter-logs-otlp-http/',
      'node_modules/@opentelemetry/otlp-exporter-base/',
      'node_modules/@opentelemetry/otlp-transformer/',
    ],
  },
  { stage: 'the ledger insert', paths: ['src/store/', 'node_modules/kysely/'] },
  { stage: 'other sluice code', paths: ['src/'] },
];

/** Rows for samples outside every stage: by V8's own names, else Node's internals. */
const OUTSIDE: Record<string, string> = {
  '(garbage collector)': 'garbage collection',
  '(program)': 'V8 and native (program)',
};
export const NODE_ROW = 'Node (HTTP parser, sockets, timers)';

export interface StageCost {
  stage: string;
  /** CPU of the profiled phase charged to the stage, µs. */
  us: number;
}

/**
 * The most specific rule wins for a frame: `src/store/ledger-journal.ts` is the journal though
 * `src/store/` is the ledger insert, `src/governance/keys/` authentication though
 * `src/governance/` is admission.
 */
export function stageOfPath(path: string, rules: readonly StageRule[] = STAGES): string | undefined {
  let best: { stage: string; length: number } | undefined;
  for (const rule of rules) {
    for (const prefix of rule.paths) {
      if (path.startsWith(prefix) && (!best || prefix.length > best.length)) best = { stage: rule.stage, length: prefix.length };
    }
  }
  return best?.stage;
}

/** Repo-relative path of a profile frame's URL, '' for one outside the repo. */
function relative(url: string, root: string): string {
  return url.startsWith(root) ? url.slice(root.length) : '';
}

/** CPU by stage over a whole profile (idle left out), in the order of `rules`, then the outside rows. */
export function stageCosts(profile: CpuProfile, root: string, rules: readonly StageRule[] = STAGES): StageCost[] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOfNode = new Map<number, string>();
  const decide = (id: number): string => {
    const known = stageOfNode.get(id);
    if (known !== undefined) return known;
    const frame = byId.get(id)!.callFrame;
    const own = stageOfPath(relative(frame.url, root), rules);
    const up = parent.get(id);
    // Innermost wins: a frame's own stage, else the stage of the nearest caller that has one.
    const stage = own ?? (up === undefined ? (OUTSIDE[frame.functionName] ?? NODE_ROW) : decide(up));
    stageOfNode.set(id, stage);
    return stage;
  };
  const us = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    const name = byId.get(id)!.callFrame.functionName;
    if (name === '(idle)') continue;
    const stage = OUTSIDE[name] ?? decide(id);
    us.set(stage, (us.get(stage) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const order = [...rules.map((r) => r.stage), NODE_ROW, ...Object.values(OUTSIDE)];
  return order.filter((stage) => us.has(stage)).map((stage) => ({ stage, us: us.get(stage)! }));
}

export interface StageTable {
  /** What the profiled phase ran, e.g. "fast x32, plain sluice". */
  label: string;
  requests: number;
  /**
   * Upstream reads the gateway made in the phase, when known: paced, every chunk is its own read
   * (requests × writes per stream); fast, a stream arrives in one or two reads, so per read is
   * per request there and the column is left out.
   */
  reads?: number;
  stages: StageCost[];
}

/** The table: µs of CPU per request (and per upstream read, when known) for each stage, and the total. */
export function formatStageTable(table: StageTable): string {
  const total = table.stages.reduce((sum, s) => sum + s.us, 0);
  const { reads } = table;
  const perRead = (us: number) => (reads ? ` ${(us / reads).toFixed(2).padStart(9)}` : '');
  const line = (name: string, us: number) =>
    `  ${name.padEnd(40)} ${(us / table.requests).toFixed(1).padStart(8)}${perRead(us)} ${`${((us / total) * 100).toFixed(1)}%`.padStart(6)}`;
  return [
    `CPU by stage, ${table.label}: ${table.requests} requests${reads ? `, ${reads} upstream reads` : ''} (a profiled phase of its own)`,
    `  ${'stage'.padEnd(40)} ${'µs/req'.padStart(8)}${reads ? ` ${'µs/read'.padStart(9)}` : ''} ${'share'.padStart(6)}`,
    ...table.stages.map((s) => line(s.stage, s.us)),
    line('total (profiler included)', total),
  ].join('\n');
}
