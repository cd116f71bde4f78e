import {
  closeSync,
  close as closeFd,
  fdatasync,
  fdatasyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { AdmittedRequest, RequestProgress, UnfinishedRequest } from '../accounting/journal-entries.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { RecordJournal } from './ledger-writer.ts';

export interface JournalOptions {
  /** A directory of this instance's own: two gateways must not share one (a lock file says so). */
  dir: string;
  /**
   * How often appended lines are forced to the disk (fdatasync): 0 after every record, else at
   * most every this many ms, batched. A process crash (SIGKILL, OOM) loses nothing either way:
   * a line is in the kernel's page cache once `append` returns. The interval bounds what a
   * machine crash or a power cut can lose.
   */
  syncMs: number;
  /** A segment past this size is closed and a new one started, so written ones can be deleted. */
  segmentBytes?: number;
  /** How often the progress of running requests is written (default 1000 ms). */
  progressMs?: number;
  log?: (message: string) => void;
}

/** The journal's side of a running request (pipeline/handle-model-request.ts). */
export interface RequestJournal {
  /**
   * A request was admitted. Its line (`describe()`) is written at the end of this turn of the
   * event loop, batched with the others admitted in it: before the upstream's answer can be read,
   * so before the client can have its X-Request-ID. Then `progress()` is read every progressMs
   * and written when it changed (an unchanged request returns the same object). `end()` once its
   * record has been handed to the ledger.
   */
  admitted(requestId: string, describe: () => AdmittedRequest, progress: () => RequestProgress): JournaledRequest;
}

export interface JournaledRequest {
  end(): void;
}

/** A running request as the journal holds it. */
interface OpenRequest {
  requestId: string;
  describe: () => AdmittedRequest;
  /** Its admission as written (undefined until its line is written). */
  admitted?: AdmittedRequest;
  /** Undefined for a request a previous run left unfinished: nothing runs it here. */
  read?: () => RequestProgress;
  /** The progress last written. */
  progress?: RequestProgress;
}

/** A request no journal holds (no durable mode, or the journal closed). */
export const NOT_JOURNALED: JournaledRequest = { end: () => {} };

interface Segment {
  path: string;
  /** Records appended before this segment's end, counted from the journal's opening. */
  end: number;
}

const SEGMENT = /^ledger-(\d{12})\.jsonl$/;

/**
 * The durable ledger mode's write-ahead log: each accepted record is appended as one JSON line
 * before it enters the writer's buffer, and deleted once the store has it. At start the lines
 * left by a crash are read back (replay) and go to the store first; rows already there are
 * skipped by the insert's ON CONFLICT DO NOTHING (request_id is the primary key).
 *
 * Records leave the buffer in the order they entered it, so "the oldest n records are written"
 * is all the journal needs to know: a segment whose every record is written is deleted, and the
 * open segment is truncated when the writer has caught up with it and no request is running.
 *
 * Running requests have lines too, so that a crash does not lose them: `{"admitted": ...}` when
 * one is admitted, `{"progress": ...}` when it moved (at most every progressMs, all in one write,
 * never synced on their own). A request whose record follows is done; one whose record never
 * came is `unfinished` at the next open, and recorded then as interrupted
 * (pipeline/record-interrupted.ts). A new segment starts with the lines of the requests still
 * running (admission and last progress), so an older segment is never kept for them; a request a
 * previous run left unfinished is carried the same way until its row is written.
 */
export class LedgerJournal implements RecordJournal, RequestJournal {
  readonly location: string;
  private readonly options: JournalOptions;
  private readonly segmentBytes: number;
  /** Closed segments, oldest first, then the open one. */
  private readonly segments: Segment[] = [];
  private fd: number;
  private size = 0;
  /** The bytes the open segment started with: the lines of the requests it carries on. */
  private carriedBytes = 0;
  private nextIndex: number;
  private appended = 0;
  private writtenCount = 0;
  private dirty = false;
  private syncing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly progressTimer: NodeJS.Timeout;
  private closed = false;
  /** Running requests (and those a previous run left unfinished, until their row is written). */
  private readonly open = new Map<string, OpenRequest>();
  /** Admitted in this turn of the event loop, their line not written yet. */
  private unwritten: OpenRequest[] = [];
  private flushQueued = false;

  /**
   * Opens (creating) the journal in `options.dir` and reads back what a previous run left: the
   * records to write first, and the requests that never ended.
   */
  static open(options: JournalOptions): { journal: LedgerJournal; replayed: LedgerRecord[]; unfinished: UnfinishedRequest[] } {
    mkdirSync(options.dir, { recursive: true });
    takeLock(options.dir);
    const read = new JournalReading();
    const found: Segment[] = [];
    let lastIndex = 0;
    for (const name of readdirSync(options.dir)
      .filter((n) => SEGMENT.test(n))
      .sort()) {
      lastIndex = Number(SEGMENT.exec(name)?.[1]);
      const path = join(options.dir, name);
      read.segment(readFileSync(path, 'utf8'));
      found.push({ path, end: read.records.length });
    }
    const { records: replayed, skipped } = read;
    const unfinished = [...read.unfinished.values()];
    const where = `ledger: journal ${options.dir}`;
    if (skipped > 0) options.log?.(`${where}: ${skipped} unreadable line(s) skipped (a write cut by a crash)`);
    if (replayed.length > 0) options.log?.(`${where}: ${replayed.length} record(s) not yet in the store, writing them first`);
    if (unfinished.length > 0)
      options.log?.(
        `${where}: ${unfinished.length} request(s) were in progress when sluice stopped; recording them as interrupted`,
      );
    const journal = new LedgerJournal(options, found, replayed.length, lastIndex + 1, unfinished);
    return { journal, replayed, unfinished };
  }

  private constructor(
    options: JournalOptions,
    found: Segment[],
    replayedCount: number,
    nextIndex: number,
    unfinished: readonly UnfinishedRequest[],
  ) {
    this.options = options;
    this.location = options.dir;
    this.segmentBytes = options.segmentBytes ?? 4 * 1024 * 1024;
    this.segments.push(...found);
    this.appended = replayedCount;
    this.nextIndex = nextIndex;
    for (const { admitted, progress } of unfinished) {
      this.open.set(admitted.requestId, { requestId: admitted.requestId, describe: () => admitted, admitted, progress });
    }
    // The older segments go once their records are written: the new one carries these on.
    this.fd = this.startSegment();
    if (options.syncMs > 0) {
      this.timer = setInterval(() => this.syncSoon(), options.syncMs);
      this.timer.unref();
    }
    this.progressTimer = setInterval(() => this.writeProgress(), options.progressMs ?? 1_000);
    this.progressTimer.unref();
  }

  append(record: LedgerRecord): void {
    if (this.closed) throw new Error('the journal is closed');
    // Its record ends it: no line of it may follow (its admission, if still unwritten, is skipped).
    this.open.delete(record.requestId);
    this.rotateIfFull();
    this.write(`${this.unwrittenLines()}${JSON.stringify(record)}\n`);
    this.appended++;
    this.current().end = this.appended;
  }

  admitted(requestId: string, describe: () => AdmittedRequest, progress: () => RequestProgress): JournaledRequest {
    if (this.closed) return NOT_JOURNALED;
    const entry: OpenRequest = { requestId, describe, read: progress };
    this.open.set(requestId, entry);
    this.unwritten.push(entry);
    if (!this.flushQueued) {
      this.flushQueued = true;
      setImmediate(this.flushAdmitted);
    }
    return {
      end: () => {
        if (this.open.get(requestId) === entry) this.open.delete(requestId);
      },
    };
  }

  /**
   * A request a previous run left unfinished has its row in the store already: the journal need
   * not carry it on (its row being written through `append` ends it too).
   */
  forget(requestId: string): void {
    const entry = this.open.get(requestId);
    if (entry && !entry.read) this.open.delete(requestId);
  }

  written(count: number): void {
    if (this.closed) return;
    this.writtenCount += count;
    try {
      while (this.segments.length > 1 && this.segments[0].end <= this.writtenCount) {
        const done = this.segments.shift();
        if (done) unlinkSync(done.path);
      }
      // Caught up with the open segment and nothing running: empty it (O_APPEND writes go on
      // from offset 0). While requests run, it grows to segmentBytes and rotates instead.
      if (this.segments.length === 1 && this.writtenCount >= this.appended && this.size > 0 && this.open.size === 0) {
        ftruncateSync(this.fd);
        this.size = 0;
        this.carriedBytes = 0;
      }
    } catch (err) {
      // The records are in the store; a file left behind only means they are replayed (and
      // skipped as already there) at the next start.
      this.options.log?.(`ledger: journal ${this.location}: could not trim: ${(err as Error).message}`);
    }
  }

  /**
   * Forces what was appended to the disk and closes the files; the lock goes with it. A request
   * still running keeps its lines (its record would arrive after the ledger closed): the next
   * start records it as interrupted.
   */
  close(): void {
    if (this.closed) return;
    this.flushAdmitted();
    this.closed = true;
    clearInterval(this.timer);
    clearInterval(this.progressTimer);
    fdatasyncSync(this.fd);
    closeSync(this.fd);
    // The open segment is kept only if it holds records the store does not have, or requests.
    if (this.size === 0 && this.segments.length === 1) unlinkSync(this.current().path);
    unlinkSync(join(this.options.dir, LOCK));
  }

  private current(): Segment {
    return this.segments[this.segments.length - 1];
  }

  private write(text: string): void {
    this.size += writeSync(this.fd, text);
    if (this.options.syncMs === 0) fdatasyncSync(this.fd);
    else this.dirty = true;
  }

  /** The admission lines of requests admitted since the last write, still running. */
  private unwrittenLines(): string {
    const entries = this.unwritten;
    this.unwritten = [];
    let text = '';
    for (const entry of entries) {
      // Ended in the same turn (a quick refusal, a dropped record): no line needed.
      if (this.open.get(entry.requestId) !== entry) continue;
      entry.admitted = entry.describe();
      text += `${JSON.stringify({ admitted: entry.admitted })}\n`;
    }
    return text;
  }

  /** The batched admission lines: one write per turn of the event loop, whatever the requests. */
  private readonly flushAdmitted = (): void => {
    this.flushQueued = false;
    if (this.closed || this.unwritten.length === 0) return;
    try {
      this.rotateIfFull();
      const text = this.unwrittenLines();
      if (text) this.write(text);
    } catch (err) {
      this.options.log?.(`ledger: journal ${this.location}: could not write admissions: ${(err as Error).message}`);
    }
  };

  /** Every progressMs: one write with the progress of each running request that moved. */
  private writeProgress(): void {
    if (this.closed || this.open.size === 0) return;
    try {
      this.rotateIfFull();
      let text = this.unwrittenLines();
      for (const entry of this.open.values()) {
        if (!entry.read) continue;
        const now = entry.read();
        if (now === entry.progress) continue;
        entry.progress = now;
        text += `${JSON.stringify({ progress: now })}\n`;
      }
      if (text) this.write(text);
    } catch (err) {
      this.options.log?.(`ledger: journal ${this.location}: could not write progress: ${(err as Error).message}`);
    }
  }

  /** What a new segment starts with: the lines of every request still running (or left unfinished). */
  private carriedLines(): string {
    let text = '';
    for (const entry of this.open.values()) {
      // One admitted in this turn has its line written after this, into the new segment.
      if (!entry.admitted) continue;
      text += `${JSON.stringify({ admitted: entry.admitted })}\n`;
      if (entry.progress) text += `${JSON.stringify({ progress: entry.progress })}\n`;
    }
    return text;
  }

  private startSegment(): number {
    const path = join(this.options.dir, `ledger-${String(this.nextIndex++).padStart(12, '0')}.jsonl`);
    const fd = openSync(path, 'a');
    this.segments.push({ path, end: this.appended });
    this.size = 0;
    const carried = this.carriedLines();
    if (carried) this.size += writeSync(fd, carried);
    this.carriedBytes = this.size;
    // With syncMs 0 every line is on the disk before sluice goes on: these too.
    if (carried && this.options.syncMs === 0) fdatasyncSync(fd);
    else if (carried) this.dirty = true;
    syncDirectory(this.options.dir);
    return fd;
  }

  /**
   * A segment is full once it holds segmentBytes of its own, past what it carries: so that many
   * requests running at once (their lines more than a segment) do not rotate it on every write,
   * and a rotation never writes more than it frees.
   */
  private rotateIfFull(): void {
    if (this.size - this.carriedBytes >= Math.max(this.segmentBytes, this.carriedBytes)) this.rotate();
  }

  /** Closes the open segment (synced once any sync in flight on it is done) and starts a new one. */
  private rotate(): void {
    const old = this.fd;
    const wasDirty = this.dirty;
    this.dirty = false;
    const after = this.syncing ?? Promise.resolve();
    this.syncing = after.then(
      () =>
        new Promise<void>((done) => {
          const end = () => closeFd(old, () => done());
          if (wasDirty) fdatasync(old, end);
          else end();
        }),
    );
    this.fd = this.startSegment();
  }

  /** The batched sync: one fdatasync in flight at a time, in the thread pool, off the event loop. */
  private syncSoon(): void {
    if (!this.dirty || this.syncing || this.closed) return;
    this.dirty = false;
    const fd = this.fd;
    this.syncing = new Promise<void>((done) =>
      fdatasync(fd, (err) => {
        if (err && !this.closed) this.options.log?.(`ledger: journal ${this.location}: fdatasync failed: ${err.message}`);
        done();
      }),
    ).finally(() => {
      this.syncing = undefined;
    });
  }
}

/**
 * The lines of a journal's segments, read in order: the records to replay, and the requests
 * admitted whose record never followed (with their last progress).
 */
class JournalReading {
  readonly records: LedgerRecord[] = [];
  readonly unfinished = new Map<string, UnfinishedRequest>();
  skipped = 0;

  segment(text: string): void {
    const lines = text.split('\n');
    // The last piece has no newline after it: a line the crash cut short (or nothing).
    const torn = lines.pop() ?? '';
    if (torn.length > 0) this.skipped++;
    for (const line of lines) if (line.length > 0) this.line(line);
  }

  private line(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      this.skipped++;
      return;
    }
    if (typeof value !== 'object' || value === null) {
      this.skipped++;
    } else if ('admitted' in value) {
      const admitted = value.admitted;
      if (!isAdmittedLike(admitted)) this.skipped++;
      // A request carried into a new segment is admitted twice: its progress stays.
      else this.unfinished.set(admitted.requestId, { ...this.unfinished.get(admitted.requestId), admitted });
    } else if ('progress' in value) {
      const progress = value.progress as RequestProgress;
      const entry = this.unfinished.get(progress?.requestId);
      if (entry) entry.progress = progress;
    } else if (isRecordLike(value)) {
      this.records.push(value);
      this.unfinished.delete(value.requestId);
    } else this.skipped++;
  }
}

/** One segment's records (a shutdown's spill file, ledger-spill.ts): its admissions are no crash's to record. */
export function readSegment(path: string): { records: LedgerRecord[]; skipped: number } {
  const read = new JournalReading();
  read.segment(readFileSync(path, 'utf8'));
  return { records: read.records, skipped: read.skipped };
}

/** Enough of a record to be worth writing: the writer's sanitizeRecord fixes the rest. */
function isRecordLike(value: unknown): value is LedgerRecord {
  return typeof value === 'object' && value !== null && typeof (value as { requestId?: unknown }).requestId === 'string';
}

/** Enough of an admission to record: interrupted-record.ts reads its counts defensively. */
function isAdmittedLike(value: unknown): value is AdmittedRequest {
  const a = value as Partial<AdmittedRequest> | null;
  return typeof a === 'object' && a !== null && typeof a.requestId === 'string' && typeof a.createdAt === 'number';
}

const LOCK = 'LOCK';

/**
 * One gateway per journal: a second would truncate the first one's records. The lock file holds
 * the owner's pid; a lock whose process is gone (a crash) is taken over.
 */
function takeLock(dir: string): void {
  const path = join(dir, LOCK);
  try {
    writeFileSync(path, String(process.pid), { flag: 'wx' });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const owner = Number(readFileSync(path, 'utf8'));
  if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
    throw new Error(`ledger journal ${dir} is in use by process ${owner}; give each gateway its own ledger.journal`);
  }
  writeFileSync(path, String(process.pid));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A new file's name is durable only once its directory is synced. */
export function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fdatasyncSync(fd);
  } catch {
    // Not every platform can sync a directory; the file's own sync still covers its content.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
