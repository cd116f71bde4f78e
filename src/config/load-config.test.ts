import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from './config-error.ts';
import { loadConfig } from './load-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function configFile(text: string): string {
  const file = join(dir, `config-${n++}.yaml`);
  writeFileSync(file, text);
  return file;
}

/** The one-line message loadConfig refuses the file with. */
function refusal(text: string, env: NodeJS.ProcessEnv = {}): { file: string; message: string } {
  const file = configFile(text);
  try {
    loadConfig({ file, env });
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
    assert.doesNotMatch(err.message, /\n/);
    return { file, message: err.message };
  }
  assert.fail('the config was accepted');
}

describe('loadConfig', () => {
  it('names an unknown key with its path and the file, and suggests the close known key', () => {
    const top = refusal('server:\n  prot: 9000\n');
    assert.equal(top.message, `${top.file}: unknown key server.prot (did you mean server.port?)`);
    const provider = refusal('providers:\n  groq:\n    base_ulr: x\n');
    assert.equal(provider.message, `${provider.file}: unknown key providers.groq.base_ulr (did you mean providers.groq.base_url?)`);
    const alias = refusal('model_list:\n  - model_name: fast\n    modle: groq/llama\n');
    assert.match(alias.message, /unknown key model_list\[0\]\.modle \(did you mean model_list\[0\]\.model\?\)/);
    const price = refusal('pricing:\n  a/b: { input_mtok: 1, output_mtok: 2, cache_read: 1 }\n');
    assert.match(price.message, /unknown key pricing\["a\/b"\]\.cache_read \(did you mean pricing\["a\/b"\]\.cache_read_mtok\?\)/);
  });

  it('names an unknown key without a suggestion when nothing is close, and lists every one', () => {
    const { file, message } = refusal('databse: x\nserver:\n  port: 1\n  colour: red\n');
    assert.equal(message, `${file}: unknown key server.colour; unknown key databse`);
  });

  it('keeps each mistake a problem of its own (sluice config check prints one a line)', () => {
    const file = configFile('databse: x\nserver:\n  port: "eighty"\n  colour: red\n');
    assert.throws(
      () => loadConfig({ file, env: {} }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.problems.length, 3, err.message);
        for (const problem of err.problems) assert.ok(problem.startsWith(`${file}: `), problem);
        assert.equal(err.message, `${file}: ${err.problems.map((p) => p.slice(file.length + 2)).join('; ')}`);
        return true;
      },
    );
  });

  it('refuses a headers timeout longer than the request timeout, naming both keys', () => {
    const { file, message } = refusal('server:\n  headers_timeout_s: 30\n  request_timeout_s: 20\n');
    assert.equal(message, `${file}: server.headers_timeout_s: 30 must not exceed server.request_timeout_s (20): the headers are part of the request`);
    assert.equal(
      loadConfig({ file: configFile('server:\n  headers_timeout_s: 30\n  request_timeout_s: 0\n'), env: {} }).server.headers_timeout_s,
      30,
    );
  });

  it('refuses a key pool beside api_key, or with one label twice, naming the key', () => {
    const both = refusal('providers:\n  groq:\n    api_key: a\n    api_keys: [{ key: b, label: one }]\n');
    assert.equal(both.message, `${both.file}: providers.groq.api_keys: is set beside api_key: use one or the other`);
    const twice = refusal('providers:\n  groq:\n    api_keys: [{ key: a, label: one }, { key: b, label: one }]\n');
    assert.equal(twice.message, `${twice.file}: providers.groq.api_keys[1].label: 'one' names two keys`);
    const pool = loadConfig({
      file: configFile('providers:\n  groq:\n    api_keys: [{ key: a, label: one, rpm: 10 }]\n'),
      env: {},
    }).providers.groq.api_keys;
    assert.deepEqual(pool, [{ key: 'a', label: 'one', weight: 1, rpm: 10 }]);
  });

  it('names the key and the file for a value of the wrong type', () => {
    const { file, message } = refusal('server:\n  port: "eighty"\n');
    assert.match(message, new RegExp(`^${file}: server\\.port: .*expected number`));
  });

  it('names an unset ${VAR} with its key path and the file; ${VAR:-default} and ${VAR:-} load', () => {
    const { file, message } = refusal('providers:\n  groq:\n    api_key: ${GROQ_API_KEY}\n');
    assert.match(message, new RegExp(`^${file}: providers\\.groq\\.api_key uses \\$\\{GROQ_API_KEY\\}, which is not set`));
    const config = loadConfig({
      file: configFile(
        'auth:\n  master_key: ${SLUICE_KEY:-}\nstore:\n  path: ${DB_PATH:-/tmp/x.db}\nproviders:\n  groq:\n    api_key: ${GROQ_API_KEY:-}\n',
      ),
      env: {},
    });
    assert.equal(config.auth.master_key, undefined, 'an empty master key is no key');
    assert.equal(config.store.path, '/tmp/x.db');
    assert.equal(config.providers.groq.api_key, '');
  });

  it('regression: port: ${PORT:-8080} failed as "expected number, received string"; numbers and booleans from ${VAR} load', () => {
    const text = 'server:\n  port: ${PORT:-8080}\nmetrics:\n  enabled: ${METRICS:-false}\n';
    assert.equal(loadConfig({ file: configFile(text), env: {} }).server.port, 8080);
    assert.equal(loadConfig({ file: configFile(text), env: {} }).metrics.enabled, false);
    const set = loadConfig({ file: configFile(text), env: { PORT: '9090', METRICS: 'true' } });
    assert.equal(set.server.port, 9090);
    assert.equal(set.metrics.enabled, true);
  });

  it('keeps a ${VAR} of digits a string where the schema wants a string, and refuses one that is no number', () => {
    const key = loadConfig({ file: configFile('auth:\n  master_key: ${KEY}\n'), env: { KEY: '12345678901234567890' } });
    assert.equal(key.auth.master_key, '12345678901234567890');
    assert.match(refusal('server:\n  port: ${PORT}\n', { PORT: 'eighty' }).message, /server\.port/);
    // A literal string in the file is the author's: it is not read as a number.
    assert.match(refusal('server:\n  port: "8080"\n').message, /server\.port/);
  });

  it('names the file, line and column of a YAML syntax error', () => {
    const { file, message } = refusal('server:\n  port: 8080\n  host: "127.0.0.1\n');
    assert.match(message, new RegExp(`^${file}:\\d+:\\d+: YAML syntax error: Missing closing "quote`));
    const dup = refusal('server:\n  port: 1\n  port: 2\n');
    assert.match(dup.message, new RegExp(`^${dup.file}:3:3: YAML syntax error: Map keys must be unique`));
    const alias = refusal('server: *nowhere\n');
    assert.match(alias.message, new RegExp(`^${alias.file}: YAML error: Unresolved alias`));
  });

  it('says in one line that a config file is missing', () => {
    const file = join(dir, 'nope.yaml');
    assert.throws(() => loadConfig({ file, env: {} }), new ConfigError(`Config file not found: ${file}`));
    assert.throws(() => loadConfig({ env: { SLUICE_CONFIG: file } }), new ConfigError(`Config file not found: ${file}`));
    assert.throws(() => loadConfig({ file: dir, env: {} }), new ConfigError(`Cannot read config file ${dir}: EISDIR`));
  });

  it('refuses a PORT or --port that is not a port number', () => {
    assert.throws(() => loadConfig({ env: { PORT: 'eighty' } }), new ConfigError('PORT=eighty is not a port number (0 to 65535).'));
    assert.throws(() => loadConfig({ env: {}, overrides: { port: 70000 } }), new ConfigError('--port 70000 is not a port number (0 to 65535).'));
    assert.equal(loadConfig({ env: { PORT: '9000' }, overrides: { port: 9001 } }).server.port, 9001);
  });

  it('takes the log level from SLUICE_LOG_LEVEL over the file, and refuses one that is not a level', () => {
    assert.equal(loadConfig({ file: configFile('log:\n  level: warn\n'), env: {} }).log.level, 'warn');
    assert.equal(loadConfig({ file: configFile('log:\n  level: warn\n'), env: { SLUICE_LOG_LEVEL: 'DEBUG' } }).log.level, 'debug');
    assert.throws(
      () => loadConfig({ env: { SLUICE_LOG_LEVEL: 'loud' } }),
      new ConfigError('SLUICE_LOG_LEVEL=loud is not a log level (trace, debug, info, warn, error, fatal, silent).'),
    );
  });

  it('loads an empty file as the defaults', () => {
    const config = loadConfig({ file: configFile(''), env: {} });
    assert.equal(config.server.port, 8080);
    assert.deepEqual(config.providers, {});
  });
});
