import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Caller, MASTER, type Role } from '../../admission/admission.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { withinProjects } from '../keys/project-scope.ts';
import { type Permission, requirePermission, roleOf, seesProject, visibleProjects } from './access.ts';

const key = (admin: boolean, projectId = 'p1'): Caller => ({
  keyId: 'k1',
  projectId,
  tier: null,
  allowedModels: null,
  admin,
  budgets: [],
});
const user = (role: Role, projects: string[] = []): Caller => ({
  ...key(role === 'owner' || role === 'admin'),
  keyId: null,
  projectId: null,
  allowedModels: [],
  user: { userId: 'usr_1', role, projects },
});

function refusal(caller: Caller, permission: Permission): GatewayError | undefined {
  try {
    requirePermission(caller, permission);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err;
  }
}

describe('roles', () => {
  it('makes the master key the owner and an admin key an admin', () => {
    assert.equal(roleOf(MASTER), 'owner');
    assert.equal(roleOf(key(true)), 'admin');
    assert.equal(roleOf(key(false)), undefined);
    assert.equal(roleOf(user('viewer')), 'viewer');
  });

  it('grants each role its permissions and names the role needed otherwise', () => {
    const table: [Caller, Permission[], Permission[]][] = [
      [MASTER, ['read', 'keys', 'manage', 'users'], []],
      [user('owner'), ['read', 'keys', 'manage', 'users'], []],
      [key(true), ['read', 'keys', 'manage'], ['users']],
      [user('admin'), ['read', 'keys', 'manage'], ['users']],
      [user('viewer'), ['read'], ['keys', 'manage', 'users']],
      [user('member', ['p1']), ['read', 'keys'], ['manage', 'users']],
    ];
    for (const [caller, granted, refused] of table) {
      for (const p of granted) assert.equal(refusal(caller, p), undefined, `${roleOf(caller)} ${p}`);
      for (const p of refused) {
        const err = refusal(caller, p);
        assert.equal(err?.code, 'role_required', `${roleOf(caller)} ${p}`);
        assert.equal(err?.status, 403);
        assert.match(err?.message ?? '', new RegExp(`needs the ${p === 'users' ? 'owner' : 'admin'} role`));
      }
    }
    assert.equal(refusal(user('viewer'), 'keys')?.message, "This needs the admin role; the caller's role is viewer.");
  });

  it('refuses a project key as before: the admin key error', () => {
    assert.equal(refusal(key(false), 'read')?.code, 'admin_key_required');
  });

  it('scopes a member and a project key to their projects, and no one else', () => {
    assert.deepEqual(visibleProjects(user('member', ['a', 'b'])), ['a', 'b']);
    assert.deepEqual(visibleProjects(key(false, 'p9')), ['p9']);
    for (const c of [MASTER, key(true), user('viewer'), user('admin')]) assert.equal(visibleProjects(c), undefined);
    assert.equal(seesProject(user('member', ['a']), 'a'), true);
    assert.equal(seesProject(user('member', ['a']), 'b'), false);
    assert.equal(seesProject(user('member', ['a']), null), false);
    assert.equal(seesProject(user('viewer'), null), true);
  });
});

describe('the request log within the projects a caller sees', () => {
  it("keeps a project of the caller's own, and gives any other way to its own projects", () => {
    assert.deepEqual(withinProjects({ projectId: 'b' }, undefined), { projectId: 'b' });
    assert.deepEqual(withinProjects({ projectId: 'b' }, ['a', 'b']), { projectId: 'b' });
    assert.deepEqual(withinProjects({ projectId: 'c' }, ['a', 'b']), { projectId: undefined, projectIds: ['a', 'b'] });
    assert.deepEqual(withinProjects({}, ['a']), { projectId: undefined, projectIds: ['a'] });
  });
});
