import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatLedgerPage, ledgerPageBench } from './ledger-paging.ts';

describe('ledger paging bench', () => {
  it('seeds a small ledger, checks every page against the seeded rows and prints the table', async () => {
    // ledgerPageBench throws on any page whose rows differ from the seeded rows' right answer.
    const result = await ledgerPageBench({ rows: 20_000, runs: 1 });
    assert.equal(result.rows, 20_000);
    assert.equal(result.pages.length, 19);
    for (const page of result.pages) {
      assert.ok(page.rows > 0, `${page.name}: no rows`);
      assert.ok(page.bestMs >= 0 && page.medianMs >= page.bestMs, page.name);
    }
    // Full pages wherever 20,000 rows hold more than 50 matches.
    const full = result.pages.filter((p) => !/key=|one day|get\(|write order .*model=/.test(p.name));
    assert.deepEqual(
      full.map((p) => [p.name, p.rows]),
      full.map((p) => [p.name, 50]),
    );
    const table = formatLedgerPage(result).split('\n');
    assert.match(table[0], /^ledger paging: 20,000 rows in an embedded SQLite store \(\d+ MiB\), seeded in [\d.]+ s/);
    assert.match(table[1], /\| page \(limit 50\) +\| rows \| best ms \| median ms \| CPU ms \| < 50 ms \|/);
    for (const page of result.pages)
      assert.ok(
        table.some((line) => line.startsWith(`| ${page.name} `) && /(PASS|FAIL) \|$/.test(line)),
        page.name,
      );
    assert.match(table.at(-1) ?? '', /^slowest median: [\d.]+ ms \(target < 50 ms\): (PASS|FAIL)$/);
  });
});
