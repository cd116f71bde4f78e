/**
 * A node:test reporter that writes, when the run ends, each file's wall time as JSON lines
 * ({"file", "ms"}): the runner (run.ts) prints the slowest. A file's time is its own wrapper test's
 * where the runner made one (a process per file), else the sum of its top-level tests' (in-process
 * runs, where every file shares one process). A file whose tests were all skipped (the browser's
 * without chromium) writes no line: its 0 s would weigh it as free in file-seconds.json, and one
 * shard got every console file, 40 s past the others.
 */
import type { TestEvent } from 'node:test/reporters';

export default async function* slowest(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const files = new Map<string, { wrapper?: number; tests: number; ran: boolean }>();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, name, details } = event.data;
    if (!file || nesting > 1) continue;
    const entry = files.get(file) ?? { tests: 0, ran: false };
    files.set(file, entry);
    // A test that ran: a file's own at the top (in-process) or under its wrapper (a process each).
    if (name !== file && event.data.skip === undefined) entry.ran = true;
    if (nesting !== 0) continue;
    if (name === file) entry.wrapper = details.duration_ms;
    else entry.tests += details.duration_ms;
  }
  for (const [file, { wrapper, tests, ran }] of files)
    if (ran) yield `${JSON.stringify({ file, ms: Math.round(wrapper ?? tests) })}\n`;
}
