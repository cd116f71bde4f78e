import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findCircles, findClimbs, type ImportGraph, refusal } from './check-layers.ts';
import { readImports } from './read-imports.ts';

const LAYERS = [['server'], ['pipeline'], ['governance', 'resume'], ['errors']];
const graphOf = (edges: Record<string, [string, boolean?][]>): ImportGraph =>
  new Map(Object.entries(edges).map(([from, to]) => [from, to.map(([file, typeOnly = false]) => ({ to: file, typeOnly }))]));

describe('the layer check', () => {
  it('allows an import down any number of layers, and within a folder', () => {
    assert.equal(refusal(LAYERS, [], 'server', 'errors'), null);
    assert.equal(refusal(LAYERS, [], 'governance', 'governance'), null);
  });

  it('refuses an import that climbs, one between folders of a layer, and an unknown folder', () => {
    assert.match(refusal(LAYERS, [], 'governance', 'pipeline')!, /pipeline\/ is above governance\//);
    assert.match(refusal(LAYERS, [], 'resume', 'governance')!, /share a layer/);
    assert.match(refusal(LAYERS, [], 'server', 'mystery')!, /mystery\/ is in no layer/);
    assert.match(refusal(LAYERS, ['client'], 'client', 'errors')!, /client\/ stands apart/);
  });

  it('counts a type-only import that climbs (a type is a dependency too)', () => {
    const graph = graphOf({ '/r/governance/a.ts': [['/r/pipeline/b.ts', true]], '/r/pipeline/b.ts': [] });
    const climbs = findClimbs('/r', graph, LAYERS, []);
    assert.deepEqual(
      climbs.map((c) => [c.from, c.to, c.typeOnly]),
      [['/r/governance/a.ts', '/r/pipeline/b.ts', true]],
    );
  });

  it('finds every circle of files, a file that imports itself included, and nothing in a tree', () => {
    const graph = graphOf({
      '/a.ts': [['/b.ts']],
      '/b.ts': [['/c.ts'], ['/d.ts']],
      '/c.ts': [['/a.ts', true]],
      '/d.ts': [['/e.ts']],
      '/e.ts': [],
      '/self.ts': [['/self.ts']],
    });
    assert.deepEqual(
      findCircles(graph).sort((a, b) => a[0]!.localeCompare(b[0]!)),
      [['/a.ts', '/b.ts', '/c.ts'], ['/self.ts']],
    );
    assert.deepEqual(findCircles(graphOf({ '/a.ts': [['/b.ts']], '/b.ts': [] })), []);
  });

  it('reads type-only imports, re-exports and literal dynamic imports, and skips packages', () => {
    const source = [
      "import type { A } from './a.ts';",
      "import { type B, c } from '../b.ts';",
      "import './side-effect.ts';",
      "import { z } from 'zod';",
      "export type { D } from './d.ts';",
      "const e = await import('./e.ts');",
    ].join('\n');
    assert.deepEqual(readImports('/x/y/f.ts', source), [
      { to: '/x/y/a.ts', typeOnly: true },
      { to: '/x/b.ts', typeOnly: false },
      { to: '/x/y/side-effect.ts', typeOnly: false },
      { to: '/x/y/d.ts', typeOnly: true },
      { to: '/x/y/e.ts', typeOnly: false },
    ]);
  });
});
