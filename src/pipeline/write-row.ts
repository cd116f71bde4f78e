import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { Admission } from '../admission/admission.ts';
import type { AccountingDeps } from './request-accounting.ts';

/** Where a row goes: the ledger, and metrics and the log line. */
export interface RowSink {
  accounting: Pick<AccountingDeps, 'ledger' | 'log'>;
  observe?: (record: LedgerRecord) => void;
}

/**
 * The one row of a request that runs outside the model lifecycle (a Files or Batch API call, a
 * Realtime session): its admission settled with it first (the slot given back, the budget charged
 * the real cost, which may amend the row), then written and observed, whatever the settlement did.
 */
export function writeRow(sink: RowSink, admission: Admission | undefined, row: LedgerRecord): void {
  let record = row;
  try {
    record = admission?.settle(record) ?? record;
  } finally {
    try {
      sink.accounting.ledger?.write(record);
    } catch (err) {
      sink.accounting.log(`ledger: could not queue the record of ${record.requestId}: ${(err as Error).message}`);
    }
    sink.observe?.(record);
  }
}
