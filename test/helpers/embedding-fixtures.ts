import { readFixture } from './fixtures.ts';

/** A recorded embeddings response body (test/fixtures/embeddings, provenance in its README). */
export function embeddingFixture(name: string): any {
  return JSON.parse(readFixture(`embeddings/${name}`).toString('utf8'));
}
