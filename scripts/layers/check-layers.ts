import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { APART, LAYERS } from './layers.ts';
import { type ImportEdge, readImports } from './read-imports.ts';

/** Files of src/ (absolute paths) and, for each, the files of src/ it imports. */
export type ImportGraph = ReadonlyMap<string, readonly ImportEdge[]>;

export interface Climb {
  from: string;
  to: string;
  typeOnly: boolean;
  why: string;
}

/** The top folder of a path under `root` (`src/governance/keys/x.ts` -> `governance`). */
function folderOf(root: string, file: string): string {
  return relative(root, file).split(sep)[0] ?? '';
}

/** Layer index of a folder: 0 is the top. Undefined for a folder the list does not name. */
function layerIndex(layers: readonly (readonly string[])[], folder: string): number | undefined {
  const index = layers.findIndex((layer) => layer.includes(folder));
  return index === -1 ? undefined : index;
}

/** Why an import from folder `from` to folder `to` is refused, or null when it is allowed. */
export function refusal(
  layers: readonly (readonly string[])[],
  apart: readonly string[],
  from: string,
  to: string,
): string | null {
  if (from === to) return null;
  if (apart.includes(from) || apart.includes(to)) return `${apart.includes(from) ? from : to}/ stands apart`;
  const a = layerIndex(layers, from);
  const b = layerIndex(layers, to);
  if (a === undefined || b === undefined) return `${a === undefined ? from : to}/ is in no layer of scripts/layers/layers.ts`;
  if (a === b) return `${from}/ and ${to}/ share a layer: share through a layer below both`;
  if (b < a) return `${to}/ is above ${from}/`;
  return null;
}

/** Every import whose target folder the importing folder may not use (type-only imports included). */
export function findClimbs(
  root: string,
  graph: ImportGraph,
  layers: readonly (readonly string[])[] = LAYERS,
  apart: readonly string[] = APART,
): Climb[] {
  const climbs: Climb[] = [];
  for (const [from, edges] of graph) {
    for (const edge of edges) {
      const why = refusal(layers, apart, folderOf(root, from), folderOf(root, edge.to));
      if (why) climbs.push({ from, to: edge.to, typeOnly: edge.typeOnly, why });
    }
  }
  return climbs;
}

/**
 * The circles of the file graph (its strongly connected components of two files or more, and a
 * file that imports itself), each as its files in a stable order. Tarjan's algorithm, iterative so
 * a deep import chain cannot overflow the stack.
 */
export function findCircles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let next = 0;
  const targets = (file: string) => (graph.get(file) ?? []).map((e) => e.to).filter((to) => graph.has(to));
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { file: string; edges: string[]; at: number }[] = [];
    const open = (file: string) => {
      index.set(file, next);
      low.set(file, next);
      next += 1;
      stack.push(file);
      onStack.add(file);
      work.push({ file, edges: targets(file), at: 0 });
    };
    open(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      if (top.at < top.edges.length) {
        const to = top.edges[top.at++]!;
        if (!index.has(to)) open(to);
        else if (onStack.has(to)) low.set(top.file, Math.min(low.get(top.file)!, index.get(to)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.file, Math.min(low.get(parent.file)!, low.get(top.file)!));
      if (low.get(top.file) !== index.get(top.file)) continue;
      const component: string[] = [];
      let file: string;
      do {
        file = stack.pop()!;
        onStack.delete(file);
        component.push(file);
      } while (file !== top.file);
      const selfImport = targets(top.file).includes(top.file);
      if (component.length > 1 || selfImport) circles.push(component.sort());
    }
  }
  return circles;
}

/** The source files of a folder, tests left out (a test may reach into any layer to set up its case). */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.tsx?$/.test(e.name) && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

export function readGraph(root: string): ImportGraph {
  const files = sourceFiles(root);
  return new Map(files.map((file) => [file, readImports(file)]));
}

function main(): void {
  const root = join(import.meta.dirname, '..', '..', 'src');
  const graph = readGraph(root);
  const show = (file: string) => relative(join(root, '..'), file);
  const climbs = findClimbs(root, graph);
  const circles = findCircles(graph);
  for (const c of climbs) console.error(`${show(c.from)} -> ${show(c.to)}${c.typeOnly ? ' (types)' : ''}: ${c.why}`);
  for (const circle of circles) console.error(`circle: ${circle.map(show).join(' -> ')}`);
  if (climbs.length + circles.length > 0) {
    console.error(`\n${climbs.length} import(s) against the layers, ${circles.length} circle(s): see scripts/layers/layers.ts`);
    process.exit(1);
  }
  console.log(`layers: ${graph.size} files of src/, every import points down, no circle`);
}

if (import.meta.main) main();
