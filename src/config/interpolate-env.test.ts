import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from './config-error.ts';
import { interpolateEnv } from './interpolate-env.ts';

describe('interpolateEnv', () => {
  const env = { KEY: 'sk-1', EMPTY: '', HOST: '10.0.0.5' };

  it('replaces ${VAR} in strings at any depth, keeping other values', () => {
    const out = interpolateEnv(
      { a: { key: '${KEY}', n: 3, on: true, none: null }, list: ['http://${HOST}:8000/v1', '${KEY}-${KEY}'] },
      env,
      'sluice.yaml',
    );
    assert.deepEqual(out, { a: { key: 'sk-1', n: 3, on: true, none: null }, list: ['http://10.0.0.5:8000/v1', 'sk-1-sk-1'] });
  });

  it('takes the default of ${VAR:-default} when VAR is unset or empty; ${VAR:-} allows empty', () => {
    assert.equal(interpolateEnv('${MISSING:-fallback}', env, 'f'), 'fallback');
    assert.equal(interpolateEnv('${EMPTY:-fallback}', env, 'f'), 'fallback');
    assert.equal(interpolateEnv('${KEY:-fallback}', env, 'f'), 'sk-1');
    assert.equal(interpolateEnv('${MISSING:-}', env, 'f'), '');
  });

  it('keeps a variable set to the empty string, as the shell does', () => {
    assert.equal(interpolateEnv('${EMPTY}', env, 'f'), '');
  });

  it('refuses an unset ${VAR}, naming the variable, the key path and the file', () => {
    assert.throws(
      () => interpolateEnv({ providers: { groq: { api_key: '${GROQ_API_KEY}' } } }, env, '/etc/sluice.yaml'),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(
          err.message,
          '/etc/sluice.yaml: providers.groq.api_key uses ${GROQ_API_KEY}, which is not set: export GROQ_API_KEY, ' +
            'or write ${GROQ_API_KEY:-} to allow it empty (${GROQ_API_KEY:-value} for a default).',
        );
        return true;
      },
    );
    assert.throws(() => interpolateEnv({ model_list: [{ model: 'x/${M}' }] }, env, 'f'), /f: model_list\[0\]\.model uses \$\{M\}/);
  });

  it('names every unset ${VAR} at once, each a problem of its own', () => {
    assert.throws(
      () => interpolateEnv({ a: '${ONE}', b: ['${KEY}', '${TWO}'] }, env, 'f'),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.deepEqual(
          err.problems.map((p) => p.slice(0, p.indexOf(','))),
          ['f: a uses ${ONE}', 'f: b[1] uses ${TWO}'],
        );
        assert.equal(err.message, err.problems.join('; '));
        return true;
      },
    );
  });

  it('leaves text that is not a reference alone', () => {
    assert.equal(interpolateEnv('$HOME ${ not-a-name } ${1X}', env, 'f'), '$HOME ${ not-a-name } ${1X}');
  });
});
