import type { BufferLimits, KeptStream, StreamBuffer, StreamLookup, StreamRecording } from './stream-buffer.ts';
import { framesFrom } from './stream-buffer.ts';

interface Chunk {
  text: string;
  firstId: number;
  lastId: number;
}

interface Follower {
  sentUpTo: number;
  send: (frames: string) => void;
  done: () => void;
}

interface Gone {
  projectId: string | null;
  why: string;
}

/** One kept stream: its writes as recorded, and the resumes following it live. */
class Entry implements KeptStream {
  readonly projectId: string | null;
  readonly contentType: string;
  readonly chunks: Chunk[] = [];
  readonly followers = new Set<Follower>();
  bytes = 0;
  lastId = 0;
  ended = false;
  touchedAt: number;

  constructor(projectId: string | null, contentType: string, now: number) {
    this.projectId = projectId;
    this.contentType = contentType;
    this.touchedAt = now;
  }

  follow(afterId: number, send: (frames: string) => void, done: () => void): () => void {
    const follower: Follower = { sentUpTo: afterId, send, done };
    for (const chunk of this.chunks) deliver(follower, chunk);
    if (this.ended) {
      done();
      return () => {};
    }
    this.followers.add(follower);
    return () => this.followers.delete(follower);
  }

  add(chunk: Chunk): void {
    this.chunks.push(chunk);
    this.bytes += chunk.text.length;
    this.lastId = chunk.lastId;
    for (const follower of this.followers) deliver(follower, chunk);
  }

  /** Nothing more comes: every follower is told (the stream ended, or was dropped). */
  release(): void {
    const followers = [...this.followers];
    this.followers.clear();
    for (const follower of followers) follower.done();
  }
}

/** The part of `chunk` a follower has not had yet. */
function deliver(follower: Follower, chunk: Chunk): void {
  if (chunk.lastId <= follower.sentUpTo) return;
  const text = framesFrom(chunk.text, chunk.firstId, follower.sentUpTo + 1);
  follower.sentUpTo = chunk.lastId;
  if (text) follower.send(text);
}

/**
 * The buffer of one instance, bounded by count, characters and age. The oldest stream goes first
 * when a bound is reached (even while it runs: its live resumes end, and a later resume gets
 * 410); a stream larger than the whole byte bound is not kept at all. Age is checked when a
 * stream is looked up and when one starts (the expired streams at the front go), so an expired
 * stream may hold memory until then, within the count and byte bounds. A stream dropped or
 * expired is remembered (its project and why, in as many entries as streams are kept) so that a
 * resume of it is a 410, not a 404.
 */
export class MemoryStreamBuffer implements StreamBuffer {
  private readonly limits: BufferLimits;
  private readonly now: () => number;
  private readonly kept = new Map<string, Entry>();
  private readonly gone = new Map<string, Gone>();
  private bytes = 0;

  constructor(limits: BufferLimits, now: () => number = Date.now) {
    this.limits = limits;
    this.now = now;
  }

  async start(): Promise<void> {}

  /** Nothing to let go of: a live resume ends with its stream, which the shutdown ends. */
  async close(): Promise<void> {}

  recording(requestId: string): StreamRecording {
    let projectId: string | null = null;
    let entry: Entry | undefined;
    return {
      claim: (project) => (projectId = project),
      start: (contentType) => {
        entry = this.open(requestId, projectId, contentType);
      },
      record: (frames, lastId) => {
        if (!entry || this.kept.get(requestId) !== entry || frames.length === 0) return;
        this.add(requestId, entry, { text: frames, firstId: entry.lastId + 1, lastId });
      },
      end: () => {
        if (!entry) return;
        entry.ended = true;
        entry.touchedAt = this.now();
        entry.release();
      },
    };
  }

  async find(requestId: string): Promise<StreamLookup> {
    const entry = this.kept.get(requestId);
    if (entry && this.expired(entry)) this.drop(requestId, this.expiry());
    const kept = this.kept.get(requestId);
    if (kept) return { state: 'kept', projectId: kept.projectId, stream: kept };
    const gone = this.gone.get(requestId);
    return gone ? { state: 'gone', ...gone } : { state: 'unknown' };
  }

  /** How many streams and characters are kept (for tests and diagnostics). */
  get size(): { streams: number; bytes: number } {
    return { streams: this.kept.size, bytes: this.bytes };
  }

  private open(requestId: string, projectId: string | null, contentType: string): Entry {
    for (const [id, entry] of this.kept) {
      if (this.kept.size < this.limits.streams && !this.expired(entry)) break;
      this.drop(id, this.expired(entry) ? this.expiry() : `more than ${this.limits.streams} streams were kept after it`);
    }
    const entry = new Entry(projectId, contentType, this.now());
    this.kept.set(requestId, entry);
    this.gone.delete(requestId);
    return entry;
  }

  private add(requestId: string, entry: Entry, chunk: Chunk): void {
    entry.touchedAt = this.now();
    this.bytes += chunk.text.length;
    entry.add(chunk);
    if (entry.bytes > this.limits.bytes) {
      this.drop(requestId, `it outgrew the buffer (stream.resume.buffer_bytes: ${this.limits.bytes})`);
      return;
    }
    for (const [id] of this.kept) {
      if (this.bytes <= this.limits.bytes) break;
      this.drop(id, `newer streams needed its room (stream.resume.buffer_bytes: ${this.limits.bytes})`);
    }
  }

  private drop(requestId: string, why: string): void {
    const entry = this.kept.get(requestId);
    if (!entry) return;
    this.kept.delete(requestId);
    this.bytes -= entry.bytes;
    this.gone.set(requestId, { projectId: entry.projectId, why });
    if (this.gone.size > this.limits.streams) this.gone.delete(this.gone.keys().next().value as string);
    entry.release();
  }

  private expired(entry: Entry): boolean {
    return this.now() - entry.touchedAt > this.limits.ttlMs;
  }

  private expiry(): string {
    return `streams are kept ${this.limits.ttlMs / 1000} s after their last frame (stream.resume.ttl_s)`;
  }
}
