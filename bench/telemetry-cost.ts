/**
 * What metrics and the request log line cost per request, measured in this process:
 * `telemetryCost()` (run by `npm run bench` for issue 14's target: within 3% of the CPU of a
 * streamed request). Runs what a gateway does once per finished request (app.ts `observe`: the
 * Prometheus series' updates and the one JSON log line, through the gateway's own log destination
 * (logDestination: batched, asynchronous) to /dev/null, its flush included) over records like the
 * bench's, several models and outcomes, and prints the CPU per request of this process. The
 * end-to-end side (a gateway with both off, `npm run bench`'s "telemetry off" row) measures the
 * same around real streams, where ~20 µs are within the noise of two phases.
 */
import { openSync } from 'node:fs';
import pino from 'pino';
import type { LedgerRecord } from '../src/accounting/ledger-record.ts';
import { GatewayMetrics } from '../src/telemetry/metrics.ts';
import { type LineDestination, logDestination } from '../src/telemetry/logger.ts';
import { logRequest } from '../src/telemetry/request-line.ts';
import { ledgerRecord } from '../test/helpers/ledger-records.ts';

const MODELS = ['gpt-bench-a', 'gpt-bench-b', 'gpt-bench-c', 'gpt-bench-d'];

function records(count: number): LedgerRecord[] {
  return Array.from({ length: count }, (_, i) =>
    ledgerRecord({
      requestId: `req_${i.toString(36).padStart(8, '0')}`,
      createdAt: Date.now(),
      provider: 'up',
      model: MODELS[i % MODELS.length],
      requestedModel: `up/${MODELS[i % MODELS.length]}`,
      inputTokens: 14,
      outputTokens: 20,
      costUsd: 0.000034,
      ttftMs: 5 + (i % 40),
      latencyMs: 12 + (i % 60),
      overheadMs: 0.4,
      // One in 50 fails, as the error counters' path must be in the figure too.
      ...(i % 50 === 49 && { outcome: 'error' as const, errorType: 'upstream_error', errorCode: 'upstream_timeout' }),
    }),
  );
}

/** Once every line is written. */
function flushed(stream: LineDestination): Promise<void> {
  return new Promise((resolve, reject) => stream.flush((err) => (err ? reject(err) : resolve())));
}

export interface TelemetryCost {
  /** CPU µs per request for the metrics' updates and the log line together. */
  cpuUs: number;
  /** The metrics' updates alone. */
  metricsUs: number;
}

/** Best of `runs` runs of `requests` records each (after a warm-up run): CPU µs per request. */
export async function telemetryCost(requests: number, runs = 5): Promise<TelemetryCost> {
  const metrics = new GatewayMetrics({ openStreams: () => 0, ledger: () => undefined }, 100);
  // An open descriptor, so the destination is ready at once (a path opens asynchronously, and
  // pino's flush at process exit throws on a destination that never became ready).
  const destination = logDestination(openSync('/dev/null', 'w'));
  const logger = pino({ level: 'info', base: undefined }, destination);
  const batch = records(requests);
  const run = async (withLog: boolean): Promise<number> => {
    const cpu0 = process.cpuUsage();
    for (const record of batch) {
      metrics.observe(record);
      if (withLog) logRequest(logger, record);
    }
    if (withLog) await flushed(destination);
    const cpu = process.cpuUsage(cpu0);
    return (cpu.user + cpu.system) / requests;
  };
  await run(true);
  let best = Number.POSITIVE_INFINITY;
  let bestMetrics = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    best = Math.min(best, await run(true));
    bestMetrics = Math.min(bestMetrics, await run(false));
  }
  return { cpuUs: best, metricsUs: bestMetrics };
}

if (import.meta.main) {
  const cost = await telemetryCost(50_000);
  console.log(
    `metrics + request log line: ${cost.cpuUs.toFixed(2)} µs CPU per request (metrics alone ${cost.metricsUs.toFixed(2)} µs)`,
  );
}
