import { errors } from '../errors/catalog.ts';
import { type Redis, RedisLink, RedisUnavailable } from '../store/redis-link.ts';
import { MemoryStreamBuffer } from './memory-buffer.ts';
import type { BufferLimits, KeptStream, StreamBuffer, StreamLookup, StreamRecording } from './stream-buffer.ts';
import { framesFrom } from './stream-buffer.ts';

/** How often a resume served from Redis looks for a running stream's new frames. */
const POLL_MS = 100;

export interface RedisBufferOptions {
  url: string;
  prefix: string;
  timeoutMs: number;
  log: (message: string) => void;
  /** A stream that ended or was dropped is remembered (410, not 404) this long after it went. */
  goneTtlMs?: number;
}

/**
 * The buffer of a gateway with more than one instance: every stream is kept in this instance's
 * memory (which serves its own resumes, live, without a round trip) and mirrored to Redis, from
 * where any other instance serves a resume, following a running stream by polling every POLL_MS.
 *
 * Per stream, in Redis: `{prefix}stream:{id}` (a hash: project, content type, state), its frames
 * `{prefix}stream:{id}:frames` (a list, one element per write, `firstId lastId\n` then the frames),
 * both expiring ttl after the last write; and `{prefix}stream:{id}:gone` (the project), which
 * outlives them (goneTtlMs) so that a resume of an expired stream is a 410. The writes of a tick
 * go in one round trip; they are sent and not awaited (a Redis that is down costs the mirror, not
 * the stream). Redis bounds the streams by age, and each by buffer_bytes; their count is bounded
 * by Redis's own memory policy.
 */
export class RedisStreamBuffer implements StreamBuffer {
  private readonly local: MemoryStreamBuffer;
  private readonly link: RedisLink;
  private readonly limits: BufferLimits;
  private readonly prefix: string;
  private readonly goneTtlS: number;
  /** The resumes following a running stream through Redis, each by what ends it. */
  private readonly follows = new Set<() => void>();

  constructor(limits: BufferLimits, options: RedisBufferOptions) {
    this.limits = limits;
    this.local = new MemoryStreamBuffer(limits);
    this.prefix = `${options.prefix}stream:`;
    this.goneTtlS = Math.ceil((options.goneTtlMs ?? Math.max(limits.ttlMs * 10, 3_600_000)) / 1000);
    this.link = new RedisLink({ url: options.url, timeoutMs: options.timeoutMs, log: (m) => options.log(`resume buffer: ${m}`) });
  }

  start(): Promise<void> {
    return this.link.start();
  }

  async close(): Promise<void> {
    for (const end of this.follows) end();
    await this.link.close();
  }

  recording(requestId: string): StreamRecording {
    const local = this.local.recording(requestId);
    const key = this.prefix + requestId;
    const ttlS = Math.max(1, Math.ceil(this.limits.ttlMs / 1000));
    let projectId: string | null = null;
    let pending: string[] = [];
    let flushing = false;
    let bytes = 0;
    let lastId = 0;
    let dropped = false;
    let ended = false;
    const flush = () => {
      flushing = false;
      const elements = pending;
      pending = [];
      const state = dropped ? 'dropped' : ended ? 'ended' : 'live';
      this.mirror(async (redis) => {
        const writes: Promise<unknown>[] = [];
        if (dropped) writes.push(redis.del(`${key}:frames`));
        else if (elements.length > 0) writes.push(redis.rPush(`${key}:frames`, elements), redis.expire(`${key}:frames`, ttlS));
        writes.push(redis.hSet(key, 'state', state), redis.expire(key, ttlS));
        await Promise.all(writes);
      });
    };
    const schedule = () => {
      if (flushing) return;
      flushing = true;
      setImmediate(flush);
    };
    return {
      claim: (project) => {
        projectId = project;
        local.claim(project);
      },
      start: (contentType) => {
        local.start(contentType);
        const project = projectId ?? '';
        this.mirror(async (redis) => {
          await Promise.all([
            redis.hSet(key, { project, type: contentType, state: 'live' }),
            redis.expire(key, ttlS),
            redis.set(`${key}:gone`, project, { expiration: { type: 'EX', value: this.goneTtlS } }),
          ]);
        });
      },
      record: (frames, id) => {
        local.record(frames, id);
        if (dropped || frames.length === 0) return;
        bytes += frames.length;
        if (bytes > this.limits.bytes) dropped = true;
        else pending.push(`${lastId + 1} ${id}\n${frames}`);
        lastId = id;
        schedule();
      },
      end: () => {
        local.end();
        ended = true;
        schedule();
      },
    };
  }

  /**
   * A write to the mirror, not awaited. Its failure is not logged one by one: the link logs when
   * Redis goes away and when it is back, and the streams meanwhile are served by their instance.
   */
  private mirror(work: (redis: Redis) => Promise<unknown>): void {
    this.link.run(work).catch(() => {});
  }

  async find(requestId: string): Promise<StreamLookup> {
    const here = await this.local.find(requestId);
    if (here.state === 'kept') return here;
    try {
      return await this.findInRedis(requestId, here);
    } catch (err) {
      if (!(err instanceof RedisUnavailable)) throw err;
      // What this instance knows still holds; a stream it never had may be in Redis: a 503, not a 404.
      if (here.state === 'gone') return here;
      throw errors.streamBufferUnavailable();
    }
  }

  private async findInRedis(requestId: string, here: StreamLookup): Promise<StreamLookup> {
    const key = this.prefix + requestId;
    const [meta, gone] = await this.link.run((redis) => Promise.all([redis.hGetAll(key), redis.get(`${key}:gone`)]));
    if (!meta.state) {
      if (here.state === 'gone') return here;
      if (gone === null) return { state: 'unknown' };
      return {
        state: 'gone',
        projectId: gone || null,
        why: `streams are kept ${this.limits.ttlMs / 1000} s after their last frame (stream.resume.ttl_s)`,
      };
    }
    const projectId = meta.project || null;
    if (meta.state === 'dropped') {
      return { state: 'gone', projectId, why: `it outgrew the buffer (stream.resume.buffer_bytes: ${this.limits.bytes})` };
    }
    const first = await this.link.run((redis) => redis.lRange(`${key}:frames`, 0, -1));
    return { state: 'kept', projectId, stream: this.remote(key, meta, first) };
  }

  /** A stream recorded by another instance, read from Redis. */
  private remote(key: string, meta: Record<string, string>, elements: string[]): KeptStream {
    const chunks = elements.map(parseElement);
    const follows = this.follows;
    const link = this.link;
    return {
      contentType: meta.type ?? 'text/event-stream',
      lastId: chunks.at(-1)?.lastId ?? 0,
      ended: meta.state === 'ended',
      follow(afterId, send, done) {
        let sentUpTo = afterId;
        let read = chunks.length;
        const deliver = (chunk: Chunk) => {
          if (chunk.lastId <= sentUpTo) return;
          const text = framesFrom(chunk.text, chunk.firstId, sentUpTo + 1);
          sentUpTo = chunk.lastId;
          if (text) send(text);
        };
        for (const chunk of chunks) deliver(chunk);
        if (meta.state === 'ended') {
          done();
          return () => {};
        }
        let timer: NodeJS.Timeout | undefined;
        const stop = () => {
          clearTimeout(timer);
          follows.delete(end);
        };
        const end = () => {
          stop();
          done();
        };
        const poll = async () => {
          try {
            // In one round trip, state first: a stream seen ended has all its frames in the list read after.
            const [state, more] = await link.run((redis) =>
              Promise.all([redis.hGet(key, 'state'), redis.lRange(`${key}:frames`, read, -1)]),
            );
            if (!follows.has(end)) return;
            read += more.length;
            for (const element of more) deliver(parseElement(element));
            if (state === 'live') timer = setTimeout(next, POLL_MS);
            else end();
          } catch {
            // Redis is away: the resume ends here, and the client may try again.
            if (follows.has(end)) end();
          }
        };
        const next = () => void poll();
        follows.add(end);
        timer = setTimeout(next, POLL_MS);
        return stop;
      },
    };
  }
}

interface Chunk {
  firstId: number;
  lastId: number;
  text: string;
}

function parseElement(element: string): Chunk {
  const newline = element.indexOf('\n');
  const [first, last] = element.slice(0, newline).split(' ');
  return { firstId: Number(first), lastId: Number(last), text: element.slice(newline + 1) };
}
