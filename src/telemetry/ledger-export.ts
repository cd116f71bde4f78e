import type { Logger } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { ledgerLogRecord } from './ledger-log-record.ts';

export interface LedgerExportSettings {
  url: string;
  headers: Record<string, string>;
  batchSize: number;
  maxQueue: number;
  flushIntervalMs: number;
  timeoutMs: number;
  /** The stored prompt and completion go in too. */
  content: boolean;
  serviceName: string;
  /** Where a failing or recovered collector is said (once per change, not per export). */
  log?: (message: string) => void;
}

/** What the export did, for /metrics (sluice_log_export_exported_total, sluice_log_export_dropped_total). */
export interface LedgerExportStats {
  exported: number;
  /** The queue was full: the collector is slow or away. */
  droppedQueueFull: number;
  /** An export that failed, retries included (refused, timed out, unreachable). */
  droppedFailed: number;
}

/**
 * Ledger rows, once stored, copied to an OpenTelemetry collector as log records
 * (docs/operations/analytics-export.md): a BatchLogRecordProcessor over the OTLP/HTTP exporter,
 * which retries 429, 502, 503 and 504 with backoff within its timeout. Best effort: the store has
 * the row already, so a slow or absent collector costs only queued memory, bounded by
 * `maxQueue`; every record past it or in a failed export is counted, never retried further.
 * Its own logger provider, never registered globally (two gateways in one process, the tests).
 */
export class LedgerExport {
  private readonly provider: LoggerProvider;
  private readonly logger: Logger;
  private readonly content: boolean;
  private readonly maxQueue: number;
  private readonly log: (message: string) => void;
  /** The last export failed: the next success says the collector is back. */
  private failing = false;
  private readonly counts = { emitted: 0, handedOver: 0, exported: 0, droppedQueueFull: 0, droppedFailed: 0, closed: false };

  constructor(exporter: LogRecordExporter, settings: Omit<LedgerExportSettings, 'url' | 'headers'>) {
    this.content = settings.content;
    this.maxQueue = settings.maxQueue;
    this.log = settings.log ?? (() => {});
    const counting = this.counting(exporter);
    this.provider = new LoggerProvider({
      resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
      processors: [
        new BatchLogRecordProcessor({
          exporter: counting,
          maxExportBatchSize: Math.min(settings.batchSize, settings.maxQueue),
          maxQueueSize: settings.maxQueue,
          scheduledDelayMillis: settings.flushIntervalMs,
          // The exporter's own timeout ends an export first; this only bounds an exporter that never answers.
          exportTimeoutMillis: settings.timeoutMs + 1_000,
        }),
      ],
    });
    this.logger = this.provider.getLogger('sluice');
  }

  /** A batch the ledger writer has stored (LedgerWriter.onWritten): queued, never awaited. */
  export(records: readonly LedgerRecord[]): void {
    if (this.counts.closed) {
      this.counts.droppedFailed += records.length;
      return;
    }
    for (const record of records) {
      // The processor's queue holds what was emitted and not yet handed to the exporter: full,
      // it would drop the record silently, so the same bound is kept here, where it is counted.
      if (this.counts.emitted - this.counts.handedOver >= this.maxQueue) {
        this.counts.droppedQueueFull++;
        continue;
      }
      this.counts.emitted++;
      this.logger.emit(ledgerLogRecord(record, this.content));
    }
  }

  get stats(): LedgerExportStats {
    const { exported, droppedQueueFull, droppedFailed } = this.counts;
    return { exported, droppedQueueFull, droppedFailed };
  }

  /**
   * Sends what is queued and stops, for at most `timeoutMs` (gateway shutdown): a collector that
   * hangs must not hold the exit. What could not be sent is counted as dropped.
   */
  async shutdown(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.provider.shutdown().catch(() => undefined), late]);
    clearTimeout(timer);
    // Still queued or in flight: counted as dropped now, and a late answer is not counted again.
    this.counts.closed = true;
    this.counts.droppedFailed += Math.max(0, this.counts.emitted - this.counts.exported - this.counts.droppedFailed);
  }

  private settled(count: number, result: ExportResult): void {
    const ok = result.code === ExportResultCode.SUCCESS;
    if (ok) this.counts.exported += count;
    else this.counts.droppedFailed += count;
    if (ok === !this.failing) return;
    this.failing = !ok;
    this.log(
      ok
        ? `ledger export: the collector accepts records again (${this.counts.droppedFailed} record(s) failed to export since start)`
        : `ledger export: an export of ${count} record(s) failed (${result.error?.message ?? 'no reason given'}); ` +
            'they stay in the ledger only (counted in sluice_log_export_dropped_total; logged again once an export succeeds)',
    );
  }

  /** The exporter, counting what it is handed and how each export ended. */
  private counting(exporter: LogRecordExporter): LogRecordExporter {
    const counts = this.counts;
    return {
      export: (logs: ReadableLogRecord[], done: (result: ExportResult) => void): void => {
        counts.handedOver += logs.length;
        exporter.export(logs, (result) => {
          if (!counts.closed) this.settled(logs.length, result);
          done(result);
        });
      },
      forceFlush: () => exporter.forceFlush(),
      shutdown: () => exporter.shutdown(),
    };
  }
}

/** OTLP/HTTP with JSON bodies to `url` (the exporter adds OTEL_EXPORTER_OTLP_LOGS_HEADERS to `headers`). */
export function otlpLedgerExport(settings: LedgerExportSettings): LedgerExport {
  const exporter = new OTLPLogExporter({
    url: settings.url,
    headers: settings.headers,
    timeoutMillis: settings.timeoutMs,
  });
  return new LedgerExport(exporter, settings);
}
