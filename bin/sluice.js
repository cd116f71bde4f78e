#!/usr/bin/env node
// Plain JS so that an old Node can still print a useful message instead of a syntax error.
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(
    `sluice needs Node >= 22.19 (found ${process.versions.node}). ` +
      'Run it through npm (npm start / npx sluice) after npm install, which uses the bundled Node 24 on linux-x64, or install a current Node.',
  );
  process.exit(1);
}
await import('../src/cli/main.ts');
