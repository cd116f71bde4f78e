import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claimValues, type ClaimMapping, mapClaims } from './claims-mapping.ts';

const mapping: ClaimMapping = {
  claim: 'groups',
  roles: { owners: 'owner', admins: 'admin', viewers: 'viewer' },
  projects: { 'team-a': ['proj_a'], 'team-b': ['proj_b', 'proj_c'] },
};

describe('claims to roles and projects', () => {
  it('gives the strongest role among the values', () => {
    assert.deepEqual(mapClaims({ groups: ['viewers', 'admins', 'team-a'] }, mapping), { role: 'admin', projects: [] });
    assert.deepEqual(mapClaims({ groups: ['owners', 'viewers'] }, mapping), { role: 'owner', projects: [] });
    assert.deepEqual(mapClaims({ groups: 'viewers' }, mapping), { role: 'viewer', projects: [] });
  });

  it('makes a user with no role a member of every project its values map to', () => {
    assert.deepEqual(mapClaims({ groups: ['team-b', 'team-a', 'other'] }, mapping), {
      role: 'member',
      projects: ['proj_a', 'proj_b', 'proj_c'],
    });
  });

  it('grants nothing for unmapped, missing or malformed claims, nor for inherited names', () => {
    for (const groups of [['other'], [], undefined, 42, { owners: true }, ['toString', 'constructor']]) {
      assert.equal(mapClaims({ groups }, mapping), undefined, JSON.stringify(groups));
    }
  });

  it('reads a dotted path into an object claim, and only strings', () => {
    const claims = { realm_access: { roles: ['owners', 7, null] } };
    assert.deepEqual(claimValues(claims, 'realm_access.roles'), ['owners']);
    assert.deepEqual(mapClaims(claims, { ...mapping, claim: 'realm_access.roles' }), { role: 'owner', projects: [] });
    assert.deepEqual(claimValues({ realm_access: 'x' }, 'realm_access.roles'), []);
  });
});
