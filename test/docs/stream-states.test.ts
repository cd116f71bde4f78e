import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { TRANSITIONS as STREAM } from '../../src/pipeline/stream-states.ts';
import { TRANSITIONS as ATTEMPTS } from '../../src/routing/attempt-states.ts';

// docs/streams/lifecycle.md has the state tables of the stream loop and of a route's attempts; the
// code's TRANSITIONS are the same tables as data. Each row of a page's table (state, event, next
// state, what is sent) must be a transition of the code, and each transition a row.
const page = readFileSync(new URL('../../docs/streams/lifecycle.md', import.meta.url), 'utf8');
const sections = new Map(page.split(/^## /m).map((section) => [section.slice(0, section.indexOf('\n')), section] as const));

/** `state --event--> next` for each row of the table of the page's section `heading`. */
function documented(heading: string): string[] {
  const section = sections.get(heading);
  assert.ok(section, `docs/streams/lifecycle.md has no section "## ${heading}"`);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [state, event, to] = line
        .split('|')
        .slice(1, 4)
        .map((cell) => cell.trim().replace(/^`|`$/g, ''));
      return `${state} --${event}--> ${to}`;
    })
    .sort();
}

function coded(table: Record<string, Record<string, string | undefined>>): string[] {
  return Object.entries(table)
    .flatMap(([state, row]) => Object.entries(row).map(([event, to]) => `${state} --${event}--> ${to}`))
    .sort();
}

describe('docs/streams/lifecycle.md', () => {
  it("the stream's table is stream-states.ts's TRANSITIONS, row for row", () => {
    assert.deepEqual(documented('The stream'), coded(STREAM), 'update the table of "The stream" and src/pipeline/stream-states.ts together');
  });

  it("the attempts' table is attempt-states.ts's TRANSITIONS, row for row", () => {
    assert.deepEqual(
      documented("A routed stream's attempts"),
      coded(ATTEMPTS),
      `update the table of "A routed stream's attempts" and src/routing/attempt-states.ts together`,
    );
  });

  it('names every state of the code in its list of states', () => {
    for (const [heading, table] of [
      ['The stream', STREAM],
      ["A routed stream's attempts", ATTEMPTS],
    ] as const) {
      const list = (sections.get(heading) ?? '').split('Events:')[0];
      const missing = Object.keys(table).filter((state) => !list.includes(`\`${state}\``));
      assert.deepEqual(missing, [], `describe these states under "## ${heading}"`);
    }
  });
});
