import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adminQuery, createTestSchema, databaseUrl, noPostgres } from '../../test/helpers/postgres.ts';
import { droppedMeanwhile, openDatabase } from './open-database.ts';

describe('droppedMeanwhile', () => {
  const gone = (schema: string) => Object.assign(new Error(`schema "${schema}" does not exist`), { code: '3F000' });

  it('is another schema dropped while the Migrator listed the tables', () => {
    assert.equal(droppedMeanwhile(gone('other_app'), 'sluice'), true);
  });

  it('is not our own schema missing, another error, or SQLite', () => {
    assert.equal(droppedMeanwhile(gone('sluice'), 'sluice'), false);
    assert.equal(droppedMeanwhile(Object.assign(new Error('relation "x" does not exist'), { code: '42P01' }), 'sluice'), false);
    assert.equal(droppedMeanwhile(gone('other_app'), undefined), false);
    assert.equal(droppedMeanwhile('schema "x" does not exist', 'sluice'), false);
  });
});

describe('openDatabase on PostgreSQL', { skip: noPostgres }, () => {
  it('migrates while another client creates and drops schemas of the same database', async () => {
    let churning = true;
    const churn = (async () => {
      for (let i = 0; churning; i++) {
        const name = `churn_${process.pid}_${i}`;
        await adminQuery(databaseUrl!, `CREATE SCHEMA ${name}; CREATE TABLE ${name}.t (a int)`);
        await adminQuery(databaseUrl!, `DROP SCHEMA ${name} CASCADE`);
      }
    })();
    try {
      for (let i = 0; i < 10; i++) {
        const schema = await createTestSchema();
        try {
          const opened = await openDatabase({ databaseUrl: schema.url, path: ':memory:' });
          await opened.close();
        } finally {
          await schema.drop();
        }
      }
    } finally {
      churning = false;
      await churn;
    }
  });
});
