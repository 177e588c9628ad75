// Every command while `orderpay serve` runs, as real processes: on the embedded database they
// reach it through the server's socket in DATA_DIR (src/db/embedded-socket-server.ts), on
// PostgreSQL through their own connections. What a command writes the running server uses at once,
// and requests the server is serving meanwhile are not disturbed.
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { serverUrl } from '../helpers/db.ts';
import {
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  parseJsonOutput,
  runOrderpay,
  startServe,
  type Env,
  type ServeProcess,
  type TargetDatabase,
} from './orderpay-process.ts';

// This file's ports (29250–29269): one per server it starts.
const PORTS = { shared: 29250, socket: 29251, crashed: 29252, restarted: 29253 } as const;

after(cleanUpProcessesAndDatabases);

/** Runs a command with --json; it must exit 0 with nothing on stderr. */
async function succeed(env: Env, args: string[], input?: string): Promise<Record<string, unknown>> {
  const result = await runOrderpay([...args, '--json'], env, { input });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  assert.equal(result.stderr, '', args.join(' '));
  return parseJsonOutput(result.stdout);
}

async function getWithToken(server: ServeProcess, pathname: string, token: string): Promise<Response> {
  return fetch(`${server.listening.url}${pathname}`, { headers: { authorization: `Bearer ${token}` } });
}

/** Polls (bounded) until check passes: the server picks up a rotated key every 5 seconds. */
async function eventually(check: () => Promise<boolean>, what: string, deadlineMs = 15_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`${what}: not within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe(`commands while orderpay serve runs (${DATABASE_LABEL})`, () => {
  let target: TargetDatabase;
  let env: Env;
  let server: ServeProcess;
  before(async () => {
    target = await createTargetDatabase();
    // Under test: the orders placed beside the commands, not the writes budget, nor load shedding
    // (a 503 whenever this process is starved of CPU by the others on the machine).
    env = commandEnv({
      ...target.env,
      PORT: String(PORTS.shared),
      ORDERPAY_RATE_LIMIT_WRITES: '100000',
      ORDERPAY_HTTP_MAX_EVENT_LOOP_DELAY_MS: '0',
    });
    server = await startServe(env);
  });
  after(() => server?.stop());

  test('migrate, seed, users, tokens, clients and keys work, and the server uses what they write at once', async () => {
    assert.deepEqual(await succeed(env, ['migrate']), { applied: [] });
    assert.deepEqual(await succeed(env, ['seed']), { seeded: false, users: 0, products: 0, orders: 0 });

    const user = await succeed(env, ['users', 'create', '--email', 'newcomer@example.com', '--password-stdin'], 'newcomer-pass\n');
    assert.deepEqual(user, { id: user.id, email: 'newcomer@example.com', name: 'newcomer', role: 'customer' });
    const { users } = (await succeed(env, ['users', 'list'])) as { users: { email: string }[] };
    assert.ok(users.some((u) => u.email === 'newcomer@example.com'));

    // A token for the new user, accepted by the running server.
    const userToken = (await succeed(env, ['tokens', 'issue', '--email', 'newcomer@example.com'])).access_token as string;
    const orders = await getWithToken(server, '/v1/orders', userToken);
    assert.equal(orders.status, 200, await orders.clone().text());
    assert.deepEqual(((await orders.json()) as { data: unknown[] }).data, []);

    // A service client registered by the command signs in at the server with its secret.
    const client = await succeed(env, [
      ...['clients', 'create', '--name', 'Beside the server', '--confidential', '--grant', 'client_credentials'],
      ...['--scope', 'orders:read', '--api-version', '1'],
    ]);
    const tokenResponse = await fetch(`${server.listening.url}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'orders:read' }),
    });
    assert.equal(tokenResponse.status, 200, await tokenResponse.clone().text());
    const changed = await succeed(env, ['clients', 'set-api-version', '--client-id', client.client_id as string, '--api-version', '2']);
    assert.equal(changed.api_version, 2);
    const { clients } = (await succeed(env, ['clients', 'list'])) as { clients: { client_id: string; api_version: number }[] };
    assert.equal(clients.find((c) => c.client_id === client.client_id)?.api_version, 2);
    const clientToken = (await succeed(env, ['tokens', 'issue', '--client-id', client.client_id as string])).access_token as string;
    assert.equal(decodeJwt(clientToken).api_version, 2);

    // A rotated key: the server publishes it, and accepts what it signs.
    const rotated = (await succeed(env, ['keys', 'rotate'])) as { active: { kid: string; alg: string }[] };
    const newRs256 = rotated.active.find((k) => k.alg === 'RS256')!;
    const { keys } = (await succeed(env, ['keys', 'list'])) as { keys: { kid: string; alg: string; status: string }[] };
    assert.equal(keys.find((k) => k.status === 'active' && k.alg === 'RS256')?.kid, newRs256.kid);
    const signedByNewKey = (await succeed(env, ['tokens', 'issue', '--email', 'newcomer@example.com'])).access_token as string;
    assert.equal(decodeProtectedHeader(signedByNewKey).kid, newRs256.kid);
    await eventually(async () => (await getWithToken(server, '/v1/orders', signedByNewKey)).status === 200, 'a token of the rotated key');
  });

  test('commands run while the server serves requests: every request and every command succeeds', async () => {
    const token = server.listening.demoTokens['alice@example.com']!;
    const placed: number[] = [];
    // A bounded stream of writes (each its own transaction on the server) for as long as the
    // commands run, four at a time.
    let commandsDone = false;
    const placeOrders = async () => {
      for (let i = 0; i < 100 && (!commandsDone || placed.length < 8); i++) {
        const response = await fetch(`${server.listening.url}/v1/orders`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ productId: 1, qty: 1 }),
        });
        assert.equal(response.status, 201, await response.clone().text());
        placed.push(((await response.json()) as { id: number }).id);
      }
    };
    const load = Promise.all([placeOrders(), placeOrders(), placeOrders(), placeOrders()]);
    const commands = Promise.all([
      ...[1, 2, 3].map((n) => succeed(env, ['users', 'create', '--email', `busy${n}@example.com`, '--password-stdin'], `busy-pass-${n}\n`)),
      ...[1, 2].map(() => succeed(env, ['tokens', 'issue', '--email', 'alice@example.com'])),
      succeed(env, ['clients', 'create', '--name', 'Busy', '--confidential', '--grant', 'client_credentials', '--scope', 'orders:read']),
      succeed(env, ['seed']),
    ]).finally(() => {
      commandsDone = true;
    });
    const [created] = await Promise.all([commands, load]);
    assert.deepEqual(
      created.slice(0, 3).map((u) => u.email),
      ['busy1@example.com', 'busy2@example.com', 'busy3@example.com'],
    );
    assert.ok(placed.length >= 8);
    assert.equal(new Set(placed).size, placed.length, 'every order got its own id');
    for (const id of placed) assert.equal((await getWithToken(server, `/v1/orders/${id}`, token)).status, 200);
    const { users } = (await succeed(env, ['users', 'list'])) as { users: { email: string }[] };
    for (const n of [1, 2, 3]) assert.ok(users.some((u) => u.email === `busy${n}@example.com`));
  });
});

if (!serverUrl) {
  describe('the embedded database socket', () => {
    test('is DATA_DIR/orderpay.sock, mode 0600, while the server runs; removed at shutdown, after which commands open the directory', async () => {
      const target = await createTargetDatabase();
      const env = commandEnv({ ...target.env, PORT: String(PORTS.socket) });
      const socketPath = path.join(target.dataDir!, 'orderpay.sock');
      const server = await startServe(env);
      try {
        const stat = statSync(socketPath);
        assert.ok(stat.isSocket());
        assert.equal(stat.mode & 0o777, 0o600);
      } finally {
        assert.deepEqual(await server.stop(), { code: 0, signal: null });
      }
      assert.equal(server.stderr(), '');
      assert.equal(existsSync(socketPath), false);
      assert.equal(existsSync(`${target.dataDir}.lock`), false);
      const { users } = (await succeed(env, ['users', 'list'])) as { users: unknown[] };
      assert.ok(users.length > 0);
    });

    test('a socket left by a killed server blocks neither commands nor the next start', async () => {
      const target = await createTargetDatabase();
      const socketPath = path.join(target.dataDir!, 'orderpay.sock');
      const crashed = await startServe(commandEnv({ ...target.env, PORT: String(PORTS.crashed) }));
      assert.deepEqual(await crashed.stop('SIGKILL'), { code: null, signal: 'SIGKILL' });
      assert.ok(statSync(socketPath).isSocket(), 'a killed server cannot remove its socket');

      // No server: the command finds nobody listening and opens the directory itself.
      const env = commandEnv({ ...target.env, PORT: String(PORTS.restarted) });
      assert.deepEqual(await succeed(env, ['migrate']), { applied: [] });

      const restarted = await startServe(env);
      try {
        assert.ok(statSync(socketPath).isSocket());
        const user = await succeed(env, ['users', 'create', '--email', 'after-crash@example.com', '--password-stdin'], 'after-crash-1\n');
        assert.equal(user.email, 'after-crash@example.com');
      } finally {
        assert.deepEqual(await restarted.stop(), { code: 0, signal: null });
      }
      assert.equal(existsSync(socketPath), false);
    });
  });
}
