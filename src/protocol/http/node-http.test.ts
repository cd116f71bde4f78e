import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

/** Whether importing `specifier` in a fresh Node loads Node's bundled undici (node-http.ts says why it must not). */
function loadsBundledUndici(specifier: string): boolean {
  const script = `await import(${JSON.stringify(specifier)});
console.log(process.moduleLoadList.some((m) => m.includes('internal/deps/undici')));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return out.trim().split('\n').at(-1) === 'true';
}

test("the control: an ESM value import from 'node:http' loads the bundled undici", () => {
  // Should a Node release stop doing so, this fails and node-http.ts can go.
  assert.equal(loadsBundledUndici('node:http'), true);
});

test("the gateway's module graph does not load Node's bundled undici", () => {
  assert.equal(loadsBundledUndici(new URL('../../server/app.ts', import.meta.url).href), false);
  assert.equal(loadsBundledUndici(new URL('../../cli/serve.ts', import.meta.url).href), false);
});
