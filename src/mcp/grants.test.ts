import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MASTER, type Caller } from '../admission/admission.ts';
import { accessOf } from './grants.ts';

const caller = (over: Partial<Caller> = {}): Caller => ({
  keyId: 'k1',
  projectId: 'p1',
  tier: 'free',
  allowedModels: null,
  admin: false,
  budgets: [],
  ...over,
});
const atRoot = { endpoint: null };

describe('accessOf', () => {
  it('lets a caller no grant applies to call default_tools', () => {
    const access = accessOf({ grants: [], default_tools: ['files__*'] }, caller(), atRoot);
    assert.equal(access.tool('files', 'files__read'), true);
    assert.equal(access.tool('github', 'github__create_issue'), false);
    assert.equal(access.server('files'), true);
    assert.equal(access.server('github'), false);
  });

  it('applies a grant only when every condition it names holds, and joins those that apply', () => {
    const config = {
      default_tools: ['*'],
      grants: [
        { tools: ['github__create_issue'], project: 'p1' },
        { tools: ['files__read'], project: 'p1', endpoint: 'support' },
        { tools: ['*'], key: 'other' },
        { tools: ['db__*'], tier: 'free' },
      ],
    };
    const root = accessOf(config, caller(), atRoot);
    assert.equal(root.tool('github', 'github__create_issue'), true);
    assert.equal(root.tool('files', 'files__read'), false, 'the endpoint grant does not apply at /mcp');
    assert.equal(root.tool('db', 'db__query'), true);
    assert.equal(root.tool('github', 'github__delete_repo'), false, 'grants replace the default');
    assert.equal(root.server('github'), false, 'a tool name grants no prompts nor resources');
    assert.equal(root.server('db'), true);
    const viaEndpoint = accessOf(config, caller(), { endpoint: 'support' });
    assert.equal(viaEndpoint.tool('files', 'files__read'), true);
  });

  it('lets the master key call everything, and `[]` defaults deny everything to others', () => {
    const config = { grants: [], default_tools: [] };
    assert.equal(accessOf(config, MASTER, atRoot).tool('x', 'x__y'), true);
    assert.equal(accessOf(config, caller(), atRoot).tool('x', 'x__y'), false);
  });
});
