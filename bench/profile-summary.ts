/** The parts of a V8 `.cpuprofile` (node --cpu-prof) the summary reads. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileRow {
  name: string;
  /** Repo-relative file (or `node:…`, `undici/…`) and 1-based line. */
  where: string;
  ms: number;
  /** Share of the busy (non-idle) time. */
  share: number;
}

export interface ProfileSummary {
  busyMs: number;
  /** Streamed requests the gateway served while profiled, for per-request numbers. */
  requests: number | undefined;
  /** Top functions by self time. */
  self: ProfileRow[];
  /** sluice's own functions (src/) by inclusive time: everything they and their callees cost. */
  inclusive: ProfileRow[];
  /** Self time by area: sluice, each package, Node internals, GC, native/program. */
  areas: { area: string; ms: number; share: number }[];
}

const ROOT = new URL('..', import.meta.url).href;

function where(url: string, line: number): string {
  if (!url) return '';
  let file = url.startsWith(ROOT) ? url.slice(ROOT.length) : url;
  file = file.replace(/^node_modules\//, '');
  return `${file}:${line + 1}`;
}

function area(url: string, name: string): string {
  if (name === '(idle)' || name === '(garbage collector)' || name === '(program)') return name;
  if (!url) return '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const file = url.startsWith(ROOT) ? url.slice(ROOT.length) : url;
  const pkg = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (pkg) return pkg[1];
  return file.split('/')[0] === 'src' ? 'sluice src/' : file.split('/')[0];
}

/**
 * Self and inclusive time per function. A sample's duration is the gap to the next sample, as in
 * Chrome DevTools; `(idle)` is left out of the busy time.
 */
export function summarizeProfile(profile: CpuProfile, options: { top: number; requests?: number }): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (id: number) => {
    const f = byId.get(id)!.callFrame;
    return `${f.functionName || '(anonymous)'}\t${where(f.url, f.lineNumber)}`;
  };

  const selfUs = new Map<string, number>();
  const inclusiveUs = new Map<string, number>();
  const areaUs = new Map<string, number>();
  const stacks = new Map<number, string[]>();
  const stackOf = (id: number): string[] => {
    let keys = stacks.get(id);
    if (!keys) {
      const up = parent.get(id);
      const own = byId.get(id)!.callFrame.url.startsWith(`${ROOT}src/`) ? [keyOf(id)] : [];
      const above = up === undefined ? [] : stackOf(up);
      keys = [...new Set([...above, ...own])];
      stacks.set(id, keys);
    }
    return keys;
  };

  let busyUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    const us = profile.timeDeltas[i + 1] ?? 0;
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    busyUs += us;
    const key = keyOf(id);
    selfUs.set(key, (selfUs.get(key) ?? 0) + us);
    const a = area(frame.url, frame.functionName);
    areaUs.set(a, (areaUs.get(a) ?? 0) + us);
    for (const k of stackOf(id)) inclusiveUs.set(k, (inclusiveUs.get(k) ?? 0) + us);
  }

  const rows = (map: Map<string, number>): ProfileRow[] =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, options.top)
      .map(([key, us]) => {
        const [name, at] = key.split('\t');
        return { name, where: at, ms: us / 1000, share: busyUs > 0 ? us / busyUs : 0 };
      });
  return {
    busyMs: busyUs / 1000,
    requests: options.requests,
    self: rows(selfUs),
    inclusive: rows(inclusiveUs),
    areas: [...areaUs]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ area: name, ms: us / 1000, share: busyUs > 0 ? us / busyUs : 0 })),
  };
}

export function formatProfileSummary(summary: ProfileSummary): string {
  const perRequest = (ms: number) =>
    summary.requests ? `${((ms * 1000) / summary.requests).toFixed(2).padStart(8)} us/req` : '';
  const pct = (share: number) => `${(share * 100).toFixed(1).padStart(5)}%`;
  const table = (rows: ProfileRow[]) =>
    rows.map((r) => `  ${pct(r.share)} ${perRequest(r.ms)}  ${r.name}  ${r.where}`).join('\n');
  const head = summary.requests
    ? `busy ${summary.busyMs.toFixed(0)} ms over ${summary.requests} sluice requests = ${((summary.busyMs * 1000) / summary.requests).toFixed(1)} us/req (profiler overhead included)`
    : `busy ${summary.busyMs.toFixed(0)} ms`;
  return [
    head,
    'self time by area:',
    summary.areas.map((a) => `  ${pct(a.share)} ${perRequest(a.ms)}  ${a.area}`).join('\n'),
    'top functions by self time:',
    table(summary.self),
    "sluice's functions by inclusive time (them and their callees):",
    table(summary.inclusive),
  ].join('\n');
}
