/**
 * Splits test files into `count` shards of similar cost. What a file costs is not known before it
 * runs, so its size stands for it, with the store's contract suites (`*.contract.test.ts`, which
 * migrate fresh PostgreSQL and SQLite stores and wait on them for seconds) weighed as if ten times
 * as large: largest first, each to the lightest shard so far. Deterministic: the same files give
 * the same shards.
 */
import { statSync } from 'node:fs';

export function shardFiles(files: readonly string[], count: number, sizeOf = (file: string) => statSync(file).size): string[][] {
  const weighed = files.map((file) => ({ file, weight: sizeOf(file) * (file.includes('.contract.') ? 10 : 1) }));
  weighed.sort((a, b) => b.weight - a.weight || a.file.localeCompare(b.file));
  const shards = Array.from({ length: Math.min(count, files.length) }, () => ({ files: [] as string[], weight: 0 }));
  for (const { file, weight } of weighed) {
    const lightest = shards.reduce((a, b) => (b.weight < a.weight ? b : a));
    lightest.files.push(file);
    lightest.weight += weight;
  }
  return shards.map((s) => s.files.sort());
}
