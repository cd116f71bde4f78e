import { type Kysely, sql } from 'kysely';
import type { Database } from '../../src/store/database.ts';

/** What the generated ledger looks like: the names the bench's queries then ask for. */
export const SHAPE = {
  keys: 2_000,
  projects: 100,
  providers: ['openai', 'anthropic', 'google', 'bedrock'],
  models: [
    'gpt-4o-mini',
    'gpt-4.1',
    'o4-mini',
    'claude-sonnet-4-5',
    'claude-haiku-4-5',
    'gemini-2.5-flash',
    'gemini-2.5-pro',
    'llama-3.3-70b',
    'mistral-large',
    'text-embedding-3-small',
    'gpt-5',
    'gpt-5-mini',
  ],
  /** The rows are spread evenly, oldest first (as they are written), over this many days up to now. */
  days: 90,
} as const;

/** Rows per INSERT ... SELECT: one statement's transaction stays a few hundred MB of WAL at most. */
const CHUNK = 500_000;

const textArray = (values: readonly string[]) => sql.raw(`array[${values.map((v) => `'${v}'`).join(',')}]`);

/**
 * Fills the ledger with `rows` rows of a real one's shape, in PostgreSQL itself (INSERT ...
 * SELECT over generate_series, the rows never cross the wire): request ids of sluice's length
 * in time order, 2,000 keys in 100 projects, 12 models of 4 providers, a streamed chat request's
 * token counts, cost and timings, 3% errors with their message, an upstream request id. A
 * multiplicative hash of the row number stands for randomness, so a run is repeatable.
 */
export async function generateRows(
  db: Kysely<Database>,
  rows: number,
  now: number,
  progress: (done: number) => void,
): Promise<void> {
  const start = now - SHAPE.days * 86_400_000;
  const stepMs = (SHAPE.days * 86_400_000) / rows;
  for (let from = 1; from <= rows; from += CHUNK) {
    const to = Math.min(from + CHUNK - 1, rows);
    await sql`
      insert into ledger (request_id, created_at, key_id, project_id, provider, model, requested_model, surface, streamed,
        input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, usage_source, cost_usd,
        price_known, ttft_ms, latency_ms, upstream_status, outcome, error_type, error_code, error_message, finish_reason,
        upstream_request_id, overhead_ms)
      select
        lpad(to_hex(t), 11, '0') || lpad(to_hex(g), 9, '0'),
        t,
        'key_' || (h % ${SHAPE.keys}),
        'proj_' || (h % ${SHAPE.keys} % ${SHAPE.projects}),
        (${textArray(SHAPE.providers)})[1 + (h / 11) % ${SHAPE.models.length} % ${SHAPE.providers.length}],
        (${textArray(SHAPE.models)})[1 + (h / 11) % ${SHAPE.models.length}],
        (${textArray(SHAPE.models)})[1 + (h / 11) % ${SHAPE.models.length}],
        (array['chat', 'chat', 'responses', 'messages'])[1 + (h / 13) % 4],
        case when h % 5 = 0 then 0 else 1 end,
        200 + h % 4000, case when h % 3 = 0 then h % 1000 else 0 end, 0, 20 + h % 800, case when h % 4 = 0 then h % 300 else 0 end,
        'provider',
        (200 + h % 4000) * 0.00000015 + (20 + h % 800) * 0.0000006,
        1,
        150 + h % 900, 400 + h % 9000,
        case when err then 502 else 200 end,
        case when err then 'error' else 'ok' end,
        case when err then 'upstream_error' end,
        case when err then 'upstream_error' end,
        case when err then 'The upstream answered 502 Bad Gateway' end,
        case when err then null else 'stop' end,
        'chatcmpl-' || lpad(to_hex(h), 12, '0') || lpad(to_hex(g), 12, '0'),
        0.3 + (h % 100) / 100.0
      from (
        select g, (${start}::bigint + g * ${stepMs}::double precision)::bigint as t, (g * 2654435761) % 4294967291 as h, (g * 2654435761) % 4294967291 % 100 < 3 as err
        from generate_series(${from}::bigint, ${to}::bigint) g
      ) s`.execute(db);
    progress(to);
  }
}
