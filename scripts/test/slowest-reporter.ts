/**
 * A node:test reporter that writes, when the run ends, each file's wall time as JSON lines
 * ({"file", "ms"}): the runner (run.ts) prints the slowest. A file's time is its own wrapper test's
 * where the runner made one (a process per file), else the sum of its top-level tests' (in-process
 * runs, where every file shares one process).
 */
import type { TestEvent } from 'node:test/reporters';

export default async function* slowest(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const files = new Map<string, { wrapper?: number; tests: number }>();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, name, details } = event.data;
    if (!file || nesting !== 0) continue;
    const entry = files.get(file) ?? { tests: 0 };
    if (name === file) entry.wrapper = details.duration_ms;
    else entry.tests += details.duration_ms;
    files.set(file, entry);
  }
  for (const [file, { wrapper, tests }] of files) yield `${JSON.stringify({ file, ms: Math.round(wrapper ?? tests) })}\n`;
}
