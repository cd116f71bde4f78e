import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConnectionGuard } from './connection-guard.ts';

class FakeSocket {
  destroyed = false;
  readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

function setup(max: number, perClient: number) {
  let reclaimed = 0;
  const guard = new ConnectionGuard<FakeSocket>({ max, perClient }, () => reclaimed++);
  const open = (name: string, client: string | null) => {
    const socket = new FakeSocket(name);
    return { socket, refused: guard.accept(socket, client) };
  };
  return { guard, open, reclaimed: () => reclaimed };
}

test('one client takes at most perClient connections; others still get in', () => {
  const { guard, open } = setup(100, 3);
  for (let i = 0; i < 3; i++) assert.equal(open(`a${i}`, '127.0.0.2').refused, undefined);
  assert.equal(open('a3', '127.0.0.2').refused, 'per_client');
  assert.equal(open('b0', '127.0.0.3').refused, undefined);
  assert.equal(guard.open, 4);
});

test('a closed connection frees its place for its client', () => {
  const { guard, open } = setup(100, 1);
  const { socket } = open('a', 'x');
  assert.equal(open('b', 'x').refused, 'per_client');
  guard.closed(socket);
  guard.closed(socket);
  assert.equal(open('c', 'x').refused, undefined);
  assert.equal(guard.open, 1);
});

test('at max, a never-used connection is reclaimed first (oldest first), then the longest idle, never a busy one', () => {
  const { guard, open, reclaimed } = setup(3, 10);
  const busy = open('busy', 'a').socket;
  const idle = open('idle', 'b').socket;
  const unused = open('unused', 'c').socket;
  guard.requestStarted(busy);
  guard.requestStarted(idle);
  guard.requestEnded(idle);
  const d = open('d', 'd');
  assert.equal(d.refused, undefined);
  assert.deepEqual([unused.destroyed, idle.destroyed, busy.destroyed], [true, false, false]);
  // `d` has not sent a request yet: it is the next in line, before the keep-alive one.
  const e = open('e', 'e');
  assert.deepEqual([d.socket.destroyed, idle.destroyed], [true, false]);
  guard.requestStarted(e.socket);
  assert.equal(open('f', 'f').refused, undefined);
  assert.deepEqual([idle.destroyed, busy.destroyed, e.socket.destroyed], [true, false, false]);
  assert.equal(reclaimed(), 3);
  assert.equal(guard.open, 3);
});

test('at max with every connection busy, the new one is refused', () => {
  const { guard, open } = setup(2, 10);
  for (const name of ['a', 'b']) guard.requestStarted(open(name, name).socket);
  assert.equal(open('c', 'c').refused, 'max_connections');
  assert.equal(guard.open, 2);
});

test("a reclaimed connection's close changes nothing more, and it never becomes idle again", () => {
  const { guard, open } = setup(1, 10);
  const first = open('a', 'x').socket;
  open('b', 'x');
  assert.ok(first.destroyed);
  guard.requestEnded(first);
  guard.closed(first);
  assert.equal(guard.open, 1);
  assert.equal(guard.clientOf(first), undefined);
  assert.equal(open('c', 'x').refused, undefined);
});

test("a trusted proxy's connections count toward max only", () => {
  const { guard, open } = setup(10, 1);
  for (let i = 0; i < 5; i++) assert.equal(open(`p${i}`, null).refused, undefined);
  assert.equal(guard.open, 5);
  assert.equal(guard.clientOf(open('p5', null).socket), null);
});

test('neverUsed lists the connections that sent no request', () => {
  const { guard, open } = setup(10, 10);
  const a = open('a', 'a').socket;
  const b = open('b', 'b').socket;
  guard.requestStarted(a);
  guard.requestEnded(a);
  assert.deepEqual([...guard.neverUsed()], [b]);
});
