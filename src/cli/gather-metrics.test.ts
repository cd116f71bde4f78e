import assert from 'node:assert/strict';
import type { Worker } from 'node:cluster';
import { describe, it } from 'node:test';
import { rejectedRecord } from '../accounting/accountant.ts';
import { toGatewayError } from '../errors/gateway-error.ts';
import { GatewayMetrics } from '../telemetry/metrics.ts';
import { isWorkerMetricsMessage, shareMetricsAcrossWorkers } from '../telemetry/worker-metrics.ts';
import { MetricsGatherer } from './gather-metrics.ts';

/**
 * Workers of one supervisor, in one process: each a GatewayMetrics sharing across workers, wired
 * to a MetricsGatherer through in-memory channels in place of cluster IPC.
 */
function cluster(openStreams: number[], options: { timeoutMs?: number; mute?: number } = {}) {
  const gatherer = new MetricsGatherer(options.timeoutMs);
  const workers: Worker[] = [];
  const metrics = openStreams.map((open, i) => {
    const m = new GatewayMetrics({ openStreams: () => open, ledger: () => undefined }, 10);
    const listeners: ((message: unknown) => void)[] = [];
    const worker = {
      isConnected: () => true,
      // The supervisor's send: delivered to the worker's listeners (a muted worker never answers).
      send: (message: unknown) => {
        if (i !== options.mute) setImmediate(() => listeners.forEach((l) => l(message)));
        return true;
      },
    } as unknown as Worker;
    workers.push(worker);
    shareMetricsAcrossWorkers(m, {
      send: (message) =>
        setImmediate(() => {
          if (!isWorkerMetricsMessage(message)) return;
          if (message.sluice === 'metrics-ask') gatherer.ask(worker, message.id, workers);
          if (message.sluice === 'metrics-collected') gatherer.collected(worker, message);
        }),
      on: (_event, listener) => listeners.push(listener),
    });
    return m;
  });
  return { gatherer, workers, metrics };
}

const record = () => rejectedRecord('r1', toGatewayError('boom'), 'chat', 'up/m', Date.now());

describe('MetricsGatherer with shareMetricsAcrossWorkers', () => {
  it("answers a scrape of any worker with every worker's counters and gauges summed", async () => {
    const { metrics } = cluster([2, 3]);
    metrics[0].observe(record());
    metrics[1].observe(record());
    metrics[1].observe(record());
    for (const m of metrics) {
      const text = await m.scrape();
      assert.match(text, /^sluice_open_streams 5$/m);
      assert.match(text, /^sluice_requests_total\{[^}]*outcome="error"[^}]*\} 3$/m);
      assert.match(text, /^sluice_request_duration_seconds_count\{[^}]*\} 3$/m);
    }
  });

  it('leaves out a worker that exits during the scrape, and fails one that stays silent', async () => {
    const left = cluster([1, 4], { mute: 1 });
    const scrape = left.metrics[0].scrape();
    setTimeout(() => left.gatherer.left(left.workers[1]), 20);
    assert.match(await scrape, /^sluice_open_streams 1$/m);
    const silent = cluster([1, 4], { mute: 1, timeoutMs: 50 });
    await assert.rejects(silent.metrics[0].scrape(), /1 worker\(s\) did not hand in their metrics within 50 ms/);
  });
});
