import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { type AdmissionRequest, type Caller, MASTER } from '../../admission/admission.ts';
import type { ResolvedModel } from '../../providers/registry.ts';
import { refuseDisallowedModels } from './allowed-models.ts';

const target = (requested: string, provider: string, model: string) => ({ requested, provider, model }) as ResolvedModel;

function admission(allowedModels: string[] | null, resolved: ResolvedModel): AdmissionRequest {
  const caller: Caller = { ...MASTER, keyId: 'k', projectId: 'p', admin: false, allowedModels };
  return { requestId: 'r', caller, surface: 'chat', target: resolved, request: { model: resolved.requested, messages: [] }, streamed: false };
}

describe('refuseDisallowedModels', () => {
  let admitted = 0;
  const admit = refuseDisallowedModels(() => {
    admitted++;
    return { settle: () => {} };
  });

  it('lets through the name the client used, or the provider/model it resolved to', async () => {
    admitted = 0;
    await admit(admission(['fast'], target('fast', 'groq', 'llama-3.3-70b')));
    await admit(admission(['groq/llama-3.3-70b'], target('fast', 'groq', 'llama-3.3-70b')));
    await admit(admission(null, target('mock/echo', 'mock', 'echo')));
    assert.equal(admitted, 3);
  });

  it('refuses anything else with a 403 naming model, before the wrapped admit step runs', () => {
    admitted = 0;
    assert.throws(
      () => admit(admission(['fast'], target('groq/llama-3.3-70b', 'groq', 'llama-3.3-70b'))),
      (err: unknown) => err instanceof GatewayError && err.status === 403 && err.param === 'model' && err.code === 'model_not_allowed',
    );
    assert.throws(() => admit(admission([], target('mock/echo', 'mock', 'echo'))), GatewayError);
    assert.equal(admitted, 0);
  });
});
