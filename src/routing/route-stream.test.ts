import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { upstreamHttpError } from '../errors/upstream-error.ts';
import type { CanonicalEvent, FallbackEvent } from '../protocol/canonical/events.ts';
import type { ProviderAdapter } from '../providers/types.ts';
import { AttemptLog } from './attempts.ts';
import { HealthBook } from './health.ts';
import type { Candidate } from './plan.ts';
import { routedComplete } from './route-complete.ts';
import { routedStream } from './route-stream.ts';

function candidate(key: string, ttftTimeoutMs = 0, answerTimeoutMs = 0): Candidate {
  const [provider, model] = key.split('/');
  return {
    target: { adapter: {} as ProviderAdapter, provider, model, requested: 'route' },
    key,
    weight: 1,
    ttftTimeoutMs,
    answerTimeoutMs,
    params: undefined,
    via: 'route',
  };
}

type Script = Error | (CanonicalEvent[] | Error | 'hang')[];

/** A stream per target: a connect failure, or batches (an Error thrown in place, 'hang' never answers). */
function scripted(scripts: Record<string, Script>) {
  const started: string[] = [];
  const start = async (c: Candidate, signal: AbortSignal) => {
    started.push(c.key);
    const script = scripts[c.key];
    if (script instanceof Error) throw script;
    return (async function* () {
      for (const step of script) {
        if (step === 'hang') {
          await new Promise((_, reject) => signal.addEventListener('abort', () => reject(errors.cancelled('aborted')), { once: true }));
        } else if (step instanceof Error) throw step;
        else yield step;
      }
    })();
  };
  return { start, started };
}

function setup(candidates: Candidate[]) {
  const health = new HealthBook({ breakerFailures: 2, breakerOpenMs: 60_000 });
  const log = new AttemptLog();
  const switches: FallbackEvent[] = [];
  const ctx = { candidates, health, log, signal: new AbortController().signal };
  return { ctx, health, log, switches, onFallback: (e: FallbackEvent) => switches.push(e) };
}

async function drain(batches: AsyncIterable<CanonicalEvent[]>): Promise<CanonicalEvent[][]> {
  const out: CanonicalEvent[][] = [];
  for await (const batch of batches) out.push(batch);
  return out;
}

const text = (t: string): CanonicalEvent => ({ type: 'text', choice: 0, text: t });
const finish: CanonicalEvent = { type: 'finish', choice: 0, reason: 'stop' };
const overloaded = () => upstreamHttpError({ provider: 'a', status: 529, message: 'Overloaded' });
const badRequest = () => upstreamHttpError({ provider: 'a', status: 400, message: 'bad' });
const nonEmpty = (batches: CanonicalEvent[][]) => batches.filter((b) => b.length > 0);

describe('routedStream', () => {
  it('a refused connection falls back: the answer comes led by the fallback event', async () => {
    const { ctx, log, switches, onFallback } = setup([candidate('a/m'), candidate('b/n')]);
    const { start, started } = scripted({
      'a/m': errors.connection('a', 'ECONNREFUSED'),
      'b/n': [[{ type: 'start' }], [text('hi'), finish]],
    });
    const batches = nonEmpty(await drain(await routedStream(ctx, start, onFallback)(ctx.signal)));
    assert.deepEqual(started, ['a/m', 'b/n']);
    assert.deepEqual(
      batches.flat().map((e) => e.type),
      ['fallback', 'start', 'text', 'finish'],
    );
    assert.deepEqual(
      switches.map((s) => [s.from.provider, s.to.provider, s.reason]),
      [['a', 'b', 'connection_error']],
    );
    assert.deepEqual(
      log.attempts.map((a) => [a.provider, a.status, a.errorCode, a.fallbackReason]),
      [
        ['a', null, 'upstream_connection_error', 'connection_error'],
        ['b', 200, null, null],
      ],
    );
  });

  it('an error event before any output falls back; what the failed attempt said is dropped', async () => {
    const { ctx, onFallback, health } = setup([candidate('a/m'), candidate('b/n')]);
    const usage: CanonicalEvent = { type: 'usage', usage: { inputTokens: 9, outputTokens: 1, source: 'provider' } };
    const { start } = scripted({
      'a/m': [[{ type: 'start' }, usage], [{ type: 'error', error: overloaded() }]],
      'b/n': [[text('ok'), finish]],
    });
    const batches = nonEmpty(await drain(await routedStream(ctx, start, onFallback)(ctx.signal)));
    assert.deepEqual(
      batches.flat().map((e) => e.type),
      ['fallback', 'text', 'finish'],
    );
    assert.equal((batches[0][0] as FallbackEvent).reason, 'overloaded');
    assert.equal(health.view()[0].consecutive_failures, 1);
  });

  it("after the first output a failure is the stream's: no fallback, the error passes through", async () => {
    const { ctx, onFallback, log } = setup([candidate('a/m'), candidate('b/n')]);
    const { start, started } = scripted({ 'a/m': [[text('par')], [{ type: 'error', error: overloaded() }]], 'b/n': [] });
    const batches = nonEmpty(await drain(await routedStream(ctx, start, onFallback)(ctx.signal)));
    assert.deepEqual(started, ['a/m']);
    assert.deepEqual(
      batches.flat().map((e) => e.type),
      ['text', 'error'],
    );
    assert.equal(log.attempts.length, 1);
  });

  it('a reset after output is thrown to the stream, not retried', async () => {
    const { ctx, onFallback } = setup([candidate('a/m'), candidate('b/n')]);
    const { start, started } = scripted({ 'a/m': [[text('par')], errors.connection('a', 'ECONNRESET')], 'b/n': [] });
    const it = await routedStream(ctx, start, onFallback)(ctx.signal);
    await assert.rejects(drain(it), (err: unknown) => err instanceof GatewayError && err.code === 'upstream_connection_error');
    assert.deepEqual(started, ['a/m']);
  });

  it('a bad request is not retried: the refusal is thrown as it is', async () => {
    const { ctx, onFallback, log, health } = setup([candidate('a/m'), candidate('b/n')]);
    const { start, started } = scripted({ 'a/m': badRequest(), 'b/n': [] });
    await assert.rejects(routedStream(ctx, start, onFallback)(ctx.signal), (err: unknown) => (err as GatewayError).status === 400);
    assert.deepEqual(started, ['a/m']);
    assert.equal(log.attempts[0].fallbackReason, null);
    assert.equal(health.available('a/m'), true, "a client's mistake is not the target's");
  });

  it("the last candidate's error event ends the stream as it would unrouted", async () => {
    const { ctx, onFallback, switches } = setup([candidate('a/m'), candidate('b/n')]);
    const { start } = scripted({
      'a/m': errors.connection('a', 'ECONNREFUSED'),
      'b/n': [[{ type: 'error', error: overloaded() }]],
    });
    const batches = nonEmpty(await drain(await routedStream(ctx, start, onFallback)(ctx.signal)));
    assert.deepEqual(
      batches.flat().map((e) => e.type),
      ['error'],
    );
    assert.equal(switches.length, 1, 'the accountant was still told which target failed last');
  });

  it('no first output within the TTFT timeout: the attempt is abandoned for the next', async () => {
    const { ctx, onFallback, log } = setup([candidate('a/m', 50), candidate('b/n')]);
    const { start } = scripted({ 'a/m': [[{ type: 'start' }], 'hang'], 'b/n': [[text('fast'), finish]] });
    const batches = nonEmpty(await drain(await routedStream(ctx, start, onFallback)(ctx.signal)));
    assert.deepEqual(
      batches.flat().map((e) => e.type),
      ['fallback', 'text', 'finish'],
    );
    assert.deepEqual(
      log.attempts.map((a) => [a.errorCode, a.fallbackReason]),
      [
        ['upstream_timeout', 'ttft_timeout'],
        [null, null],
      ],
    );
  });

  it("with nothing left to fall back to, nothing is held: the upstream's first event goes on at once", async () => {
    const { ctx, onFallback } = setup([candidate('a/m', 50)]);
    const { start } = scripted({ 'a/m': [[{ type: 'start' }], [text('hi'), finish]] });
    const batches = await drain(await routedStream(ctx, start, onFallback)(ctx.signal));
    assert.deepEqual(
      batches.map((b) => b.map((e) => e.type)),
      [['start'], ['text', 'finish']],
    );
  });

  it('a stream that ends without a word falls back too', async () => {
    const { ctx, onFallback, log } = setup([candidate('a/m'), candidate('b/n')]);
    const { start } = scripted({ 'a/m': [[{ type: 'start' }]], 'b/n': [[text('ok'), finish]] });
    const batches = nonEmpty(await drain(await routedStream(ctx, start, onFallback)(ctx.signal)));
    assert.deepEqual(
      batches.flat().map((e) => e.type),
      ['fallback', 'text', 'finish'],
    );
    assert.deepEqual(log.attempts[0].fallbackReason, 'stream_failed');
  });

  it('a 429 with Retry-After cools its target down', async () => {
    const { ctx, onFallback, health } = setup([candidate('a/m'), candidate('b/n')]);
    const limited = upstreamHttpError({ provider: 'a', status: 429, message: 'slow down', headers: { 'retry-after': '30' } });
    const { start } = scripted({ 'a/m': limited, 'b/n': [[text('ok'), finish]] });
    await drain(await routedStream(ctx, start, onFallback)(ctx.signal));
    assert.equal(health.available('a/m'), false);
    assert.ok(health.view()[0].cooldown_until);
  });
});

describe('routedComplete', () => {
  it('tries the candidates in order until one answers, the answer led by the fallback event', async () => {
    const { ctx, onFallback, log } = setup([candidate('a/m'), candidate('b/n')]);
    const calls: string[] = [];
    const events = await routedComplete(
      ctx,
      async (c) => {
        calls.push(c.key);
        if (c.key === 'a/m') throw overloaded();
        return [text('ok'), finish];
      },
      onFallback,
    );
    assert.deepEqual(calls, ['a/m', 'b/n']);
    assert.deepEqual(
      events.map((e) => e.type),
      ['fallback', 'text', 'finish'],
    );
    assert.deepEqual(
      log.attempts.map((a) => a.status),
      [529, 200],
    );
  });

  it("an answer not complete within the target's timeout_s is abandoned for the next; a TTFT timeout does not apply", async () => {
    // a/m's 1 ms TTFT timeout would fire first if it applied: the reason shows which limit did.
    const { ctx, onFallback, log, switches } = setup([candidate('a/m', 1, 50), candidate('b/n')]);
    let abandoned: unknown;
    const events = await routedComplete(
      ctx,
      (c, signal) =>
        c.key === 'a/m'
          ? new Promise<CanonicalEvent[]>((_, reject) =>
              signal.addEventListener('abort', () => reject((abandoned = errors.cancelled('aborted'))), { once: true }),
            )
          : Promise.resolve([text('ok'), finish]),
      onFallback,
    );
    assert.ok(abandoned, "the slow target's call was aborted");
    assert.deepEqual(
      events.map((e) => e.type),
      ['fallback', 'text', 'finish'],
    );
    assert.equal(switches[0].reason, 'timeout');
    assert.deepEqual(
      log.attempts.map((a) => [a.errorCode, a.fallbackReason]),
      [
        ['upstream_timeout', 'timeout'],
        [null, null],
      ],
    );
  });

  it('a bad request is returned at once', async () => {
    const { ctx, onFallback } = setup([candidate('a/m'), candidate('b/n')]);
    await assert.rejects(
      routedComplete(
        ctx,
        async () => {
          throw badRequest();
        },
        onFallback,
      ),
      (err: unknown) => (err as GatewayError).status === 400,
    );
  });
});
