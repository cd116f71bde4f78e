import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderReliability } from './render.ts';

const base = { commit: 'abc1234', node: 'v24', machine: '2 × cpu' };

describe('the reliability report', () => {
  it('states the worst spend against its budget and the rows lost, from what the fault tests measured', () => {
    const text = renderReliability({
      ...base,
      observations: [
        { kind: 'spend', case: 'n=64, not streamed', spentUsd: 0.0099, limitUsd: 0.01, allowedUsd: 0.01 },
        { kind: 'spend', case: 'Redis slow, fail_open', spentUsd: 0.015, limitUsd: 0.01, allowedUsd: 0.02 },
        { kind: 'rows', case: 'kill -9 mid-stream, journal on', requests: 40, rows: 40 },
      ],
    });
    assert.match(
      text,
      /\| money under faults \| .* \(2 measured cases\) \| worst spend 150\.0% of its budget \| yes: none past what its case allows \|/,
    );
    assert.match(text, /\| ledger rows lost under faults \| .* \(1 cases, 40 requests\) \| 0 lost \| yes: zero \|/);
    assert.match(text, /\| Redis slow, fail_open \| \$0\.015000 \| \$0\.01 \| \$0\.02 \| 150\.0% \|/);
  });

  it('says no when a case spent past what it allows or lost a row', () => {
    const text = renderReliability({
      ...base,
      observations: [
        { kind: 'spend', case: 'n=8', spentUsd: 0.079, limitUsd: 0.01, allowedUsd: 0.01 },
        { kind: 'rows', case: 'kill -9, journal off', requests: 40, rows: 31 },
      ],
    });
    assert.match(text, /no: 1 past/);
    assert.match(text, /\| 9 lost \| no \|/);
  });
});
