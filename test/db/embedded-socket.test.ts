// The embedded database served over DATA_DIR's socket (src/db/embedded-socket-server.ts) to a
// command's Db (src/db/embedded-socket-client.ts): a real PGlite data directory, a real Unix
// socket, both ends in this process so the order of events can be pinned down. The embedded
// database only: PostgreSQL needs no socket of ours.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createDatabase } from '../../src/db/create-database.ts';
import type { Db } from '../../src/db/db.ts';
import { connectEmbeddedDatabase } from '../../src/db/embedded-socket-client.ts';
import { embeddedSocketPath, readFrames, writeFrame } from '../../src/db/embedded-socket-frames.ts';
import { serveEmbeddedDatabase, type EmbeddedSocket } from '../../src/db/embedded-socket-server.ts';
import { isUniqueViolation } from '../../src/db/sqlstate.ts';
import { DB_OPTIONS } from '../helpers/db.ts';

const IDLE_IN_TRANSACTION_MS = 400;

/** A promise and the function that resolves it: a point a transaction waits at. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Whether the promise is still pending after the event loop has had `ms` to settle it. */
async function stillPending(promise: Promise<unknown>, ms = 150): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setTimeout(resolve, ms));
  return !settled;
}

/** A transaction on db that inserts the first id, waits for finish(), then inserts the second. */
function holdTransactionOpen(db: Db, [first, second]: [number, number]) {
  const halfway = gate();
  const finish = gate();
  const committed = db.transaction(async (tx) => {
    await tx.query('INSERT INTO notes VALUES ($1, $2)', [first, 'first half']);
    halfway.open();
    await finish.opened;
    await tx.query('INSERT INTO notes VALUES ($1, $2)', [second, 'second half']);
  });
  return { inside: halfway.opened, finish: finish.open, committed };
}

const countRows = async (db: Db) => (await db.query<{ n: number }>('SELECT count(*)::int8 AS n FROM notes')).rows[0]!.n;

describe('the embedded database over its socket', () => {
  let parent: string;
  let dataDir: string;
  let server: Db;
  let socket: EmbeddedSocket;
  let command: Db;

  before(async () => {
    parent = await mkdtemp(path.join(tmpdir(), 'orderpay-socket-'));
    dataDir = path.join(parent, 'data');
    server = await createDatabase({ databaseUrl: undefined, dataDir, db: DB_OPTIONS });
    await server.exec('CREATE TABLE notes (id int8 PRIMARY KEY, body text NOT NULL)');
    // A stale socket path (here a plain file) is replaced: only the lock holder serves.
    await writeFile(embeddedSocketPath(dataDir), 'left by a crash');
    socket = await serveEmbeddedDatabase(server, dataDir, { idleInTransactionTimeoutMs: IDLE_IN_TRANSACTION_MS });
    command = (await connectEmbeddedDatabase(dataDir))!;
    assert.ok(command, 'the command connects');
  });
  after(async () => {
    await command?.close();
    await socket?.close();
    await server?.close();
    await rm(parent, { recursive: true, force: true });
  });

  test('listens on DATA_DIR/orderpay.sock, owner-only', async () => {
    const info = await stat(socket.path);
    assert.equal(socket.path, path.join(dataDir, 'orderpay.sock'));
    assert.ok(info.isSocket());
    assert.equal(info.mode & 0o777, 0o600);
  });

  test("a command's transaction holds the server's queue: the server's statements wait for its COMMIT", async () => {
    await server.exec('DELETE FROM notes');
    const held = holdTransactionOpen(command, [1, 2]);
    await held.inside;
    const serverCount = countRows(server);
    assert.equal(await stillPending(serverCount), true, 'the server waits while the command is inside its transaction');
    held.finish();
    await held.committed;
    assert.equal(await serverCount, 2, 'the server saw the committed transaction, never half of it');
  });

  test("the server's own transaction is not entered by a command's statements", async () => {
    await server.exec('DELETE FROM notes');
    const held = holdTransactionOpen(server, [3, 4]);
    await held.inside;
    const commandCount = countRows(command);
    const commandWrite = command.query('INSERT INTO notes VALUES (5, $1)', ['command']);
    assert.equal(await stillPending(commandCount), true, 'the command waits while the server is inside its transaction');
    held.finish();
    await held.committed;
    assert.equal(await commandCount, 2);
    await commandWrite;
    assert.equal(await countRows(server), 3);
  });

  test('a command transaction that throws is rolled back; database errors keep their SQLSTATE and constraint', async () => {
    await server.exec('DELETE FROM notes');
    await command.query('INSERT INTO notes VALUES (6, $1)', ['kept']);
    const failure = new Error('the command changed its mind');
    await assert.rejects(
      command.transaction(async (tx) => {
        await tx.query('INSERT INTO notes VALUES (7, $1)', ['dropped']);
        throw failure;
      }),
      (error) => error === failure,
    );
    const duplicate = await command.query('INSERT INTO notes VALUES (6, $1)', ['again']).catch((error: unknown) => error);
    assert.equal(isUniqueViolation(duplicate, 'notes_pkey'), true, String(duplicate));
    assert.deepEqual((await server.query('SELECT id, body FROM notes ORDER BY id')).rows, [{ id: 6, body: 'kept' }]);
  });

  test('values arrive as the server reads them (int8, timestamptz, jsonb, bytea, arrays, null)', async () => {
    const sql = `SELECT 9007199254740991::int8 AS big, '2026-11-22 13:25:04.12+00'::timestamptz AS at,
      '{"a": [1, {"b": null}]}'::jsonb AS doc, '\\x00ff10'::bytea AS bytes, ARRAY['x', NULL]::text[] AS list,
      12.50::numeric AS amount, NULL::text AS nothing, $1::text AS param`;
    const params = ['p'];
    assert.deepEqual((await command.query(sql, params)).rows, (await server.query(sql, params)).rows);
    const [row] = (await command.query<{ at: string; bytes: Uint8Array }>(sql, params)).rows;
    assert.equal(row!.at, '2026-11-22T13:25:04.120Z');
    assert.deepEqual([...row!.bytes], [0, 255, 16]);
  });

  test('a command that disconnects inside a transaction is rolled back, and the server goes on', async () => {
    await server.exec('DELETE FROM notes');
    const raw = net.createConnection(socket.path);
    await new Promise((resolve) => raw.once('connect', resolve));
    let answers = 0;
    readFrames(raw, () => answers++);
    writeFrame(raw, { op: 'begin' });
    writeFrame(raw, { op: 'query', sql: 'INSERT INTO notes VALUES (8, $1)', params: ['orphan'] });
    while (answers < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    raw.destroy();
    assert.equal(await countRows(server), 0);
  });

  test('a command idle inside a transaction past the timeout is cut off and rolled back', async () => {
    await server.exec('DELETE FROM notes');
    const stalled = (await connectEmbeddedDatabase(dataDir))!;
    try {
      const transaction = stalled.transaction(async (tx) => {
        await tx.query('INSERT INTO notes VALUES (9, $1)', ['stalled']);
        await new Promise((resolve) => setTimeout(resolve, IDLE_IN_TRANSACTION_MS * 3));
        await tx.query('INSERT INTO notes VALUES (10, $1)', ['too late']);
      });
      await assert.rejects(transaction, { code: '08006' });
      assert.equal(await countRows(server), 0);
    } finally {
      await stalled.close();
    }
  });

  test('nothing listening (no socket, or one a killed server left): the command is told to open the directory itself', async () => {
    assert.equal(await connectEmbeddedDatabase(path.join(parent, 'never-served')), undefined);
    const crashedDir = path.join(parent, 'crashed');
    await mkdir(crashedDir);
    const listener = spawn(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(embeddedSocketPath(crashedDir))}, () => console.log('listening'))`,
    ]);
    await new Promise((resolve) => listener.stdout.once('data', resolve));
    listener.kill('SIGKILL');
    await new Promise((resolve) => listener.once('close', resolve));
    assert.ok((await stat(embeddedSocketPath(crashedDir))).isSocket(), 'a killed process leaves its socket');
    assert.equal(await connectEmbeddedDatabase(crashedDir), undefined);
  });
});

describe('closing the socket', () => {
  test('ends sessions, rolls back their transactions and removes the socket file', async () => {
    const parent = await mkdtemp(path.join(tmpdir(), 'orderpay-socket-'));
    const dataDir = path.join(parent, 'data');
    const server = await createDatabase({ databaseUrl: undefined, dataDir, db: DB_OPTIONS });
    try {
      await server.exec('CREATE TABLE notes (id int8 PRIMARY KEY, body text NOT NULL)');
      const socket = await serveEmbeddedDatabase(server, dataDir, { idleInTransactionTimeoutMs: 60_000 });
      const command = (await connectEmbeddedDatabase(dataDir))!;
      const inside = gate();
      const closed = gate();
      const transaction = command.transaction(async (tx) => {
        await tx.query('INSERT INTO notes VALUES (1, $1)', ['open at shutdown']);
        inside.open();
        await closed.opened;
        await tx.query('INSERT INTO notes VALUES (2, $1)', ['after shutdown']);
      });
      await inside.opened;
      await socket.close();
      closed.open();
      await assert.rejects(transaction, { code: '08006' });
      await command.close();
      await assert.rejects(stat(socket.path), { code: 'ENOENT' });
      assert.equal(await countRows(server), 0);
    } finally {
      await server.close();
      await rm(parent, { recursive: true, force: true });
    }
  });
});
