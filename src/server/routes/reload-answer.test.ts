import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { reloadAnswer } from './reload-answer.ts';

const ok = (changed: string[], restartRequired: string[] = [], worker?: number) => ({
  ok: true as const,
  changed,
  restartRequired,
  ...(worker === undefined ? {} : { worker, pid: 100 + worker }),
});
const refused = (problems: string[], worker?: number) => ({ ok: false as const, problems, ...(worker === undefined ? {} : { worker }) });

describe('reloadAnswer', () => {
  it('answers one process with what changed and what waits for a restart', () => {
    assert.deepEqual(reloadAnswer([ok(['routes.smart.targets'], ['server.port'])]), {
      object: 'sluice.config_reload',
      changed: ['routes.smart.targets'],
      restart_required: ['server.port'],
    });
  });

  it('answers workers with the keys of them all and each worker on its own', () => {
    const answer = reloadAnswer([ok(['log.level'], [], 0), ok(['log.level'], [], 1)]);
    assert.ok(!(answer instanceof GatewayError));
    assert.deepEqual(answer.changed, ['log.level']);
    assert.deepEqual(
      answer.workers?.map((w) => [w.worker, w.pid]),
      [
        [0, 100],
        [1, 101],
      ],
    );
  });

  it('is a 422 config_invalid listing each problem once, and under workers who refused and who applied it', () => {
    const one = reloadAnswer([refused(['f: unknown key server.prot (did you mean server.port?)'])]);
    assert.ok(one instanceof GatewayError);
    assert.equal(one.status, 422);
    assert.equal(one.code, 'config_invalid');
    assert.equal(one.message, 'The config was refused and the running config kept: f: unknown key server.prot (did you mean server.port?)');
    const workers = reloadAnswer([refused(['a', 'b'], 0), ok([], [], 1), refused(['a', 'b'], 2)]);
    assert.ok(workers instanceof GatewayError);
    assert.match(workers.message, /kept: a; b \(workers 0, 2 refused it; worker 1 applied it\)$/);
  });

  it('is a 503 reload_incomplete when a worker did not answer and none refused', () => {
    const answer = reloadAnswer([ok([], [], 0), { ...refused(['did not answer'], 1), silent: true }]);
    assert.ok(answer instanceof GatewayError);
    assert.equal(answer.status, 503);
    assert.equal(answer.code, 'reload_incomplete');
    assert.match(answer.message, /\(worker 1 did not answer in time; worker 0 applied it\)/);
  });
});
