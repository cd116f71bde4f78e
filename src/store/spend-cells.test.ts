import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ledgerRecord } from '../../test/helpers/ledger-records.ts';
import { acrossKeys, OTHER_TAG, summarizeSpend } from './spend-cells.ts';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 28, 10);

describe('summarizeSpend', () => {
  const records = [
    ledgerRecord({ requestId: 'a', createdAt: T0 + 1, projectId: 'p', keyId: 'k', costUsd: 0.5, tags: ['x', 'y'] }),
    ledgerRecord({ requestId: 'b', createdAt: T0 + 2, projectId: 'p', keyId: 'k', costUsd: 0.25, outcome: 'error' }),
    ledgerRecord({ requestId: 'c', createdAt: T0 + HOUR, costUsd: 1 }),
  ];

  it('counts each request once per period and project/key/model; the master key is ""', () => {
    const cells = summarizeSpend(records, HOUR, false);
    assert.deepEqual(
      cells.map((c) => [c.start, c.projectId, c.keyId, c.requests, c.errors, c.costUsd, 'tag' in c]),
      [
        [T0, 'p', 'k', 2, 1, 0.75, false],
        [T0 + HOUR, '', '', 1, 0, 1, false],
      ],
    );
  });

  it('leaves dry runs out: they spend nothing', () => {
    const dry = ledgerRecord({ requestId: 'd', createdAt: T0 + 3, projectId: 'p', keyId: 'k', dryRun: true });
    assert.deepEqual(summarizeSpend([...records, dry], HOUR, false), summarizeSpend(records, HOUR, false));
  });

  it("counts a request in each of its tags' cells, an untagged one in ''", () => {
    const cells = summarizeSpend(records, HOUR, true);
    assert.deepEqual(
      cells.map((c) => [c.start, c.tag, c.requests, c.costUsd]),
      [
        [T0, '', 1, 0.25],
        [T0, 'x', 1, 0.5],
        [T0, 'y', 1, 0.5],
        [T0 + HOUR, '', 1, 1],
      ],
    );
  });

  it('bounds the cells of a period: past 100 tags they count as (other), past 50 models as other/other', () => {
    const many = Array.from({ length: 130 }, (_, i) => ledgerRecord({ requestId: `r${i}`, createdAt: T0, model: `m${i}`, tags: [`t${i}`] }));
    const tagged = summarizeSpend(many, HOUR, true);
    assert.equal(new Set(tagged.map((c) => c.tag)).size, 101);
    assert.equal(
      tagged.filter((c) => c.tag === OTHER_TAG).reduce((a, c) => a + c.requests, 0),
      30,
    );
    const models = summarizeSpend(many, HOUR, false);
    assert.equal(models.length, 51);
    assert.equal(models.find((c) => c.model === 'other')?.requests, 80);
    assert.equal(
      models.reduce((a, c) => a + c.requests, 0),
      130,
    );
  });

  it('sums the untagged cells over keys and provider keys, per period, project and provider/model', () => {
    const mixed = [
      ...records,
      ledgerRecord({ requestId: 'd', createdAt: T0 + 3, projectId: 'p', keyId: 'k2', providerKey: 'team-a', costUsd: 0.125, cachedInputTokens: 4 }),
      ledgerRecord({ requestId: 'e', createdAt: T0 + 4, projectId: 'p', keyId: 'k', model: 'other-model', costUsd: 2 }),
    ];
    const cells = acrossKeys(summarizeSpend(mixed, HOUR, false));
    assert.deepEqual(
      cells.map((c) => [c.start, c.projectId, c.keyId, c.providerKey, c.model, c.requests, c.errors, c.cachedInputTokens, c.costUsd]),
      [
        [T0, 'p', '', '', 'gpt-4o-mini', 3, 1, 4, 0.875],
        [T0, 'p', '', '', 'other-model', 1, 0, 0, 2],
        [T0 + HOUR, '', '', '', 'gpt-4o-mini', 1, 0, 0, 1],
      ],
    );
    // What the batch gives with no keys nor provider keys at all.
    assert.deepEqual(
      cells,
      summarizeSpend(
        mixed.map((r) => ({ ...r, keyId: null, providerKey: null })),
        HOUR,
        false,
      ),
    );
  });
});
