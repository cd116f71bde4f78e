import { type Kysely, PostgresAdapter } from 'kysely';

/**
 * Which engine a Kysely instance talks to. The ledger's write order is engine-specific SQL
 * (SQLite's rowid; a sequence plus the writing transaction's id on PostgreSQL), and both the
 * migration and the store must know it without every caller passing it along. Kysely marks
 * getExecutor() internal; the version is pinned and the contract test runs on both engines.
 */
export function engineOf<DB>(db: Kysely<DB>): 'postgres' | 'sqlite' {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}
