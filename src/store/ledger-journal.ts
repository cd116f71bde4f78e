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
  log?: (message: string) => void;
}

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
 * open segment is truncated when the writer has caught up with it.
 */
export class LedgerJournal implements RecordJournal {
  readonly location: string;
  private readonly options: JournalOptions;
  private readonly segmentBytes: number;
  /** Closed segments, oldest first, then the open one. */
  private readonly segments: Segment[] = [];
  private fd: number;
  private size = 0;
  private nextIndex: number;
  private appended = 0;
  private writtenCount = 0;
  private dirty = false;
  private syncing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  /** Opens (creating) the journal in `options.dir` and reads back what a previous run left. */
  static open(options: JournalOptions): { journal: LedgerJournal; replayed: LedgerRecord[] } {
    mkdirSync(options.dir, { recursive: true });
    takeLock(options.dir);
    const replayed: LedgerRecord[] = [];
    const found: Segment[] = [];
    let skipped = 0;
    let lastIndex = 0;
    for (const name of readdirSync(options.dir)
      .filter((n) => SEGMENT.test(n))
      .sort()) {
      lastIndex = Number(SEGMENT.exec(name)?.[1]);
      const path = join(options.dir, name);
      const read = readSegment(path);
      replayed.push(...read.records);
      skipped += read.skipped;
      found.push({ path, end: replayed.length });
    }
    if (skipped > 0)
      options.log?.(`ledger: journal ${options.dir}: ${skipped} unreadable line(s) skipped (a write cut by a crash)`);
    if (replayed.length > 0)
      options.log?.(`ledger: journal ${options.dir}: ${replayed.length} record(s) not yet in the store, writing them first`);
    const journal = new LedgerJournal(options, found, replayed.length, lastIndex + 1);
    return { journal, replayed };
  }

  private constructor(options: JournalOptions, found: Segment[], replayedCount: number, nextIndex: number) {
    this.options = options;
    this.location = options.dir;
    this.segmentBytes = options.segmentBytes ?? 4 * 1024 * 1024;
    this.segments.push(...found);
    this.appended = replayedCount;
    this.nextIndex = nextIndex;
    this.fd = this.startSegment();
    if (options.syncMs > 0) {
      this.timer = setInterval(() => this.syncSoon(), options.syncMs);
      this.timer.unref();
    }
  }

  append(record: LedgerRecord): void {
    if (this.closed) throw new Error('the journal is closed');
    if (this.size >= this.segmentBytes) this.rotate();
    const line = `${JSON.stringify(record)}\n`;
    this.size += writeSync(this.fd, line);
    this.appended++;
    this.current().end = this.appended;
    if (this.options.syncMs === 0) fdatasyncSync(this.fd);
    else this.dirty = true;
  }

  written(count: number): void {
    if (this.closed) return;
    this.writtenCount += count;
    try {
      while (this.segments.length > 1 && this.segments[0].end <= this.writtenCount) {
        const done = this.segments.shift();
        if (done) unlinkSync(done.path);
      }
      // Caught up with the open segment: empty it (O_APPEND writes go on from offset 0).
      if (this.segments.length === 1 && this.writtenCount >= this.appended && this.size > 0) {
        ftruncateSync(this.fd);
        this.size = 0;
      }
    } catch (err) {
      // The records are in the store; a file left behind only means they are replayed (and
      // skipped as already there) at the next start.
      this.options.log?.(`ledger: journal ${this.location}: could not trim: ${(err as Error).message}`);
    }
  }

  /** Forces what was appended to the disk and closes the files; the lock goes with it. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    fdatasyncSync(this.fd);
    closeSync(this.fd);
    // The open segment is kept only if it holds records the store does not have.
    if (this.size === 0 && this.segments.length === 1) unlinkSync(this.current().path);
    unlinkSync(join(this.options.dir, LOCK));
  }

  private current(): Segment {
    return this.segments[this.segments.length - 1];
  }

  private startSegment(): number {
    const path = join(this.options.dir, `ledger-${String(this.nextIndex++).padStart(12, '0')}.jsonl`);
    const fd = openSync(path, 'a');
    this.segments.push({ path, end: this.appended });
    this.size = 0;
    syncDirectory(this.options.dir);
    return fd;
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

export function readSegment(path: string): { records: LedgerRecord[]; skipped: number } {
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  // The last piece has no newline after it: a line the crash cut short (or nothing).
  const torn = lines.pop() ?? '';
  const records: LedgerRecord[] = [];
  let skipped = torn.length > 0 ? 1 : 0;
  for (const line of lines) {
    if (line.length === 0) continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (isRecordLike(value)) records.push(value);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { records, skipped };
}

/** Enough of a record to be worth writing: the writer's sanitizeRecord fixes the rest. */
function isRecordLike(value: unknown): value is LedgerRecord {
  return typeof value === 'object' && value !== null && typeof (value as { requestId?: unknown }).requestId === 'string';
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
