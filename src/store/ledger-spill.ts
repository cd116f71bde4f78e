import { closeSync, fdatasyncSync, mkdirSync, openSync, readdirSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { describeStoreError } from './classify-store-error.ts';
import { readSegment, syncDirectory } from './ledger-journal.ts';
import type { LedgerWriter } from './ledger-writer.ts';

/**
 * A spill file: the records a shutdown could not write (the store down or stalled past
 * ledger.shutdown_flush_ms) when no journal holds them (ledger.durable off), saved in the
 * journal's line format (one JSON record a line) and written to the store at the next start.
 * Named apart from the journal's segments (`ledger-<n>.jsonl`): a journal never takes one as its
 * own, and several processes (workers, instances sharing a directory) never write the same one.
 */
const SPILL = /^spill-\d+-\d+-\d+\.jsonl$/;

/** Two spills of one process within a millisecond (tests do) still get names of their own. */
let spilledFiles = 0;

/** Writes `records` to a new spill file in `dir`, forced to the disk; returns its path. */
export function spillRecords(dir: string, records: readonly LedgerRecord[]): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `spill-${Date.now()}-${process.pid}-${spilledFiles++}.jsonl`);
  const fd = openSync(path, 'wx');
  try {
    // One write per record keeps a large backlog from being one string the size of the file.
    for (const record of records) writeSync(fd, `${JSON.stringify(record)}\n`);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  syncDirectory(dir);
  return path;
}

export interface Spilled {
  records: LedgerRecord[];
  /** The files read, to delete once their records are in the store (or spilled again). */
  files: string[];
  /** Lines that were not a record (a write cut short by a crash during the spill). */
  skipped: number;
}

/** The spill files a previous run left in `dir` (none when it does not exist), oldest first. */
export function readSpilled(dir: string): Spilled {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => SPILL.test(n));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], files: [], skipped: 0 };
    throw err;
  }
  const spilled: Spilled = { records: [], files: [], skipped: 0 };
  for (const name of names.sort(byTime)) {
    const path = join(dir, name);
    const read = readSegment(path);
    spilled.records.push(...read.records);
    spilled.skipped += read.skipped;
    spilled.files.push(path);
  }
  return spilled;
}

/**
 * Deletes spill files whose records are in the store. Another process that read the same file
 * may have deleted it first; a record it wrote as well is skipped by the insert (request_id is
 * the primary key, ON CONFLICT DO NOTHING), so two readers never make two rows.
 */
export function removeSpilled(files: readonly string[]): void {
  for (const file of files) {
    try {
      unlinkSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** By the time in the name, then the pid and the process's count: the order the files were spilled in. */
function byTime(a: string, b: string): number {
  const [x, y] = [a, b].map((name) => name.split(/[-.]/).slice(1, 4).map(Number));
  return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
}

/**
 * The spill files of one ledger: those a previous run left, replayed at start and deleted once
 * their records are in the store; and the saver a shutdown that could not write everything
 * calls, whose new file holds every record not yet stored, so it replaces the ones read.
 */
export class SpillFiles {
  private readonly dir: string | undefined;
  private readonly log: (message: string) => void;
  /** Read at start and not yet deleted. */
  private files: string[] = [];

  constructor(dir: string | undefined, log: (message: string) => void) {
    this.dir = dir;
    this.log = log;
  }

  /** Hands the records a previous shutdown saved to `writer` (before its store is attached). */
  replayInto(writer: LedgerWriter): void {
    if (!this.dir) return;
    let spilled: Spilled;
    try {
      spilled = readSpilled(this.dir);
    } catch (err) {
      this.log(`ledger: could not read the spill files in ${this.dir}: ${describeStoreError(err)}`);
      return;
    }
    if (spilled.skipped > 0) this.log(`ledger: ${this.dir}: ${spilled.skipped} unreadable spilled line(s) skipped`);
    if (spilled.files.length === 0) return;
    this.files = spilled.files;
    for (const record of spilled.records) writer.write(record);
    this.log(
      `ledger: ${spilled.records.length} record(s) a shutdown saved in ${this.dir} while the store was unavailable; writing them`,
    );
    // Records leave the writer in the order they entered it: once these many are stored, so are the files'.
    let waiting = writer.pending;
    writer.onWritten((batch) => {
      waiting -= batch.length;
      if (waiting <= 0) this.remove();
    });
  }

  /** The writer's `spill` option: undefined without a directory. */
  saver(): ((records: readonly LedgerRecord[]) => string) | undefined {
    const dir = this.dir;
    if (!dir) return undefined;
    return (records) => {
      const path = spillRecords(dir, records);
      this.remove();
      return path;
    };
  }

  private remove(): void {
    const files = this.files;
    this.files = [];
    if (files.length === 0) return;
    try {
      removeSpilled(files);
    } catch (err) {
      // The records are stored: a file left behind is read again and its rows skipped as already there.
      this.log(`ledger: could not delete the spill file(s) ${files.join(', ')}: ${describeStoreError(err)}`);
    }
  }
}
