import { type Kysely, sql } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';
import { engineOf } from './engine-of.ts';
import { partitionLedgerDown, partitionLedgerUp } from './partition-ledger.ts';
import { rollupProjectsDown, rollupProjectsUp } from './rollup-projects-migration.ts';
import {
  backfillRollup,
  createMinutesAcrossProjects,
  dropMinutesAcrossProjects,
  fillMinutesAcrossProjects,
  HISTOGRAM_COLUMNS,
  MINUTES_KEPT_MS,
} from './rollup-tables.ts';
import {
  backfillSpend,
  createSpendProjectTable,
  createSpendTable,
  fillSpendProjectDays,
  SPEND_PROJECT_DAYS,
  SPEND_ROLLUPS,
} from './spend-tables.ts';

/**
 * Migrations in code, in order; Kysely's Migrator records which ran (in both engines). Column
 * types are the common subset: text, bigint, integer and double precision mean the same thing
 * to PostgreSQL and (by affinity) to SQLite.
 */
const USAGE_DETAIL_COLUMNS = [
  'audio_input_tokens',
  'audio_output_tokens',
  'accepted_prediction_tokens',
  'rejected_prediction_tokens',
];

const migrations: Record<string, Migration> = {
  '0001_ledger': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('ledger')
        .addColumn('request_id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('key_id', 'text')
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('requested_model', 'text', (c) => c.notNull())
        .addColumn('surface', 'text', (c) => c.notNull())
        .addColumn('streamed', 'integer', (c) => c.notNull())
        .addColumn('input_tokens', 'bigint', (c) => c.notNull())
        .addColumn('cached_input_tokens', 'bigint', (c) => c.notNull())
        .addColumn('cache_write_tokens', 'bigint', (c) => c.notNull())
        .addColumn('output_tokens', 'bigint', (c) => c.notNull())
        .addColumn('reasoning_tokens', 'bigint', (c) => c.notNull())
        .addColumn('usage_source', 'text', (c) => c.notNull())
        .addColumn('cost_usd', 'double precision', (c) => c.notNull())
        .addColumn('price_known', 'integer', (c) => c.notNull())
        .addColumn('ttft_ms', 'integer')
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('upstream_status', 'integer')
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('error_type', 'text')
        .addColumn('error_code', 'text')
        .addColumn('error_message', 'text')
        .addColumn('finish_reason', 'text')
        .addColumn('prompt', 'text')
        .addColumn('completion', 'text')
        .execute();
      await db.schema.createIndex('ledger_created_at').on('ledger').columns(['created_at', 'request_id']).execute();
      await db.schema.createIndex('ledger_model').on('ledger').columns(['model', 'created_at']).execute();
      await db.schema.createIndex('ledger_provider').on('ledger').columns(['provider', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('ledger').execute();
    },
  },
  '0002_responses': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('responses')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('conversation', 'text', (c) => c.notNull())
        .addColumn('response', 'text', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('responses').execute();
    },
  },
  /**
   * The order records were written in, for `GET /v1/requests?order=asc&after=` (following the
   * log). Records are written when their request ends, so write order is end order. SQLite has
   * it already: rowid grows with every insert, and writers are serialized. On PostgreSQL a
   * sequence alone is not enough: with several writers (instances) a transaction holding
   * sequence value 100 can commit after one holding 101, and a reader that moved past 101 would
   * never see 100. So each row also records its transaction id, and readers only take rows whose
   * transaction is older than every transaction still running (write-order.ts).
   * The requested_model index serves the model filter, which matches the name the client used.
   */
  '0003_ledger_write_order': {
    async up(db: Kysely<unknown>) {
      if (engineOf(db) === 'postgres') {
        await sql`alter table ledger add column seq bigserial`.execute(db);
        await sql`alter table ledger add column txid bigint not null default txid_current()`.execute(db);
        await db.schema.createIndex('ledger_write_order').on('ledger').columns(['txid', 'seq']).execute();
      }
      await db.schema.createIndex('ledger_requested_model').on('ledger').columns(['requested_model', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('ledger_requested_model').execute();
      if (engineOf(db) === 'postgres') {
        await db.schema.dropIndex('ledger_write_order').execute();
        await sql`alter table ledger drop column txid, drop column seq`.execute(db);
      }
    },
  },
  /** Door rejections aggregated per minute (rejection-counter.ts), kept out of the ledger. */
  '0004_rejections': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('rejections')
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('surface', 'text', (c) => c.notNull())
        .addColumn('code', 'text', (c) => c.notNull())
        .addColumn('count', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('rejections_pk', ['window_start', 'surface', 'code'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('rejections').execute();
    },
  },
  /**
   * Governance (src/governance/keys): projects, their gateway-issued keys (only a keyed hash of
   * each secret is stored) and their endpoints; the ledger and stored responses learn which
   * project a request belonged to, so the request log can be scoped to the caller's project.
   * No foreign keys: SQLite enforces them only with a per-connection pragma, so the code checks
   * that a key's or an endpoint's project exists, the same way on both engines.
   */
  '0005_projects_keys_endpoints': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('projects')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('tier', 'text')
        .addColumn('budget_day_usd', 'double precision')
        .addColumn('budget_month_usd', 'double precision')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('previous_hash', 'text')
        .addColumn('previous_valid_until', 'bigint')
        .addColumn('tier', 'text')
        .addColumn('allowed_models', 'text')
        .addColumn('budget_day_usd', 'double precision')
        .addColumn('budget_month_usd', 'double precision')
        .addColumn('admin', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('revoked_at', 'bigint')
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createIndex('api_keys_project').on('api_keys').columns(['project_id', 'created_at']).execute();
      await db.schema
        .createTable('endpoints')
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('stream_profile', 'text')
        .addColumn('usage', 'text')
        .addColumn('error_style', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('endpoints_pk', ['project_id', 'name'])
        .execute();
      await db.schema.alterTable('ledger').addColumn('project_id', 'text').execute();
      await db.schema.createIndex('ledger_project').on('ledger').columns(['project_id', 'created_at']).execute();
      await db.schema.alterTable('responses').addColumn('project_id', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('responses').dropColumn('project_id').execute();
      await db.schema.dropIndex('ledger_project').execute();
      await db.schema.alterTable('ledger').dropColumn('project_id').execute();
      await db.schema.dropTable('endpoints').execute();
      await db.schema.dropTable('api_keys').execute();
      await db.schema.dropTable('projects').execute();
    },
  },
  /**
   * Limits and budgets (src/governance): the upstream's request id and the billing note on the
   * ledger; the spend of every budget window (key or project, day or month), added to by each
   * instance as its requests settle, read by all (src/governance/budgets/spend-store.ts).
   */
  '0006_budgets_upstream_request_id': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').addColumn('upstream_request_id', 'text').execute();
      await db.schema.alterTable('ledger').addColumn('billing', 'text').execute();
      await db.schema
        .createTable('budget_spend')
        .addColumn('window_id', 'text', (c) => c.primaryKey())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('period', 'text', (c) => c.notNull())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('spent_usd', 'double precision', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('budget_spend_subject').on('budget_spend').columns(['subject', 'window_start']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('budget_spend').execute();
      await db.schema.alterTable('ledger').dropColumn('billing').execute();
      await db.schema.alterTable('ledger').dropColumn('upstream_request_id').execute();
    },
  },
  /** What the upstream itself said when it failed a request, kept beside sluice's error code. */
  '0007_ledger_upstream_error': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').addColumn('upstream_error_type', 'text').execute();
      await db.schema.alterTable('ledger').addColumn('upstream_error_code', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').dropColumn('upstream_error_code').execute();
      await db.schema.alterTable('ledger').dropColumn('upstream_error_type').execute();
    },
  },
  /** Every target a routed request tried (src/routing/attempts.ts), as JSON text: read with its row, never queried. */
  '0008_ledger_attempts': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').addColumn('attempts', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').dropColumn('attempts').execute();
    },
  },
  /** An endpoint's choice for upstream `x_*` vendor events (stream.vendor_events); null keeps the config's. */
  '0009_endpoint_vendor_events': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('endpoints').addColumn('vendor_events', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('endpoints').dropColumn('vendor_events').execute();
    },
  },
  /** Audio and Predicted Outputs token counts (OpenAI's usage details): null when the upstream did not report them. */
  '0010_ledger_usage_details': {
    async up(db: Kysely<unknown>) {
      for (const column of USAGE_DETAIL_COLUMNS) await db.schema.alterTable('ledger').addColumn(column, 'bigint').execute();
    },
    async down(db: Kysely<unknown>) {
      for (const column of USAGE_DETAIL_COLUMNS) await db.schema.alterTable('ledger').dropColumn(column).execute();
    },
  },
  /** sluice's own time on the request in ms (pipeline/overhead-clock.ts); null on older rows. */
  '0011_ledger_overhead_ms': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').addColumn('overhead_ms', 'double precision').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').dropColumn('overhead_ms').execute();
    },
  },
  /**
   * The console's per-minute rollups (src/store/rollup-tables.ts): sums per minute and
   * provider/model, and a TTFT and a latency histogram (14 buckets each), added to by every
   * process after each ledger batch it stores; the charts read these, never the ledger.
   */
  '0012_ledger_minutes': {
    async up(db: Kysely<unknown>) {
      let table = db.schema
        .createTable('ledger_minutes')
        .addColumn('minute', 'bigint', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addColumn('errors', 'bigint', (c) => c.notNull())
        .addColumn('input_tokens', 'bigint', (c) => c.notNull())
        .addColumn('output_tokens', 'bigint', (c) => c.notNull())
        .addColumn('cost_usd', 'double precision', (c) => c.notNull());
      for (let i = 0; i < 14; i++) {
        table = table
          .addColumn(`ttft_${i}`, 'bigint', (c) => c.notNull())
          .addColumn(`latency_${i}`, 'bigint', (c) => c.notNull());
      }
      await table.addPrimaryKeyConstraint('ledger_minutes_pk', ['minute', 'provider', 'model']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('ledger_minutes').execute();
    },
  },
  /**
   * The console's logins (src/console/sessions.ts), shared by every worker and instance: the
   * digest of the cookie's random id, and the admin key (by id) or the master key (by a digest of
   * it) the session stands for.
   */
  '0013_console_sessions': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('console_sessions')
        .addColumn('id_digest', 'text', (c) => c.primaryKey())
        .addColumn('key_id', 'text')
        .addColumn('master_digest', 'text')
        .addColumn('last_used_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('console_sessions').execute();
    },
  },
  /**
   * The request log's key and outcome filters (the console's and GET /v1/requests'), each in
   * created_at order like the model, provider and project indexes: without them a page for one
   * key among thousands, or for the rare errors, walked the created_at index from the newest row
   * and filtered (120 ms for a key on a 1M-row SQLite ledger; bench/ledger-page.ts).
   */
  '0014_ledger_filter_indexes': {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('ledger_key').on('ledger').columns(['key_id', 'created_at', 'request_id']).execute();
      await db.schema.createIndex('ledger_outcome').on('ledger').columns(['outcome', 'created_at', 'request_id']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('ledger_outcome').execute();
      await db.schema.dropIndex('ledger_key').execute();
    },
  },
  /**
   * The console's per-hour rollups (src/store/rollup-tables.ts), the same columns as
   * ledger_minutes. From here both are written in each ledger batch's transaction, from the rows
   * it stored; both are filled from the ledger once, here, so an upgraded store's charts start
   * with its history: ledger_minutes is rebuilt (its rows were added after their batch's
   * transaction, a retried batch twice) for the minutes still kept, ledger_hours from every row.
   */
  '0015_ledger_hours': {
    async up(db: Kysely<unknown>) {
      let table = db.schema
        .createTable('ledger_hours')
        .addColumn('hour', 'bigint', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('model', 'text', (c) => c.notNull())
        .addColumn('requests', 'bigint', (c) => c.notNull())
        .addColumn('errors', 'bigint', (c) => c.notNull())
        .addColumn('input_tokens', 'bigint', (c) => c.notNull())
        .addColumn('output_tokens', 'bigint', (c) => c.notNull())
        .addColumn('cost_usd', 'double precision', (c) => c.notNull());
      for (const i of HISTOGRAM_COLUMNS) {
        table = table
          .addColumn(`ttft_${i}`, 'bigint', (c) => c.notNull())
          .addColumn(`latency_${i}`, 'bigint', (c) => c.notNull());
      }
      await table.addPrimaryKeyConstraint('ledger_hours_pk', ['hour', 'provider', 'model']).execute();
      await sql`delete from ledger_minutes`.execute(db);
      await backfillRollup(db, 'minutes', Date.now() - MINUTES_KEPT_MS, { byProject: false });
      await backfillRollup(db, 'hours', 0, { byProject: false });
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('ledger_hours').execute();
    },
  },
  /**
   * Which project each id an upstream's Responses API handed out through the relay belongs to
   * (store/relayed-ids-store.ts): every project is relayed with the operator's one upstream key,
   * so a project's key may name only its own ids. The responses already stored are their
   * projects'; the items of those relayed before this table are not known (a key that names one
   * gets the 404 of an unknown item).
   */
  '0016_relayed_ids': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('relayed_ids')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await sql`insert into relayed_ids (id, project_id, created_at)
        select id, project_id, created_at * 1000 from responses where project_id is not null`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('relayed_ids').execute();
    },
  },
  /**
   * Everything editable (issue 27): a key can be disabled and enabled again (`disabled_at`), keys
   * and projects are deleted softly (`deleted_at`: they stop, leave the default listings, and
   * their ledger rows, spend and request log stay theirs), and a project has the models its keys
   * may use when they list none, and free metadata (JSON text, like a key's models).
   */
  '0017_editable_governance': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('api_keys').addColumn('disabled_at', 'bigint').execute();
      await db.schema.alterTable('api_keys').addColumn('deleted_at', 'bigint').execute();
      await db.schema.alterTable('projects').addColumn('allowed_models', 'text').execute();
      await db.schema.alterTable('projects').addColumn('metadata', 'text').execute();
      await db.schema.alterTable('projects').addColumn('deleted_at', 'bigint').execute();
    },
    async down(db: Kysely<unknown>) {
      for (const column of ['deleted_at', 'metadata', 'allowed_models'])
        await db.schema.alterTable('projects').dropColumn(column).execute();
      for (const column of ['deleted_at', 'disabled_at']) await db.schema.alterTable('api_keys').dropColumn(column).execute();
    },
  },
  /**
   * Tags on the ledger (pipeline/request-tags.ts), and the spend report's rollups
   * (store/spend-tables.ts): per hour and per day, per project, key and provider/model, and the
   * same per tag. Filled from the ledger once, here (every older row untagged).
   */
  '0018_ledger_tags_spend_rollups': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').addColumn('tags', 'text').execute();
      for (const { table, tagTable } of Object.values(SPEND_ROLLUPS)) {
        await createSpendTable(db, table, false, 'initial');
        await createSpendTable(db, tagTable, true, 'initial');
      }
      await backfillSpend(db, 'initial');
    },
    async down(db: Kysely<unknown>) {
      for (const { table, tagTable } of Object.values(SPEND_ROLLUPS)) {
        await db.schema.dropTable(tagTable).execute();
        await db.schema.dropTable(table).execute();
      }
      await db.schema.alterTable('ledger').dropColumn('tags').execute();
    },
  },
  /**
   * Console users (src/governance/users): created at their first sign-in through SSO, one per
   * issuer and subject; `roles_from` says whether the claim mapping still sets their role
   * (`claims`) or an owner set it through the admin API (`owner`). A session names its user, and
   * keeps the ID token the identity provider's logout asks for.
   */
  '0019_users': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('name', 'text')
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('projects', 'text', (c) => c.notNull())
        .addColumn('roles_from', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_sign_in_at', 'bigint')
        .execute();
      await db.schema.createIndex('users_subject').on('users').columns(['issuer', 'subject']).unique().execute();
      await db.schema.alterTable('console_sessions').addColumn('user_id', 'text').execute();
      await db.schema.alterTable('console_sessions').addColumn('id_token', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('console_sessions').dropColumn('id_token').execute();
      await db.schema.alterTable('console_sessions').dropColumn('user_id').execute();
      await db.schema.dropTable('users').execute();
    },
  },
  /**
   * The audit log (governance/audit): every admin mutation and console sign-in, sign-out and
   * failed sign-in, with who, what, the changed fields (never a secret), the request id and the
   * client. Each filter has an index that goes on with created_at and id, the paging order; its
   * retention (audit.retention_days) deletes the oldest rows through the first index.
   */
  '0020_audit_log': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('audit_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('actor_kind', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text')
        .addColumn('actor_name', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_type', 'text', (c) => c.notNull())
        .addColumn('target_id', 'text')
        .addColumn('before', 'text')
        .addColumn('after', 'text')
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('client_address', 'text')
        .addColumn('error_code', 'text')
        .execute();
      await db.schema.createIndex('audit_log_created').on('audit_log').columns(['created_at', 'id']).execute();
      await db.schema.createIndex('audit_log_actor').on('audit_log').columns(['actor_id', 'created_at', 'id']).execute();
      await db.schema.createIndex('audit_log_action').on('audit_log').columns(['action', 'created_at', 'id']).execute();
      await db.schema
        .createIndex('audit_log_target')
        .on('audit_log')
        .columns(['target_type', 'target_id', 'created_at', 'id'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('audit_log').execute();
    },
  },
  /**
   * Stored prompts and completions in a table of their own, with their own retention; on
   * PostgreSQL the ledger and that table partitioned by time (partition-ledger.ts).
   */
  '0021_ledger_partitions_content': { up: partitionLedgerUp, down: partitionLedgerDown },
  /** An MCP tool call's arguments and result in JSON bytes (src/mcp); null on model requests and older rows. */
  '0022_ledger_mcp_bytes': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').addColumn('bytes_in', 'bigint').execute();
      await db.schema.alterTable('ledger').addColumn('bytes_out', 'bigint').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').dropColumn('bytes_out').execute();
      await db.schema.alterTable('ledger').dropColumn('bytes_in').execute();
    },
  },
  /**
   * The project as a dimension of the console's rollups (rollup-projects-migration.ts): a
   * project member's charts read its projects' rows, never the ledger.
   */
  '0023_rollups_by_project': { up: rollupProjectsUp, down: rollupProjectsDown },
  /**
   * Reconciliations of the ledger against the providers' own reports (src/reconcile): each run's
   * comparison, newest first per provider, and the lock that lets one instance run a provider's
   * at a time.
   */
  '0024_reconciliations': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('reconciliations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('from_day', 'text', (c) => c.notNull())
        .addColumn('to_day', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('result', 'text')
        .execute();
      await db.schema.createIndex('reconciliations_created').on('reconciliations').columns(['created_at', 'id']).execute();
      await db.schema
        .createIndex('reconciliations_provider')
        .on('reconciliations')
        .columns(['provider', 'created_at', 'id'])
        .execute();
      await db.schema
        .createTable('reconcile_locks')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('reconcile_locks').execute();
      await db.schema.dropTable('reconciliations').execute();
    },
  },
  /**
   * Files and batches relayed to the providers' Files and Batch APIs (src/surfaces/files,
   * src/surfaces/batches): whose each upstream id is, and whether a batch's usage was settled.
   * The second index is the settlement poller's: the batches still unsettled.
   */
  '0025_batch_objects': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('batch_objects')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text')
        .addColumn('key_id', 'text')
        .addColumn('request_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('budgets', 'text')
        .addColumn('settled_at', 'bigint')
        .addColumn('deleted_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('batch_objects_project')
        .on('batch_objects')
        .columns(['project_id', 'kind', 'created_at'])
        .execute();
      await db.schema.createIndex('batch_objects_unsettled').on('batch_objects').columns(['kind', 'settled_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('batch_objects').execute();
    },
  },
  /**
   * The exact response cache (src/cache): whether the answer came from it (hit, miss, bypass; null
   * when the request was not under it) and, on a hit, what it would have cost upstream.
   */
  '0026_ledger_response_cache': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').addColumn('response_cache', 'text').execute();
      await db.schema.alterTable('ledger').addColumn('cache_saved_usd', 'double precision').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').dropColumn('cache_saved_usd').execute();
      await db.schema.alterTable('ledger').dropColumn('response_cache').execute();
    },
  },
  /**
   * An endpoint's opt-in to the response cache (docs/operations/response-cache.md): its cache
   * object (`{"ttl_s":..,"max_bytes":..}`) as JSON text, null when it did not opt in. One column,
   * not one per number: the setting is set and cleared whole (no half-set row can exist), and a
   * field the config's cache object gains needs no migration.
   */
  '0027_endpoint_cache': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('endpoints').addColumn('cache', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('endpoints').dropColumn('cache').execute();
    },
  },
  /**
   * The label of the provider key a request went out with (providers.<name>.api_keys; never the
   * key): null on older rows.
   */
  '0028_provider_keys': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').addColumn('provider_key', 'text').execute();
      // The spend report's untagged rollups take the provider key into their primary key (a new
      // table, refilled from the ledger, as 0018 filled it) and every rollup the cached tokens.
      for (const { table, tagTable } of Object.values(SPEND_ROLLUPS)) {
        await db.schema.dropTable(table).execute();
        await createSpendTable(db, table, false, 'provider_keys');
        await db.schema
          .alterTable(tagTable)
          .addColumn('cached_input_tokens', 'bigint', (c) => c.notNull().defaultTo(0))
          .execute();
      }
      await backfillSpend(db, 'provider_keys', 'untagged');
    },
    async down(db: Kysely<unknown>) {
      for (const { table, tagTable } of Object.values(SPEND_ROLLUPS)) {
        await db.schema.alterTable(tagTable).dropColumn('cached_input_tokens').execute();
        await db.schema.dropTable(table).execute();
        await createSpendTable(db, table, false, 'initial');
      }
      await backfillSpend(db, 'initial', 'untagged');
      await db.schema.alterTable('ledger').dropColumn('provider_key').execute();
    },
  },
  /** A dry run's row (x-sluice-dry-run: docs/api/dry-run.md) is marked 1; null on every other row. */
  '0029_ledger_dry_run': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').addColumn('dry_run', 'integer').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('ledger').dropColumn('dry_run').execute();
    },
  },
  /**
   * The request log of a key and a model, newest first: each of the model filter's ways (the name
   * the client used, the provider-side model) walks 50 entries of its index, where the key's index
   * alone read every row of the key in each month and sorted them (54.6 ms at p95 at 10 M rows,
   * docs/benchmarks/ledger.md). Built by 0021 on a store that had not run it yet.
   */
  '0030_ledger_key_model': {
    async up(db: Kysely<unknown>) {
      for (const [name, model] of [
        ['ledger_key_model', 'model'],
        ['ledger_key_requested_model', 'requested_model'],
      ]) {
        await db.schema
          .createIndex(name)
          .ifNotExists()
          .on('ledger')
          .columns(['key_id', model, 'created_at', 'request_id'])
          .execute();
      }
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('ledger_key_requested_model').ifExists().execute();
      await db.schema.dropIndex('ledger_key_model').ifExists().execute();
    },
  },
  /**
   * The spend report's rollup per day, project and provider/model (spend-tables.ts), for the
   * reports that need no key: filled from spend_days, summed over its keys and provider keys.
   */
  '0031_spend_project_days': {
    async up(db: Kysely<unknown>) {
      await createSpendProjectTable(db);
      await fillSpendProjectDays(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable(SPEND_PROJECT_DAYS.table).execute();
    },
  },
  /**
   * The console's per-minute rollups across projects (rollup-tables.ts), for the charts of every
   * project: the series per minute and provider/model (ledger_minutes_all) and the histograms per
   * minute (ledger_minute_histograms), filled from ledger_minutes, summed over its projects.
   */
  '0032_ledger_minutes_all': {
    async up(db: Kysely<unknown>) {
      await createMinutesAcrossProjects(db);
      await fillMinutesAcrossProjects(db);
    },
    async down(db: Kysely<unknown>) {
      await dropMinutesAcrossProjects(db);
    },
  },
};

/**
 * Every table the migrations create (a test checks the list against a migrated store): their
 * presence without a record of the migrations is refused at start (unrecorded-schema.ts).
 */
export const SLUICE_TABLES = [
  'ledger',
  'responses',
  'rejections',
  'projects',
  'api_keys',
  'endpoints',
  'budget_spend',
  'ledger_minutes',
  'console_sessions',
  'ledger_hours',
  'relayed_ids',
  'spend_hours',
  'spend_tag_hours',
  'spend_days',
  'spend_tag_days',
  'users',
  'audit_log',
  'ledger_content',
  'reconciliations',
  'reconcile_locks',
  'batch_objects',
  'spend_project_days',
  'ledger_minutes_all',
  'ledger_minute_histograms',
] as const;

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => migrations,
};
