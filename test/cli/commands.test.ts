// `orderpay migrate | seed | tokens issue`, usage and configuration errors, spawned as real
// processes over a fresh database (embedded, or PostgreSQL when TEST_DATABASE_URL is set).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { LATEST_API_VERSION } from '../../src/core/api-versions.ts';
import {
  BIN_ENTRY,
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  parseJsonOutput,
  PUBLIC_URL,
  ROOT,
  runOrderpay,
  type Env,
  withTargetDatabase,
} from './orderpay-process.ts';
import { serverUrl } from '../helpers/db.ts';

const ALL_SCOPES =
  'orders:read orders:write products:write payments:read payments:write payments:refund events:read webhooks:read webhooks:write';
const CUSTOMER_SCOPES = 'orders:read orders:write payments:read payments:write';

after(cleanUpProcessesAndDatabases);

/** Runs a `--json` command that must exit 0 with nothing on stderr; returns the object it printed. */
async function runJsonCommand(args: string[], env: Env, options: { entry?: string } = {}): Promise<Record<string, unknown>> {
  const result = await runOrderpay(args, env, options);
  assert.equal(result.stderr, '');
  assert.equal(result.code, 0);
  return parseJsonOutput(result.stdout);
}

async function migrationVersions(): Promise<string[]> {
  const files = await readdir(path.join(ROOT, 'src/db/migrations'));
  return files
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.replace(/\.sql$/, ''))
    .sort();
}

describe(`orderpay migrate (${DATABASE_LABEL})`, () => {
  test('applies every migration once, then reports nothing to apply', async () => {
    const env = commandEnv((await createTargetDatabase()).env);

    assert.deepEqual(await runJsonCommand(['migrate', '--json'], env), { applied: await migrationVersions() });

    assert.deepEqual(await runJsonCommand(['migrate', '--json'], env), { applied: [] });
  });

  test('bin/orderpay.js runs the same command, with --json and for humans', async () => {
    const env = commandEnv((await createTargetDatabase()).env);

    assert.deepEqual(await runJsonCommand(['migrate', '--json'], env, { entry: BIN_ENTRY }), { applied: await migrationVersions() });

    const human = await runOrderpay(['migrate'], env, { entry: BIN_ENTRY });
    assert.equal(human.code, 0);
    assert.equal(human.stdout, 'Database is up to date\n');
  });
});

describe(`orderpay seed (${DATABASE_LABEL})`, () => {
  test('loads the demo data into an empty database once', async () => {
    const env = commandEnv((await createTargetDatabase()).env);

    const seeded = await runJsonCommand(['seed', '--json'], env);
    assert.deepEqual(Object.keys(seeded).sort(), ['orders', 'products', 'seeded', 'users']);
    assert.equal(seeded.seeded, true);
    // A staff user and customers; orders in each of the five statuses.
    assert.ok(Number.isInteger(seeded.users) && (seeded.users as number) >= 2, `users: ${seeded.users}`);
    assert.ok(Number.isInteger(seeded.products) && (seeded.products as number) >= 1, `products: ${seeded.products}`);
    assert.ok(Number.isInteger(seeded.orders) && (seeded.orders as number) >= 5, `orders: ${seeded.orders}`);

    assert.deepEqual(await runJsonCommand(['seed', '--json'], env), { seeded: false, users: 0, products: 0, orders: 0 });
  });
});

describe(`orderpay tokens issue (${DATABASE_LABEL})`, () => {
  let env: Env;
  before(async () => {
    env = commandEnv((await createTargetDatabase()).env);
    const seed = await runOrderpay(['seed', '--json'], env);
    assert.equal(seed.code, 0, seed.stderr);
  });

  async function issue(
    args: string[],
  ): Promise<{ body: Record<string, unknown>; header: Record<string, unknown>; claims: Record<string, unknown> }> {
    const body = await runJsonCommand(['tokens', 'issue', ...args, '--json'], env);
    assert.equal(typeof body.access_token, 'string');
    const token = body.access_token as string;
    return { body, header: decodeProtectedHeader(token), claims: decodeJwt(token) };
  }

  /** What `tokens issue --json` prints: the token, and the issuer and audience it is signed for. */
  const tokenResponse = (accessToken: unknown) => ({
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: 600,
    issuer: `${PUBLIC_URL}/oauth`,
    audience: PUBLIC_URL,
  });

  async function refuse(args: string[]): Promise<string> {
    const result = await runOrderpay(['tokens', 'issue', ...args, '--json'], env);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, '');
    const error = parseJsonOutput(result.stderr);
    assert.deepEqual(Object.keys(error), ['error']);
    assert.equal(typeof error.error, 'string');
    return error.error as string;
  }

  test('a customer gets an RFC 9068 access token with every scope but products:write', async () => {
    const { body, header, claims } = await issue(['--email', 'alice@example.com']);
    assert.deepEqual(body, tokenResponse(body.access_token));
    assert.equal(header.typ, 'at+jwt');
    assert.equal(header.alg, 'RS256');
    assert.equal(typeof header.kid, 'string');
    assert.match(claims.sub as string, /^[1-9]\d*$/);
    assert.equal(claims.client_id, 'orderpay-cli');
    assert.equal(claims.scope, CUSTOMER_SCOPES);
    assert.equal(claims.iss, `${PUBLIC_URL}/oauth`);
    assert.equal(claims.aud, PUBLIC_URL);
    assert.equal(claims.roles, undefined);
    assert.equal(claims.api_version, undefined, 'a user token names no client pin: unpinned');
    assert.equal(typeof claims.jti, 'string');
    assert.equal((claims.exp as number) - (claims.iat as number), 600);
    assert.ok(Math.abs((claims.iat as number) - Date.now() / 1000) < 60, 'issued now');
  });

  test('staff get every scope and the staff role; each user is their own subject', async () => {
    const staff = await issue(['--email', 'staff@example.com']);
    const alice = await issue(['--email', 'alice@example.com']);
    assert.equal(staff.claims.scope, ALL_SCOPES);
    assert.deepEqual(staff.claims.roles, ['staff']);
    assert.match(staff.claims.sub as string, /^[1-9]\d*$/);
    assert.notEqual(staff.claims.sub, alice.claims.sub);
  });

  test('--scope narrows the token; a customer asking for products:write is refused', async () => {
    const narrowed = await issue(['--email', 'alice@example.com', '--scope', 'orders:read']);
    assert.equal(narrowed.claims.scope, 'orders:read');

    assert.match(
      await refuse(['--email', 'alice@example.com', '--scope', 'orders:read products:write']),
      /customer cannot hold products:write/,
    );
    assert.match(await refuse(['--email', 'alice@example.com', '--scope', 'orders:delete']), /unknown scope orders:delete/);
  });

  test('--client-id issues a service token whose subject is the client', async () => {
    const { body, header, claims } = await issue(['--client-id', 'svc']);
    assert.deepEqual(body, tokenResponse(body.access_token));
    assert.equal(header.typ, 'at+jwt');
    assert.equal(claims.sub, 'svc');
    assert.equal(claims.client_id, 'svc');
    assert.equal(claims.scope, ALL_SCOPES);
    assert.equal(claims.roles, undefined);
    assert.equal(claims.api_version, undefined, 'svc is not a registered client: unpinned');
  });

  test('the seeded demo client is pinned to the latest API version, and its token says so', async () => {
    const { claims } = await issue(['--client-id', 'orderpay-demo']);
    assert.equal(claims.sub, 'orderpay-demo');
    assert.equal(claims.api_version, LATEST_API_VERSION);
  });

  test('--expires-in sets the lifetime within 1–86400 seconds', async () => {
    const { body, claims } = await issue(['--client-id', 'svc', '--expires-in', '60']);
    assert.equal(body.expires_in, 60);
    assert.equal((claims.exp as number) - (claims.iat as number), 60);

    assert.match(await refuse(['--client-id', 'svc', '--expires-in', '0']), /--expires-in/);
    assert.match(await refuse(['--client-id', 'svc', '--expires-in', '86401']), /--expires-in/);
  });

  test('an unknown user, or not exactly one subject, exits 2', async () => {
    const where = serverUrl ? /in [^ ]+ \(DATABASE_URL, PostgreSQL\)$/ : /in \/\S+\/data \(DATA_DIR, the embedded database\)$/;
    const unknown = await refuse(['--email', 'nobody@example.com']);
    assert.match(unknown, /^no user with email nobody@example\.com in /);
    assert.match(unknown, where, 'it says which database it looked in');
    assert.match(await refuse([]), /exactly one of --email or --client-id/);
    assert.match(await refuse(['--email', 'alice@example.com', '--client-id', 'svc']), /exactly one of --email or --client-id/);
  });

  test('without --json the token alone is printed, and on stderr the issuer and audience it is signed for', async () => {
    const result = await runOrderpay(['tokens', 'issue', '--client-id', 'svc'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    assert.equal(decodeJwt(result.stdout.trim()).sub, 'svc');
    assert.equal(result.stderr, `Signed for issuer ${PUBLIC_URL}/oauth and audience ${PUBLIC_URL}: only a server with these accepts it.\n`);
  });
});

describe(`commands find the server's database, never make one (${DATABASE_LABEL})`, () => {
  test('users, clients, keys and tokens on a database no server made exit 2 saying where they looked, and leave nothing behind', async () => {
    const target = await createTargetDatabase();
    const env = commandEnv(target.env);
    for (const args of [
      ['users', 'list'],
      ['clients', 'list'],
      ['keys', 'list'],
      ['tokens', 'issue', '--email', 'alice@example.com'],
    ]) {
      const result = await runOrderpay([...args, '--json'], env);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      const { error } = parseJsonOutput(result.stderr) as { error: string };
      assert.match(error, /^no orderpay database at /, args.join(' '));
      assert.match(
        error,
        serverUrl ? /\(DATABASE_URL, PostgreSQL\)/ : new RegExp(`${target.dataDir} \\(DATA_DIR, the embedded database\\)`),
      );
    }
    if (target.dataDir) assert.equal(existsSync(target.dataDir), false, 'no data directory was made');
    else {
      const tables = await withTargetDatabase(
        target,
        async (db) => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'")).rows[0]!.n,
      );
      assert.equal(tables, 0, 'nothing was migrated');
    }
    // Once a server (here: migrate) has made it, the same commands work.
    assert.deepEqual(Object.keys(await runJsonCommand(['migrate', '--json'], env)), ['applied']);
    assert.equal((await runOrderpay(['users', 'list', '--json'], env)).code, 0);
  });

  test('tokens issue --json without PUBLIC_URL warns that the issuer comes from PORT alone', async () => {
    const target = await createTargetDatabase();
    const { PUBLIC_URL: _publicUrl, ...env } = commandEnv({ ...target.env, PORT: '3999' });
    assert.equal((await runOrderpay(['seed', '--json'], env)).code, 0);
    const result = await runOrderpay(['tokens', 'issue', '--email', 'alice@example.com', '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(parseJsonOutput(result.stdout).issuer, 'http://127.0.0.1:3999/oauth');
    assert.deepEqual(parseJsonOutput(result.stderr), {
      warning: 'signed for issuer http://127.0.0.1:3999/oauth (from PORT; no PUBLIC_URL): only a server with this issuer accepts it',
    });
  });
});

describe('orderpay usage and configuration errors', () => {
  // Never created: these commands must fail before they touch a database.
  const untouched = path.join(ROOT, 'test/cli/.no-such-data-dir');
  const env = commandEnv({ DATA_DIR: untouched });
  after(() => assert.equal(existsSync(untouched), false, 'no command opened the database'));

  test('--help prints the usage and exits 0', async () => {
    for (const args of [['--help'], ['help'], ['migrate', '--help']]) {
      const result = await runOrderpay(args, env);
      assert.equal(result.code, 0, args.join(' '));
      assert.equal(result.stderr, '');
      assert.match(result.stdout, /^Usage: orderpay <command> \[options\]\n/);
      for (const command of ['serve', 'migrate', 'seed', 'tokens issue', 'users disable', 'users erase', 'clients rotate-secret', '--json'])
        assert.ok(result.stdout.includes(command), command);
    }
  });

  test('no command exits 2 with the usage on stderr', async () => {
    const result = await runOrderpay([], env);
    assert.equal(result.code, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^Usage: orderpay <command> \[options\]\n/);
  });

  test('an unknown command exits 2 naming it', async () => {
    const human = await runOrderpay(['frobnicate'], env);
    assert.equal(human.code, 2);
    assert.equal(human.stdout, '');
    assert.match(human.stderr, /^orderpay: unknown command "frobnicate"\n/);
    assert.match(human.stderr, /Usage: orderpay/);

    const json = await runOrderpay(['frobnicate', '--json'], env);
    assert.equal(json.code, 2);
    assert.equal(json.stdout, '');
    assert.match(parseJsonOutput(json.stderr).error as string, /^unknown command "frobnicate"/);

    const sub = await runOrderpay(['tokens', 'revoke', '--json'], env);
    assert.equal(sub.code, 2);
    assert.match(parseJsonOutput(sub.stderr).error as string, /usage: orderpay tokens issue/);
  });

  test('an unknown option exits 2 with a one-line message, not a stack trace', async () => {
    const human = await runOrderpay(['migrate', '--frobnicate'], env);
    assert.equal(human.code, 2);
    assert.equal(human.stdout, '');
    assert.match(human.stderr, /^orderpay: .*--frobnicate.*\n$/);

    const json = await runOrderpay(['migrate', '--frobnicate', '--json'], env);
    assert.equal(json.code, 2);
    assert.match(parseJsonOutput(json.stderr).error as string, /--frobnicate/);
  });

  test('an invalid environment exits 2 naming the variable and the value', async () => {
    const human = await runOrderpay(['migrate'], { ...env, PORT: 'abc' });
    assert.equal(human.code, 2);
    assert.equal(human.stdout, '');
    assert.equal(human.stderr, 'orderpay: PORT must be a whole number, got "abc"\n');

    const json = await runOrderpay(['serve', '--json'], { ...env, PORT: 'abc' });
    assert.equal(json.code, 2);
    assert.equal(json.stdout, '');
    assert.deepEqual(parseJsonOutput(json.stderr), { error: 'PORT must be a whole number, got "abc"' });

    const level = await runOrderpay(['migrate', '--json'], { ...env, LOG_LEVEL: 'loud' });
    assert.equal(level.code, 2);
    assert.match(parseJsonOutput(level.stderr).error as string, /^LOG_LEVEL must be one of /);
  });
});
