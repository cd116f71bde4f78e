import assert from 'node:assert/strict';
import type { Worker } from 'node:cluster';
import { describe, it } from 'node:test';
import type { GatewayContext } from '../server/gateway-context.ts';
import type { ReloadResult } from '../server/reload-result.ts';
import { ReloadGatherer, reloadLine } from './gather-reloads.ts';
import { isWorkerReloadMessage, shareReloadsAcrossWorkers } from './worker-reload.ts';

/**
 * Workers of one supervisor, in one process: each a gateway stand-in whose reload gives `results[i]`,
 * wired to a ReloadGatherer through in-memory channels in place of cluster IPC.
 */
function cluster(results: ReloadResult[], options: { timeoutMs?: number; mute?: number } = {}) {
  const slots = new Map<Worker, number>();
  const gatherer = new ReloadGatherer((worker) => slots.get(worker), options.timeoutMs);
  const workers: Worker[] = [];
  const reloads = results.map(() => 0);
  const gateways = results.map((result, i) => {
    const listeners: ((message: unknown) => void)[] = [];
    const worker = {
      isConnected: () => true,
      process: { pid: 100 + i },
      send: (message: unknown) => {
        if (i !== options.mute) setImmediate(() => listeners.forEach((l) => l(message)));
        return true;
      },
    } as unknown as Worker;
    slots.set(worker, i);
    workers.push(worker);
    const gateway = {
      context: { reloadConfig: undefined } as GatewayContext,
      reload: () => {
        reloads[i]++;
        return result;
      },
    };
    shareReloadsAcrossWorkers(gateway, {
      send: (message) =>
        setImmediate(() => {
          if (!isWorkerReloadMessage(message)) return;
          if (message.sluice === 'reload-ask') gatherer.ask(worker, message.id, workers);
          if (message.sluice === 'reload-done') gatherer.done(worker, message);
        }),
      on: (_event, listener) => listeners.push(listener),
    });
    return gateway;
  });
  return { gatherer, workers, gateways, reloads };
}

/** The supervisor's log lines of a call, instead of the console. */
async function quietly<T>(work: () => Promise<T>): Promise<{ value: T; lines: string[] }> {
  const lines: string[] = [];
  const { log, error } = console;
  console.log = console.error = (line: string) => void lines.push(line);
  try {
    return { value: await work(), lines };
  } finally {
    Object.assign(console, { log, error });
  }
}

const applied: ReloadResult = { ok: true, changed: ['routes.smart.targets'], restartRequired: ['server.port'] };

describe('ReloadGatherer with shareReloadsAcrossWorkers', () => {
  it("answers POST /admin/reload on any worker with every worker's reload, in slot order", async () => {
    const { gateways, reloads } = cluster([applied, { ok: false, problems: ['f: unknown key x'] }]);
    const { value, lines } = await quietly(() => gateways[1].context.reloadConfig!());
    assert.deepEqual(value, [
      { ...applied, worker: 0, pid: 100 },
      { ok: false, problems: ['f: unknown key x'], worker: 1, pid: 101 },
    ]);
    assert.deepEqual(reloads, [1, 1]);
    assert.deepEqual(lines, [
      'POST /admin/reload: worker 0 (pid 100) reloaded the config: routes.smart.targets changed; until a restart: server.port',
      'POST /admin/reload: worker 1 (pid 101) refused the config and kept the running one: f: unknown key x',
    ]);
  });

  it('reports a worker that does not answer in time as silent, and leaves out one that exits', async () => {
    const silent = cluster([applied, applied], { mute: 1, timeoutMs: 50 });
    const { value } = await quietly(() => silent.gatherer.reloadAll(silent.workers, 'SIGHUP'));
    assert.deepEqual(value[1], { ok: false, silent: true, problems: ['did not answer within 0.05 s'], worker: 1, pid: 101 });
    assert.equal(reloadLine(value[1]), 'worker 1 (pid 101) did not answer within 0.05 s; see its log');
    const left = cluster([applied, applied], { mute: 1 });
    const round = quietly(() => left.gatherer.reloadAll(left.workers, 'SIGHUP'));
    setTimeout(() => left.gatherer.left(left.workers[1]), 20);
    assert.deepEqual(
      (await round).value.map((i) => i.worker),
      [0],
    );
  });
});
