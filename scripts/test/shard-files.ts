/**
 * Splits test files into `count` shards of similar cost: the costliest first, each to the
 * cheapest shard so far (longest processing time first). A file's cost is its wall time in the
 * last recorded run (`scripts/test/file-seconds.json`, written by `node scripts/test/run.ts
 * --record`): file sizes, which it replaced, put a 104 s file with a 30 s one and left a shard
 * running 80 s after the others. A file not recorded yet (a new one) costs the median of the
 * recorded files. Every file also costs LOAD_SECONDS, its loading, which its tests' times leave
 * out. Deterministic: the same files and times give the same shards.
 */
/**
 * What loading a file costs in a shared process beyond its tests' times (importing it and what
 * it imports first, type stripping included). Without it the 240 near-zero unit files went to one
 * shard, which ended 15-18 s after the other five: ~0.08 s a file.
 */
const LOAD_SECONDS = 0.08;

export function shardFiles(files: readonly string[], count: number, seconds: Readonly<Record<string, number>>): string[][] {
  const known = files.map((file) => seconds[file]).filter((s) => s !== undefined);
  const typical = known.length > 0 ? [...known].sort((a, b) => a - b)[Math.floor(known.length / 2)] : 1;
  const weighed = files.map((file) => ({ file, cost: (seconds[file] ?? typical) + LOAD_SECONDS }));
  weighed.sort((a, b) => b.cost - a.cost || a.file.localeCompare(b.file));
  const shards = Array.from({ length: Math.min(count, files.length) }, () => ({ files: [] as string[], cost: 0 }));
  for (const { file, cost } of weighed) {
    const cheapest = shards.reduce((a, b) => (b.cost < a.cost ? b : a));
    cheapest.files.push(file);
    cheapest.cost += cost;
  }
  return shards.map((s) => s.files.sort());
}
