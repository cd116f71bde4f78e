import { Writable } from 'node:stream';
import pino, { type DestinationStream, type Logger } from 'pino';
import { escapeControls, escapeJsonLine, hasControls } from './escape-controls.ts';

export type { Logger } from 'pino';

export interface LogSettings {
  level: string;
  /** `auto`: readable lines on a terminal, JSON otherwise. */
  format: 'auto' | 'json' | 'pretty';
}

/**
 * sluice's structured logger (pino): one JSON object per line on stderr, or a short readable
 * line per entry when stderr is a terminal (a person reading, not a collector). `destination`
 * replaces stderr (tests read the lines from it; `auto` is JSON there). In every format, control
 * characters in the text (a client's model name) are escaped (escape-controls.ts): no raw
 * terminal escape sequence and no forged line. pino's JSON escapes the C0 controls itself; the
 * hook escapes the rest in one regular expression pass over the line: +0.4-0.5 µs a request line
 * (pino with a destination that takes bytes, 60 alternated runs of 20k lines on the busy 2-core
 * VM: median 4.4 -> 4.8 µs, fastest 3.5 -> 4.1 µs).
 */
export function createLogger(settings: LogSettings, destination?: DestinationStream): Logger {
  const options = { level: settings.level, base: undefined, hooks: { streamWrite: escapeJsonLine } };
  const pretty = settings.format === 'pretty' || (settings.format === 'auto' && !destination && process.stderr.isTTY === true);
  if (destination) return pino(options, pretty ? readable(destination) : destination);
  // Asynchronous (a write syscall per line was most of the line's cost, docs/operations/observability.md "Logs"), and
  // batched: lines wait for 16 KiB or 250 ms, whichever comes first, and go in one write. A write
  // per line was ~35 us of the gateway's core per request in the unary bench at 16 in flight
  // (`npm run bench -- --modes unary --profile DIR`: fs writeString, the thread pool's write and
  // its wake-ups); batched at 4 KiB, 0.249 -> 0.240 ms of CPU per request in the same mode (noisy
  // VM). At 4 KiB (~7 lines a write) each write still cost ~45 us of the process (the thread
  // pool's round trip, the pipe's reader woken): `sluice serve` at 16 unary requests in flight,
  // perf-sampled, 0.178-0.180 ms of CPU per request at 4 KiB, 0.170-0.173 at 16 KiB, the thread
  // pool's samples 254 -> 83. pino flushes it synchronously at process exit, so the last lines
  // before process.exit are not lost; a process killed outright loses at most 250 ms of lines.
  const stderr = logDestination(2);
  return pino(options, pretty ? readable(stderr) : stderr);
}

/** A log destination that takes pino's lines (strings) and can flush what it holds. */
export interface LineDestination extends DestinationStream {
  flush(cb?: (err?: Error) => void): void;
}

/**
 * Where the lines go: a file descriptor or a path, written as described above. Each line is
 * handed to sonic-boom as bytes (its `buffer` content mode), which keeps the batch as a list and
 * its length as a number. In its default string mode every write appends to one string and
 * measures the whole of it again (`Buffer.byteLength` of the pending batch, flattened first), so
 * a line cost more the fuller the batch, and left a copy of the batch as garbage: at 16 KiB
 * batches, a line written through sonic-boom cost ~3.0 µs in string mode and ~0.5 µs in buffer
 * mode (100k lines to /dev/null, a turn of the event loop every 16 lines).
 */
export function logDestination(dest: number | string): LineDestination {
  const out = pino.destination({
    dest,
    sync: false,
    minLength: 16384,
    maxWrite: 65536,
    periodicFlush: 250,
    contentMode: 'buffer',
  });
  return {
    // sonic-boom's types know only its string mode.
    write: (line: string) => out.write(Buffer.from(line) as unknown as string),
    // pino flushes it synchronously at process exit (it registered `out` when it built it).
    // sonic-boom calls a flush back once the write in flight has drained, which can leave lines
    // under minLength still held: a second flush writes them. Its fsync after each fails with
    // EINVAL on a pipe or /dev/null, where the lines were written all the same: not a failure.
    flush: (cb) =>
      out.flush((err) => {
        const failure = flushFailure(err);
        if (failure) cb?.(failure);
        else out.flush((last) => cb?.(flushFailure(last)));
      }),
  };
}

/** A flush's error, but for the fsync that a pipe or /dev/null refuses (EINVAL) after the write. */
function flushFailure(err: Error | undefined): Error | undefined {
  return err && (err as NodeJS.ErrnoException).code !== 'EINVAL' ? err : undefined;
}

/** A field's value as it reads on a terminal: bare when it is one plain word, else JSON. */
function fieldValue(value: unknown): string {
  if (typeof value === 'string' && value !== '' && !/[\s"=]/.test(value) && !hasControls(value)) return value;
  return escapeControls(JSON.stringify(value) ?? String(value));
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/**
 * `12:00:01.234 INFO  request ok  request_id=… model=…`: pino's JSON line, reworded for a terminal.
 * Parsing the line gives back the raw text, so the controls are escaped again here; a value with a
 * space, a quote or an `=` is written as a JSON string, so that it cannot pass for more fields.
 */
export function readable(out: DestinationStream): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      try {
        const { level, time, msg, ...fields } = JSON.parse(chunk.toString()) as Record<string, unknown>;
        const when = new Date(Number(time)).toISOString().slice(11, 23);
        const rest = Object.entries(fields).map(([k, v]) => `${escapeControls(k)}=${fieldValue(v)}`);
        const tail = rest.length > 0 ? `  ${rest.join(' ')}` : '';
        out.write(`${when} ${(LEVELS[Number(level)] ?? String(level)).padEnd(5)} ${escapeControls(String(msg ?? ''))}${tail}\n`);
      } catch {
        out.write(chunk.toString());
      }
      done();
    },
  });
}
