import type { PipelineContext } from '../../pipeline/context.ts';
import type { BatchObject } from '../../store/batch-objects-store.ts';
import { adoptOutputFiles } from './openai-batches.ts';
import { settleBatch } from './settle.ts';

/** Batches asked about per round: a round stays bounded however many are waiting. */
const PER_ROUND = 100;

export interface SettlementPollerDeps {
  /** The context of the moment (a reload replaces it). */
  context: () => PipelineContext;
  newId: () => string;
  log: (message: string) => void;
}

/**
 * Settles the batches nobody fetched: every `batches.poll_interval_s` each instance asks the
 * upstreams about the batches not yet settled (oldest first), and settles those that have ended.
 * Several instances may ask about the same batch; the store's conditional UPDATE lets one record
 * it (settle.ts). Off when the interval is 0 (a batch is then settled when a client reads it).
 */
export class SettlementPoller {
  private readonly deps: SettlementPollerDeps;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(deps: SettlementPollerDeps) {
    this.deps = deps;
  }

  start(): void {
    const seconds = this.deps.context().config.batches.poll_interval_s;
    if (seconds <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      this.running ??= this.round().finally(() => (this.running = undefined));
    }, seconds * 1000);
    this.timer.unref();
  }

  /** Stops polling; a round in progress finishes first. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One round: the number of batches this instance settled. Never rejects (each failure is logged). */
  async round(): Promise<number> {
    const ctx = this.deps.context();
    const store = ctx.batchObjects;
    if (!store) return 0;
    let waiting: BatchObject[];
    try {
      waiting = await store.unsettled(PER_ROUND);
    } catch (err) {
      this.deps.log(`batches: could not read the unsettled batches: ${(err as Error).message}`);
      return 0;
    }
    let settled = 0;
    for (const object of waiting) {
      try {
        if (await this.settleOne(ctx, object)) settled++;
      } catch (err) {
        this.deps.log(`batches: could not settle ${object.id} (${object.provider}): ${(err as Error).message}`);
      }
    }
    return settled;
  }

  private async settleOne(ctx: PipelineContext, object: BatchObject): Promise<boolean> {
    const kind = object.kind === 'message_batch' ? 'anthropic' : 'openai';
    const provider = ctx.registry.batchProviders(kind).find((p) => p.name === object.provider);
    if (!provider || !ctx.batchObjects) return false;
    const path =
      kind === 'openai' ? `/batches/${encodeURIComponent(object.id)}` : `/messages/batches/${encodeURIComponent(object.id)}`;
    const signal = AbortSignal.timeout(ctx.config.upstream.headers_timeout_s * 1000 + 60_000);
    const answer = await provider.api.send({ method: 'GET', path }, signal, ctx.config.batches.max_download_bytes);
    const text = answer.body.toString('utf8');
    if (answer.status < 200 || answer.status >= 300) throw provider.api.mapError(answer.status, answer.headers, text);
    const batch = JSON.parse(text) as Record<string, unknown>;
    if (kind === 'openai') await adoptOutputFiles(ctx.batchObjects, object, batch);
    return settleBatch(object, provider.api, batch, { ctx, store: ctx.batchObjects, newId: this.deps.newId });
  }
}
