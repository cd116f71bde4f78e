import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { OperatorError } from './operator-error.ts';
import { claimPort, lockPort } from './port-lock.ts';

/** A port no test of this run uses: the lock is per port and machine-wide, so each test takes its own. */
const testPort = () => 40_000 + ((process.pid * 7 + Math.floor(Math.random() * 1000)) % 20_000);

describe('lockPort', () => {
  it('a second supervisor on the port is refused, naming the pid that holds it; released, the port can be locked again', async () => {
    const port = testPort();
    const lock = await lockPort(port);
    try {
      await assert.rejects(lockPort(port), (err) => {
        assert.ok(err instanceof OperatorError);
        assert.equal(
          err.message,
          `port ${port} is already served by sluice (pid ${process.pid}): a second gateway would share its connections (SO_REUSEPORT). ` +
            'Stop that one first, or pick another port with --port (or PORT).',
        );
        return true;
      });
    } finally {
      lock.release();
    }
    (await lockPort(port)).release();
  });

  it('a socket file left by a process that is gone is taken over (platforms without abstract sockets)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-lock-'));
    try {
      const address = join(dir, 'sluice-port-1.sock');
      writeFileSync(address, '');
      const lock = await lockPort(1, address);
      await assert.rejects(lockPort(1, address), /already served by sluice \(pid \d+\)/);
      lock.release();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('claimPort', () => {
  it('port 0 becomes a free port, locked', async () => {
    const { port, lock } = await claimPort('127.0.0.1', 0);
    try {
      assert.ok(port > 0);
      await assert.rejects(lockPort(port), /already served by sluice/);
    } finally {
      lock.release();
    }
  });

  it('a port another program holds is refused at once, and its lock let go', async () => {
    const busy = createServer().listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const { port } = busy.address() as AddressInfo;
    try {
      await assert.rejects(claimPort('127.0.0.1', port), new RegExp(`^OperatorError: 127\\.0\\.0\\.1:${port} is already in use`));
      (await lockPort(port)).release();
    } finally {
      busy.close();
    }
  });
});
