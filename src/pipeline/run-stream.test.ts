import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { type OneResponse, openResponse } from '../../test/helpers/one-response.ts';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { renderErrorBody } from '../errors/render.ts';
import { DONE_FRAME } from '../protocol/sse/frames.ts';
import { createExchange } from './exchange.ts';
import { RequestScope } from './request-scope.ts';
import { runStream, type StreamSurface, type StreamTimings } from './run-stream.ts';

/** What the fake upstream sends: output, an item without frames (a `start`), the finish, the end marker, a failure. */
type Item = { text: string } | { quiet: true } | { finish: true } | { end: true } | { error: GatewayError };

const text = (t: string): Item => ({ text: t });
const QUIET: Item = { quiet: true };
const FINISH: Item = { finish: true };
const END: Item = { end: true };

/** A surface that renders items as plain frames and records what the loop asked of it. */
class FakeSurface implements StreamSurface<Item> {
  failure: GatewayError | null = null;
  complete = false;
  ended = false;
  readonly calls: string[] = [];

  encode(item: Item): string {
    if ('text' in item) {
      this.calls.push(`encode ${item.text.length > 20 ? `${item.text.length} chars` : item.text}`);
      return `data: ${item.text}\n\n`;
    }
    if ('quiet' in item) {
      this.calls.push('encode quiet');
      return '';
    }
    if ('finish' in item) {
      this.calls.push('encode finish');
      this.complete = true;
      return 'data: finish\n\n';
    }
    if ('end' in item) {
      this.calls.push('encode end');
      this.ended = true;
      return '';
    }
    this.calls.push(`encode error ${item.error.code}`);
    this.failure = item.error;
    return '';
  }

  async opening(): Promise<string> {
    this.calls.push('opening');
    return ': opening\n\n';
  }

  async closing(): Promise<string> {
    this.calls.push('closing');
    return 'data: closing\n\n';
  }

  /** Set to make failureFrames throw, as a usage or pricing bug would. */
  usageBroken = false;
  /** The signal each failureFrames call was given (undefined once the scope was aborted). */
  readonly failureSignals: (AbortSignal | undefined)[] = [];

  async failureFrames(error: GatewayError, signal: AbortSignal | undefined): Promise<string> {
    this.calls.push(`failureFrames ${error.code}`);
    this.failureSignals.push(signal);
    if (this.usageBroken) throw new Error('no price for this usage');
    return `data: usage so far\n\n${this.errorFrames(error)}`;
  }

  errorFrames(error: GatewayError): string {
    return `data: {"error":"${error.code}"}\n\n`;
  }
}

/**
 * An upstream whose reads the test hands out one batch at a time. Like a real response body, a
 * read pending when the scope aborts rejects with the abort's reason.
 */
class FakeSource {
  /** Reads the loop has asked for. */
  reads = 0;
  /** The loop let go of the source (its end, a throw, or return() when the loop left early). */
  closed = false;
  /** The loop read the source to its end. */
  drained = false;
  private readonly queue: (Item[] | Error | null)[] = [];
  private wake: (() => void) | undefined;

  send(...batch: Item[]): void {
    this.queue.push(batch);
    this.wake?.();
  }

  end(): void {
    this.queue.push(null);
    this.wake?.();
  }

  fail(error: Error): void {
    this.queue.push(error);
    this.wake?.();
  }

  readonly open = async (signal: AbortSignal): Promise<AsyncIterable<Item[]>> => this.read(signal);

  private async *read(signal: AbortSignal): AsyncGenerator<Item[]> {
    try {
      for (;;) {
        this.reads++;
        while (this.queue.length === 0) {
          signal.throwIfAborted();
          await new Promise<void>((resolve) => {
            const done = () => {
              signal.removeEventListener('abort', done);
              this.wake = undefined;
              resolve();
            };
            this.wake = done;
            signal.addEventListener('abort', done);
          });
        }
        const next = this.queue.shift();
        if (next === null) {
          this.drained = true;
          return;
        }
        if (next instanceof Error) throw next;
        if (next) yield next;
      }
    } finally {
      this.closed = true;
    }
  }
}

/** Polls a condition the loop reaches through I/O (bounded: a stuck loop fails here, not at the suite's timeout). */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; !condition(); i++) {
    if (i > 5_000) throw new Error(`timed out waiting until ${what}`);
    await sleep(2);
  }
}

const QUIET_TIMINGS: StreamTimings = { heartbeatMs: 0, idleTimeoutMs: 0 };

describe('runStream', () => {
  let one: OneResponse;
  let scope: RequestScope;
  let source: FakeSource;
  let surface: FakeSurface;
  /** Every write to the response, and its end (`end <last bytes>`). */
  let writes: string[];

  beforeEach(async () => {
    one = await openResponse();
    writes = [];
    const res = one.res;
    const write = res.write.bind(res) as (chunk: string) => boolean;
    const end = res.end.bind(res) as (chunk?: string) => typeof res;
    res.write = ((chunk: string) => {
      writes.push(chunk);
      return write(chunk);
    }) as typeof res.write;
    res.end = ((chunk?: string) => {
      writes.push(`end ${chunk ?? ''}`);
      return end(chunk);
    }) as typeof res.end;
    scope = new RequestScope(res, { deadlineMs: 0, scopes: new Set() });
    source = new FakeSource();
    surface = new FakeSurface();
  });

  afterEach(async () => {
    mock.timers.reset();
    scope.dispose();
    await one.close();
  });

  const run = (
    options: { timings?: StreamTimings; open?: (signal: AbortSignal) => Promise<AsyncIterable<Item[]>>; onAcknowledged?: () => void } = {},
  ) =>
    runStream(createExchange(one.res, 'req-1', renderErrorBody), scope, options.open ?? source.open, surface, {
      provider: 'up',
      timings: options.timings ?? QUIET_TIMINGS,
      onAcknowledged: options.onAcknowledged,
    });

  describe('a normal end', () => {
    it('the opening goes before the first frame, one write per read, then the closing frames and [DONE]', async () => {
      const result = run();
      source.send(text('a'));
      source.send(text('b'), FINISH);
      source.end();
      assert.equal(await result, null);
      assert.deepEqual(writes, [': opening\n\ndata: a\n\n', 'data: b\n\ndata: finish\n\n', `end data: closing\n\n${DONE_FRAME}`]);
      assert.deepEqual(surface.calls, ['encode a', 'opening', 'encode b', 'encode finish', 'closing']);
      const response = await one.response;
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'text/event-stream');
      assert.equal(response.headers['x-request-id'], 'req-1');
      assert.equal(await one.body(), `: opening\n\ndata: a\n\ndata: b\n\ndata: finish\n\ndata: closing\n\n${DONE_FRAME}`);
    });

    it('an empty read sends nothing; the opening goes with the first item even when it has no frames of its own', async () => {
      const result = run();
      source.send();
      source.send(QUIET);
      source.send(text('a'), FINISH);
      source.end();
      assert.equal(await result, null);
      assert.deepEqual(writes, [': opening\n\n', 'data: a\n\ndata: finish\n\n', `end data: closing\n\n${DONE_FRAME}`]);
    });

    it('onAcknowledged is told once the source opened, before the first read', async () => {
      const told: number[] = [];
      const result = run({ onAcknowledged: () => told.push(source.reads) });
      source.send(text('a'), FINISH);
      source.end();
      assert.equal(await result, null);
      assert.deepEqual(told, [0]);
    });
  });

  describe('failures', () => {
    it('a surface failure mid-stream: the frames before it in that read, the failure frames, [DONE]; the source is let go', async () => {
      const failure = errors.malformed('up', 'bad chunk');
      const result = run();
      source.send(text('a'));
      source.send(text('b'), { error: failure }, text('c'));
      assert.equal(await result, failure);
      assert.deepEqual(writes, [
        ': opening\n\ndata: a\n\n',
        'data: b\n\n',
        `end data: usage so far\n\ndata: {"error":"upstream_malformed_stream"}\n\n${DONE_FRAME}`,
      ]);
      assert.deepEqual(surface.calls, [
        'encode a',
        'opening',
        'encode b',
        'encode error upstream_malformed_stream',
        'failureFrames upstream_malformed_stream',
      ]);
      assert.equal(source.closed, true);
    });

    it('a failure before any frame is an HTTP error through the exchange, without SSE headers', async () => {
      const failure = errors.malformed('up', 'bad chunk');
      const result = run();
      source.send({ error: failure });
      assert.equal(await result, failure);
      const response = await one.response;
      assert.equal(response.statusCode, 502);
      assert.equal(response.headers['content-type'], 'application/json');
      assert.equal(response.headers['x-request-id'], 'req-1');
      assert.equal(response.headers['x-accel-buffering'], undefined);
      assert.equal(await one.body(), renderErrorBody(failure));
      assert.deepEqual(surface.calls, ['encode error upstream_malformed_stream']);
    });

    it('an open() that rejects is an HTTP error too, and the upstream was never acknowledged', async () => {
      const failure = errors.connection('up', 'connect ECONNREFUSED');
      let acknowledged = false;
      const result = run({ open: () => Promise.reject(failure), onAcknowledged: () => (acknowledged = true) });
      assert.equal(await result, failure);
      assert.equal((await one.response).statusCode, 502);
      assert.equal(await one.body(), renderErrorBody(failure));
      assert.equal(acknowledged, false);
      assert.deepEqual(surface.calls, []);
    });

    it('a source that throws after output: the failure frames, then [DONE]', async () => {
      const failure = errors.connection('up', 'socket hang up');
      const result = run();
      source.send(text('a'));
      source.fail(failure);
      assert.equal(await result, failure);
      assert.deepEqual(writes, [
        ': opening\n\ndata: a\n\n',
        `end data: usage so far\n\ndata: {"error":"upstream_connection_error"}\n\n${DONE_FRAME}`,
      ]);
    });

    it('a source that ends without a finish is a truncated stream', async () => {
      const result = run();
      source.send(text('a'));
      source.end();
      const failure = await result;
      assert.equal(failure?.code, 'upstream_stream_truncated');
      assert.match(failure?.message ?? '', /The up stream ended/);
      assert.deepEqual(writes, [
        ': opening\n\ndata: a\n\n',
        `end data: usage so far\n\ndata: {"error":"upstream_stream_truncated"}\n\n${DONE_FRAME}`,
      ]);
    });
  });

  describe("the upstream's end marker", () => {
    it('with every output finished: the closing frames and [DONE] at once; the rest of the source is read, not sent', async () => {
      const result = run();
      source.send(text('a'), FINISH, END);
      // The client has its whole response while the upstream is still open.
      assert.equal(await one.body(), `: opening\n\ndata: a\n\ndata: finish\n\ndata: closing\n\n${DONE_FRAME}`);
      assert.deepEqual(writes, [`end : opening\n\ndata: a\n\ndata: finish\n\ndata: closing\n\n${DONE_FRAME}`]);
      source.send(text('late'));
      source.end();
      assert.equal(await result, null);
      // Read to its end (the upstream connection stays reusable), not cut.
      assert.equal(source.drained, true);
      assert.deepEqual(surface.calls, ['encode a', 'encode finish', 'encode end', 'opening', 'closing']);
      assert.equal(writes.length, 1);
      assert.equal(scope.signal.aborted, false);
    });

    it('an upstream that does not close after it is cut after DRAIN_MS (2 s); the client response still succeeded', async () => {
      mock.timers.enable({ apis: ['setTimeout'] });
      const result = run();
      source.send(text('a'), FINISH, END);
      await one.body();
      mock.timers.tick(1_999);
      assert.equal(scope.signal.aborted, false);
      mock.timers.tick(1);
      assert.equal((scope.signal.reason as GatewayError).code, 'cancelled');
      assert.equal(await result, null);
      assert.equal(source.closed, true);
      assert.equal(writes.length, 1);
    });

    it('with an output unfinished: the held frames go out before the failure frames', async () => {
      const result = run();
      source.send(text('a'));
      source.send(text('b'), END);
      const failure = await result;
      assert.equal(failure?.code, 'upstream_stream_truncated');
      assert.deepEqual(writes, [
        ': opening\n\ndata: a\n\n',
        `end data: b\n\ndata: usage so far\n\ndata: {"error":"upstream_stream_truncated"}\n\n${DONE_FRAME}`,
      ]);
      assert.deepEqual(surface.calls.slice(-3), ['encode b', 'encode end', 'failureFrames upstream_stream_truncated']);
    });

    it('with an output unfinished in the first read: held frames make it a stream (200), not an HTTP error', async () => {
      const result = run();
      source.send(text('b'), END);
      assert.equal((await result)?.code, 'upstream_stream_truncated');
      assert.equal((await one.response).statusCode, 200);
      assert.equal(await one.body(), `: opening\n\ndata: b\n\ndata: usage so far\n\ndata: {"error":"upstream_stream_truncated"}\n\n${DONE_FRAME}`);
    });
  });

  it('a client that leaves aborts the scope with `cancelled`, and nothing more is written', async () => {
    const result = run();
    source.send(text('a'));
    await until(() => source.reads === 2, 'the loop waits for its second read');
    one.disconnect();
    const failure = await result;
    assert.equal(failure?.code, 'cancelled');
    assert.equal(scope.signal.reason, failure);
    assert.deepEqual(writes, [': opening\n\ndata: a\n\n']);
    assert.deepEqual(surface.calls, ['encode a', 'opening']);
    assert.equal(source.closed, true);
  });

  describe('the failure frames (usage so far, then the error)', () => {
    it("are built under the scope's signal while it runs", async () => {
      const result = run();
      source.send(text('a'));
      source.fail(errors.connection('up', 'socket hang up'));
      await result;
      assert.deepEqual(surface.failureSignals, [scope.signal]);
    });

    it('are built without the aborted signal after a timeout: the usage is counted, not cut short', async () => {
      const result = run({ timings: { heartbeatMs: 0, idleTimeoutMs: 40 } });
      source.send(text('a'));
      assert.equal((await result)?.code, 'stream_idle_timeout');
      assert.deepEqual(surface.failureSignals, [undefined]);
    });

    it('a usage that cannot be had leaves the error frame alone, then [DONE]', async () => {
      surface.usageBroken = true;
      const result = run();
      source.send(text('a'));
      source.fail(errors.connection('up', 'socket hang up'));
      assert.equal((await result)?.code, 'upstream_connection_error');
      assert.equal(writes.at(-1), `end data: {"error":"upstream_connection_error"}\n\n${DONE_FRAME}`);
    });
  });

  describe('the `drain` disconnect policy', () => {
    beforeEach(() => {
      scope.dispose();
      scope = new RequestScope(one.res, { deadlineMs: 0, onDisconnect: 'drain', scopes: new Set() });
    });

    it('a client that leaves: the upstream is read to its end, every item seen by the surface, nothing written; the failure is `cancelled`', async () => {
      const result = run();
      source.send(text('a'));
      await until(() => source.reads === 2, 'the loop waits for its second read');
      one.disconnect();
      await until(() => scope.clientLeft !== null, 'the scope sees the client leave');
      source.send(text('b'));
      source.send(text('c'), FINISH);
      source.end();
      const failure = await result;
      assert.equal(failure?.code, 'cancelled');
      assert.equal(failure, scope.clientLeft);
      assert.equal(scope.signal.aborted, false);
      assert.equal(source.drained, true);
      assert.deepEqual(surface.calls, ['encode a', 'opening', 'encode b', 'encode c', 'encode finish']);
      assert.deepEqual(writes, [': opening\n\ndata: a\n\n']);
    });

    it('the deadline still ends the reading: the upstream is cut, the failure is still the client leaving', async () => {
      const result = run();
      source.send(text('a'));
      await until(() => source.reads === 2, 'the loop waits for its second read');
      one.disconnect();
      await until(() => scope.clientLeft !== null, 'the scope sees the client leave');
      scope.abort(errors.deadline(1));
      assert.equal((await result)?.code, 'cancelled');
      assert.equal(source.closed, true);
      assert.equal(source.drained, false);
    });

    it('a client that stays gets the same stream as under `cancel`', async () => {
      const result = run();
      source.send(text('a'), FINISH);
      source.end();
      assert.equal(await result, null);
      assert.equal(await one.body(), `: opening\n\ndata: a\n\ndata: finish\n\ndata: closing\n\n${DONE_FRAME}`);
      assert.equal(scope.clientLeft, null);
    });
  });

  describe('the idle timeout', () => {
    it('upstream silence after it answered ends the stream with stream_idle_timeout', async () => {
      const result = run({ timings: { heartbeatMs: 0, idleTimeoutMs: 40 } });
      source.send(text('a'));
      const failure = await result;
      assert.equal(failure?.code, 'stream_idle_timeout');
      assert.equal(scope.signal.reason, failure);
      assert.deepEqual(writes, [': opening\n\ndata: a\n\n', `end data: usage so far\n\ndata: {"error":"stream_idle_timeout"}\n\n${DONE_FRAME}`]);
    });

    it("the tier's idle timeout (on the scope) wins over the surface's", async () => {
      scope.dispose();
      scope = new RequestScope(one.res, { deadlineMs: 0, idleTimeoutMs: 40, scopes: new Set() });
      const result = run({ timings: { heartbeatMs: 0, idleTimeoutMs: 600_000 } });
      source.send(text('a'));
      assert.equal((await result)?.code, 'stream_idle_timeout');
    });

    it('is not running while open() waits for the upstream to answer', async () => {
      const slowOpen = async (signal: AbortSignal) => {
        await sleep(200);
        return source.open(signal);
      };
      const result = run({ timings: { heartbeatMs: 0, idleTimeoutMs: 40 }, open: slowOpen });
      source.send(text('a'), FINISH);
      source.end();
      assert.equal(await result, null);
      assert.equal(scope.signal.aborted, false);
    });
  });

  describe('back-pressure', () => {
    /** A frame of a MiB: loopback's buffers (about 4 MiB here) fill after a few reads while the client reads nothing. */
    const BIG = 'x'.repeat(1024 * 1024);

    /** An endless upstream of big reads. */
    const endless = () => {
      const state = { reads: 0, closed: false };
      const open = async (): Promise<AsyncIterable<Item[]>> =>
        (async function* () {
          try {
            for (;;) {
              state.reads++;
              yield [text(BIG)];
            }
          } finally {
            state.closed = true;
          }
        })();
      return { state, open };
    };

    /** Waits until the loop stops asking for reads (it is waiting for the client). */
    async function untilStalled(state: { reads: number }): Promise<number> {
      for (let tries = 0; tries < 200; tries++) {
        const before = state.reads;
        await sleep(100);
        if (state.reads === before && before > 1) return before;
      }
      throw new Error(`the loop never stopped reading (${state.reads} reads)`);
    }

    it('a congested client pauses reading the upstream; reading resumes when the client reads', async () => {
      const { state, open } = endless();
      const result = run({ open });
      const stalled = await untilStalled(state);
      assert.equal(one.res.writableNeedDrain, true);
      assert.ok(stalled < 64, `${stalled} reads of a MiB before the loop waited`);
      one.read();
      await until(() => state.reads > stalled + 2, 'reading resumes');
      scope.abort(errors.shuttingDown());
      assert.equal((await result)?.message, errors.shuttingDown().message);
    });

    it('an abort while waiting for the client stops reading at once and ends the stream with its error', async () => {
      const { state, open } = endless();
      const result = run({ open });
      const stalled = await untilStalled(state);
      scope.abort(errors.shuttingDown());
      const failure = await result;
      assert.deepEqual([failure?.code, failure?.type], ['cancelled', 'server_error']);
      assert.equal(state.reads, stalled);
      assert.equal(state.closed, true);
      assert.deepEqual(surface.calls.slice(-1), ['failureFrames cancelled']);
      assert.equal(writes.at(-1), `end data: usage so far\n\ndata: {"error":"cancelled"}\n\n${DONE_FRAME}`);
    });
  });
});
