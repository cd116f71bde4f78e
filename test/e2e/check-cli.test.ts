import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chatStream, DONE, role, text } from '../helpers/check-streams.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { fixturePath, readFixture } from '../helpers/fixtures.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const bin = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'sluice-check-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The real `sluice check`, with a clean environment, `input` on stdin. */
function sluiceCheck(args: string[], options: { env?: Record<string, string>; input?: string } = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [bin, 'check', ...args],
      { env: { PATH: process.env.PATH ?? '', ...options.env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(options.input ?? '');
  });
}

function file(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
}

describe('sluice check', () => {
  let gw: TestGateway;
  let upstream: FakeUpstream;
  const KEY = 'sk-check-master';
  before(async () => {
    gw = await startGateway({ auth: { master_key: KEY } });
    upstream = await startFakeUpstream();
  });
  after(async () => {
    await gw.close();
    await upstream.close();
  });

  it('--help says what is checked and what the exit codes mean', async () => {
    const r = await sluiceCheck(['--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: sluice check <file\|url\|->/);
    assert.match(r.stdout, /Exit code: 0 conforming, 1 violations found, 2 the stream could not be read/);
  });

  it('a conforming recording: one line, exit 0', async () => {
    const r = await sluiceCheck([fixturePath('openai-chat/gpt4o-parallel-tool-calls.sse')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /gpt4o-parallel-tool-calls\.sse: chat completions stream, 8 frames: conforming\n$/);
  });

  it('an Anthropic Messages recording is told apart and conforms; --kind messages says so too', async () => {
    const path = fixturePath('anthropic/parallel-tool-use.sse');
    const r = await sluiceCheck([path]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /parallel-tool-use\.sse: Anthropic Messages stream, \d+ frames: conforming\n$/);
    const forced = await sluiceCheck(['--kind', 'messages', path]);
    assert.equal(forced.code, 0, forced.stderr);
  });

  it('violations: each with its frame and rule, exit 1; --json for scripts', async () => {
    const path = file('cut.sse', [role(), text('Hi'), text('!')].join(''));
    const human = await sluiceCheck([path]);
    assert.equal(human.code, 1);
    assert.match(human.stdout, /3 frames, 2 violations:\n {2}end +done\/missing +the stream ends without data: \[DONE\]\n/);
    assert.match(human.stdout, /\n {2}end +chat\/finish-once +choice 0 never finishes \(no finish_reason\)\n$/);
    const json = await sluiceCheck(['--json', path]);
    assert.equal(json.code, 1);
    assert.deepEqual(JSON.parse(json.stdout), {
      source: path,
      kind: 'chat',
      frames: 3,
      conforming: false,
      violations: [
        { frame: null, rule: 'done/missing', message: 'the stream ends without data: [DONE]' },
        { frame: null, rule: 'chat/finish-once', message: 'choice 0 never finishes (no finish_reason)' },
      ],
    });
  });

  it('- reads stdin; --kind skips detection', async () => {
    const r = await sluiceCheck(['-'], { input: readFixture('openai-responses/text-gpt5-nano.sse').toString() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^stdin: Responses stream, 17 frames: conforming\n$/);
    const forced = await sluiceCheck(['--kind', 'responses', '-'], { input: chatStream().join('') });
    assert.equal(forced.code, 1);
    assert.match(forced.stdout, /responses\/created-first/);
  });

  it("a URL with --data is POSTed with the key: sluice's own stream conforms", async () => {
    const body = file(
      'request.json',
      JSON.stringify({
        model: 'mock/echo',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Hello there' }],
      }),
    );
    const url = `${gw.url}/v1/chat/completions`;
    const r = await sluiceCheck(['--data', body, url], { env: { SLUICE_API_KEY: KEY } });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /chat completions stream, \d+ frames: conforming/);
    const responses = file('responses.json', JSON.stringify({ model: 'mock/echo', stream: true, input: 'Hello there' }));
    const rr = await sluiceCheck(['--key', KEY, '--data', responses, `${gw.url}/v1/responses`]);
    assert.equal(rr.code, 0, rr.stdout + rr.stderr);
    assert.match(rr.stdout, /Responses stream, \d+ frames: conforming/);
  });

  it('a URL alone is fetched with GET', async () => {
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, body: [role(), text('a'), DONE].join('') });
    const r = await sluiceCheck([`${upstream.url}/stream`]);
    assert.equal(upstream.requests.at(-1)?.method, 'GET');
    assert.equal(r.code, 1);
    assert.match(r.stdout, /chat\/finish-once/);
  });

  it('what cannot be read is one line on stderr, exit 2', async () => {
    const cases: [string[], RegExp][] = [
      [[join(dir, 'missing.sse')], /^sluice: cannot read .*missing\.sse: ENOENT$/],
      [['--data', join(dir, 'missing.json'), `${gw.url}/v1/chat/completions`], /^sluice: cannot read --data .*missing\.json: ENOENT$/],
      [[`${gw.url}/v1/chat/completions`], /answered HTTP 405 with application\/json, not a stream: .*method_not_allowed/],
      [
        ['--data', file('unstreamed.json', '{"model":"mock/echo","messages":[{"role":"user","content":"hi"}]}'), `${gw.url}/v1/chat/completions`],
        /answered HTTP 401/,
      ],
      [[], /^sluice check: name one stream: a file, a URL, or - for stdin\. See sluice check --help\.$/],
      [['--kind', 'other', '-'], /^sluice check: --kind is chat, responses, messages or media, not "other"/],
    ];
    for (const [args, pattern] of cases) {
      const r = await sluiceCheck(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
      assert.match(r.stderr.trimEnd(), pattern);
    }
    const unstreamed = await sluiceCheck(['--key', KEY, '--data', join(dir, 'unstreamed.json'), `${gw.url}/v1/chat/completions`]);
    assert.equal(unstreamed.code, 2);
    assert.match(unstreamed.stderr, /answered HTTP 200 with application\/json.*, not a stream \(does the --data body ask for "stream": true\?\)/);
  });
});
