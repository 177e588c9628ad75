// `orderpay users | clients | keys`, spawned as real processes over a fresh database (embedded,
// or PostgreSQL when TEST_DATABASE_URL is set); the rows they leave are read back afterwards.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from 'jose';
import { MAX_SIGNED_TOKEN_LIFETIME_SECONDS } from '../../src/auth/keys.store.ts';
import { verifyClientSecret, verifyPassword } from '../../src/auth/passwords.ts';
import { API_VERSION_NUMBERS, LATEST_API_VERSION } from '../../src/core/api-versions.ts';
import { createDatabase } from '../../src/db/create-database.ts';
import { DB_OPTIONS, serverUrl } from '../helpers/db.ts';
// Every command here runs to completion (runOrderpay kills it past its deadline), so no process
// outlives a test; the database is dropped at the end.
import {
  commandEnv,
  createTargetDatabase,
  parseJsonOutput,
  runOrderpay,
  type CommandResult,
  type Env,
  type TargetDatabase,
} from './orderpay-process.ts';

const DATABASE = serverUrl ? 'PostgreSQL' : 'embedded PGlite';
const CLIENT_ID = /^op_[\w-]{22}$/;

/** One database for the file, migrated up front so each command does only its own work. */
let target: TargetDatabase | undefined;
let env: Env;
after(() => target?.drop());
before(async () => {
  target = await createTargetDatabase();
  env = commandEnv(target.env);
  const migrated = await runOrderpay(['migrate', '--json'], env);
  assert.equal(migrated.code, 0, migrated.stderr);
});

/** Reads rows straight from the database (between commands: the embedded one admits one process). */
async function queryRows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const db = await createDatabase({ databaseUrl: target!.env.DATABASE_URL, dataDir: target!.dataDir ?? '', db: DB_OPTIONS });
  try {
    return (await db.query<T>(sql, params)).rows;
  } finally {
    await db.close();
  }
}

/** `input`: the command's stdin (the password, for `users create --password-stdin`). */
async function succeed(args: string[], input?: string): Promise<Record<string, unknown>> {
  const result = await runOrderpay([...args, '--json'], env, { input });
  assert.equal(result.stderr, '', args.join(' '));
  assert.equal(result.code, 0);
  return parseJsonOutput(result.stdout);
}

/** Exit 2, nothing on stdout, `{"error": …}` on stderr. */
async function refuse(args: string[], input?: string): Promise<string> {
  const result = await runOrderpay([...args, '--json'], env, { input });
  assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
  assert.equal(result.stdout, '');
  const error = parseJsonOutput(result.stderr);
  assert.deepEqual(Object.keys(error), ['error']);
  return error.error as string;
}

function assertHuman(result: CommandResult): string {
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  return result.stdout;
}

/** The cells of a human-readable table, row by row (columns are two or more spaces apart). */
const tableRows = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/));

describe(`orderpay users (${DATABASE})`, () => {
  test('create stores an scrypt hash of the password, never the password', async () => {
    const user = await succeed(
      ['users', 'create', '--email', 'dana@example.com', '--password-stdin', '--name', 'Dana Scully', '--role', 'staff'],
      'dana-s3cret-pass\n',
    );
    assert.deepEqual(user, { id: user.id, email: 'dana@example.com', name: 'Dana Scully', role: 'staff' });
    assert.ok(Number.isInteger(user.id));

    const [row] = await queryRows<{ email: string; name: string; role: string; password_hash: string }>(
      'SELECT email, name, role, password_hash FROM users WHERE id = $1',
      [user.id],
    );
    assert.deepEqual(
      { ...row, password_hash: undefined },
      { email: 'dana@example.com', name: 'Dana Scully', role: 'staff', password_hash: undefined },
    );
    assert.match(row!.password_hash, /^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    assert.ok(!row!.password_hash.includes('dana-s3cret-pass'));
    assert.equal(await verifyPassword(row!.password_hash, 'dana-s3cret-pass'), true);
    assert.equal(await verifyPassword(row!.password_hash, 'dana-s3cret-pasS'), false);
  });

  test('create defaults to a customer named after the email', async () => {
    const user = await succeed(['users', 'create', '--email', 'erin@example.com', '--password-stdin'], '12345678\n');
    assert.deepEqual(user, { id: user.id, email: 'erin@example.com', name: 'erin', role: 'customer' });

    const human = assertHuman(
      await runOrderpay(['users', 'create', '--email', 'fay@example.com', '--password-stdin'], env, { input: 'fay-password\n' }),
    );
    assert.match(human, /^Created customer fay@example\.com \(id \d+\)\n$/);
  });

  test('a duplicate email, in any case, exits 2 and changes nothing', async () => {
    await succeed(['users', 'create', '--email', 'gil@example.com', '--password-stdin'], 'first-password\n');
    assert.equal(
      await refuse(['users', 'create', '--email', 'GIL@example.com', '--password-stdin'], 'second-password\n'),
      'a user with email GIL@example.com already exists',
    );
    const rows = await queryRows<{ password_hash: string }>("SELECT password_hash FROM users WHERE lower(email) = 'gil@example.com'");
    assert.equal(rows.length, 1);
    assert.equal(await verifyPassword(rows[0]!.password_hash, 'first-password'), true);
  });

  test('a short password, a bad role or email, a missing option exits 2 without a row', async () => {
    assert.equal(
      await refuse(['users', 'create', '--email', 'hal@example.com', '--password-stdin'], '1234567\n'),
      'password must be at least 8 characters',
    );
    assert.match(
      await refuse(['users', 'create', '--email', 'hal@example.com', '--password-stdin', '--role', 'admin'], '12345678\n'),
      /--role must be customer or staff, got "admin"/,
    );
    assert.match(
      await refuse(['users', 'create', '--email', 'not-an-email', '--password-stdin'], '12345678\n'),
      /--email "not-an-email" is not an email address/,
    );
    assert.match(
      await refuse(['users', 'create', '--email', 'hİl@example.com', '--password-stdin'], '12345678\n'),
      /--email "hİl@example.com": account emails are ASCII/,
    );
    assert.match(await refuse(['users', 'create', '--email', 'hal@example.com']), /^no password: pipe it in with --password-stdin/);
    assert.match(await refuse(['users', 'create', '--password-stdin'], '12345678\n'), /usage: orderpay users create/);
    assert.match(
      await refuse(['users', 'create', '--email', 'hal@example.com', '--password-stdin', '--scope', 'x'], '12345678\n'),
      /--scope/,
    );
    assert.match(await refuse(['users', 'delete']), /usage: orderpay users create/);
    assert.deepEqual(await queryRows("SELECT id FROM users WHERE email = 'hal@example.com'"), []);
  });

  test('list shows users without their password hashes', async () => {
    const created = await succeed(
      ['users', 'create', '--email', 'ivy@example.com', '--password-stdin', '--role', 'staff'],
      'ivy-password\n',
    );
    const result = await runOrderpay(['users', 'list', '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.doesNotMatch(result.stdout, /scrypt/);
    const { users } = parseJsonOutput(result.stdout) as { users: Record<string, unknown>[] };
    const ivy = users.find((u) => u.email === 'ivy@example.com');
    assert.deepEqual(ivy, {
      id: created.id,
      email: 'ivy@example.com',
      name: 'ivy',
      role: 'staff',
      status: 'active',
      disabledAt: null,
      erasedAt: null,
      hasPassword: true,
      createdAt: ivy?.createdAt,
    });
    assert.match(ivy!.createdAt as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const human = assertHuman(await runOrderpay(['users', 'list'], env));
    assert.ok(
      tableRows(human).some((cells) => cells.join('|') === `${created.id}|staff|active|set|ivy@example.com|ivy`),
      human,
    );
  });

  test('list says in its table whether each user has a password', async () => {
    const [withPassword] = await queryRows<{ id: number }>('SELECT id FROM users WHERE password_hash IS NOT NULL ORDER BY id LIMIT 1');
    const [without] = await queryRows<{ id: number }>(
      "INSERT INTO users (email, name, role) VALUES ('nopass@example.com', 'No Pass', 'customer') RETURNING id",
    );
    const human = assertHuman(await runOrderpay(['users', 'list'], env));
    const [header, ...rows] = tableRows(human);
    assert.deepEqual(header, ['ID', 'ROLE', 'STATUS', 'PASSWORD', 'EMAIL', 'NAME']);
    assert.deepEqual(
      rows.find(([id]) => id === String(without!.id)),
      [String(without!.id), 'customer', 'active', 'not set', 'nopass@example.com', 'No Pass'],
    );
    assert.equal(rows.find(([id]) => id === String(withPassword!.id))?.[3], 'set');
    // The columns line up: every row's email starts where the header's EMAIL does.
    const lines = human.trimEnd().split('\n');
    const emailColumn = lines[0]!.indexOf('EMAIL');
    for (const line of lines.slice(1)) assert.match(line.slice(emailColumn), /^\S+@/, line);
  });
});

describe(`orderpay clients (${DATABASE})`, () => {
  interface ClientRow {
    client_name: string;
    metadata: Record<string, unknown>;
    api_version: number;
  }
  const findClient = async (clientId: string) =>
    (await queryRows<ClientRow>('SELECT client_name, metadata, api_version FROM oauth_clients WHERE client_id = $1', [clientId]))[0];

  test('create --public registers an authorization-code client without a secret', async () => {
    const client = await succeed([
      'clients',
      'create',
      '--name',
      'Shop app',
      '--public',
      '--redirect-uri',
      'http://127.0.0.1:8080/callback',
      '--redirect-uri',
      'https://shop.example/callback',
      '--scope',
      'openid orders:read orders:write offline_access',
    ]);
    assert.match(client.client_id as string, CLIENT_ID);
    assert.deepEqual(client, {
      client_id: client.client_id,
      client_id_issued_at: client.client_id_issued_at,
      client_name: 'Shop app',
      client_type: 'public',
      redirect_uris: ['http://127.0.0.1:8080/callback', 'https://shop.example/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
      profile: 'oauth2.1',
      scope: 'openid orders:read orders:write offline_access',
      api_version: LATEST_API_VERSION,
      status: 'active',
    });
    assert.ok(Math.abs((client.client_id_issued_at as number) - Date.now() / 1000) < 120);

    assert.deepEqual(await findClient(client.client_id as string), {
      client_name: 'Shop app',
      metadata: {
        client_id: client.client_id,
        client_name: 'Shop app',
        redirect_uris: ['http://127.0.0.1:8080/callback', 'https://shop.example/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        scope: 'openid orders:read orders:write offline_access',
      },
      api_version: LATEST_API_VERSION,
    });
  });

  test('create --public without --scope gets every scope but the staff-only one', async () => {
    const client = await succeed(['clients', 'create', '--name', 'Defaults', '--public', '--redirect-uri', 'http://[::1]/cb']);
    assert.equal(client.scope, 'openid profile email offline_access orders:read orders:write payments:read payments:write');
    assert.deepEqual(client.redirect_uris, ['http://[::1]/cb']);
  });

  test('create --confidential prints the secret once and stores only its scrypt hash', async () => {
    const result = await runOrderpay(
      [
        'clients',
        'create',
        '--name',
        'Shipping',
        '--confidential',
        '--grant',
        'client_credentials',
        '--scope',
        'orders:read orders:write',
        '--json',
      ],
      env,
    );
    assert.equal(result.code, 0, result.stderr);
    const client = parseJsonOutput(result.stdout);
    const secret = client.client_secret as string;
    assert.match(secret, /^[\w-]{43}$/, '32 random bytes, base64url');
    assert.deepEqual(client, {
      client_id: client.client_id,
      client_secret: secret,
      client_secret_expires_at: 0,
      client_id_issued_at: client.client_id_issued_at,
      client_name: 'Shipping',
      client_type: 'confidential',
      redirect_uris: [],
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
      profile: 'oauth2.1',
      scope: 'orders:read orders:write',
      api_version: LATEST_API_VERSION,
      status: 'active',
    });

    const row = await findClient(client.client_id as string);
    assert.equal(row!.api_version, LATEST_API_VERSION);
    const stored = row!.metadata.client_secret as string;
    assert.match(stored, /^scrypt\$32768\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
    assert.notEqual(stored, secret);
    assert.ok(!JSON.stringify(row).includes(secret), 'the plaintext secret is nowhere in the row');
    assert.equal(await verifyClientSecret(stored, secret), true);
    assert.deepEqual(
      { ...row!.metadata, client_secret: undefined },
      {
        client_id: client.client_id,
        client_secret: undefined,
        client_name: 'Shipping',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: 'orders:read orders:write',
      },
    );

    // The human form shows the secret too, and says it will not be shown again.
    const human = assertHuman(
      await runOrderpay(
        ['clients', 'create', '--name', 'Human', '--confidential', '--grant', 'client_credentials', '--scope', 'orders:read'],
        env,
      ),
    );
    assert.match(human, /^ {2}client_secret: [\w-]{43}$/m);
    assert.match(human, /shown only this once/);
  });

  test('create --confidential --grant authorization_code: a server-side app with a secret, redirect URIs and refresh tokens', async () => {
    const client = await succeed([
      ...['clients', 'create', '--name', 'Web shop', '--confidential', '--grant', 'authorization_code'],
      ...['--redirect-uri', 'https://shop.example/cb', '--scope', 'openid offline_access orders:read'],
    ]);
    assert.match(client.client_secret as string, /^[\w-]{43}$/);
    assert.deepEqual(client.grant_types, ['authorization_code', 'refresh_token']);
    assert.deepEqual(client.redirect_uris, ['https://shop.example/cb']);
    assert.equal(client.token_endpoint_auth_method, 'client_secret_basic');
    assert.equal(client.profile, 'oauth2.1');
  });

  test('create --profile fapi2: no secret, its public keys, list shows the profile; set-keys replaces them; it has no secret to rotate', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: 'bank-1', use: 'sig' };
    const jwksFile = join(await mkdtemp(join(tmpdir(), 'orderpay-jwks-')), 'jwks.json');
    await writeFile(jwksFile, JSON.stringify({ keys: [jwk] }));
    const client = await succeed([
      ...['clients', 'create', '--name', 'Bank app', '--confidential', '--profile', 'fapi2', '--grant', 'authorization_code'],
      ...['--redirect-uri', 'https://bank.example/cb', '--scope', 'openid payments:write', '--jwks-file', jwksFile],
    ]);
    assert.deepEqual(client, {
      client_id: client.client_id,
      client_id_issued_at: client.client_id_issued_at,
      client_name: 'Bank app',
      client_type: 'confidential',
      redirect_uris: ['https://bank.example/cb'],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [jwk] },
      profile: 'fapi2',
      scope: 'openid payments:write',
      api_version: LATEST_API_VERSION,
      status: 'active',
    });
    const metadata = (await findClient(client.client_id as string))!.metadata;
    assert.equal(metadata.require_pushed_authorization_requests, true);
    assert.equal(metadata.dpop_bound_access_tokens, true);
    assert.equal(metadata.client_secret, undefined);

    const human = assertHuman(await runOrderpay(['clients', 'list'], env));
    assert.ok(
      human.includes(
        `${client.client_id}  confidential  "Bank app"\n  grants: authorization_code refresh_token\n  profile: fapi2 (FAPI 2.0: private_key_jwt, PAR, DPoP)\n  keys: 1 by value (bank-1)\n`,
      ),
      human,
    );

    const moved = await succeed([
      'clients',
      'set-keys',
      '--client-id',
      client.client_id as string,
      '--jwks-uri',
      'https://bank.example/jwks.json',
    ]);
    assert.equal(moved.jwks_uri, 'https://bank.example/jwks.json');
    assert.equal(moved.jwks, undefined);
    assert.equal((await findClient(client.client_id as string))!.metadata.jwks, undefined);

    // A private key, or a secret to rotate, is refused.
    await writeFile(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: 'bank-2' }] }));
    assert.match(
      await refuse(['clients', 'set-keys', '--client-id', client.client_id as string, '--jwks-file', jwksFile]),
      /holds private members \(d\)/,
    );
    assert.match(await refuse(['clients', 'rotate-secret', '--client-id', client.client_id as string]), /no secret to rotate/);
    await rm(dirname(jwksFile), { recursive: true });
  });

  test('ORDERPAY_FAPI2_FOR_PAYMENTS: a confidential client with payments:write is refused off the profile; list says what is withheld', async () => {
    const required = { ...env, ORDERPAY_FAPI2_FOR_PAYMENTS: 'true' };
    const refused = await runOrderpay(
      [
        'clients',
        'create',
        '--name',
        'Payouts',
        '--confidential',
        '--grant',
        'client_credentials',
        '--scope',
        'orders:read payments:write',
        '--json',
      ],
      required,
    );
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /ORDERPAY_FAPI2_FOR_PAYMENTS is on: a confidential client holds payments:write only on the FAPI 2.0 profile/,
    );
    // One registered before the setting was turned on: listed with what it no longer holds.
    const earlier = await succeed([
      'clients',
      'create',
      '--name',
      'Earlier payouts',
      '--confidential',
      '--grant',
      'client_credentials',
      '--scope',
      'payments:write payments:refund',
    ]);
    const listed = await runOrderpay(['clients', 'list', '--json'], required);
    const { clients } = parseJsonOutput(listed.stdout) as { clients: Record<string, unknown>[] };
    assert.equal(clients.find((c) => c.client_id === earlier.client_id)?.withheld_scope, 'payments:write payments:refund');
  });

  test('redirect URIs that are not https (or loopback http), or carry a fragment, exit 2 without a row', async () => {
    const cases: [string, RegExp][] = [
      ['http://shop.example/callback', /must use https/],
      ['https://shop.example/callback#done', /must not contain a fragment/],
      ['/callback', /not an absolute URI/],
      ['com.example.app:/callback', /must use https/],
      ['https://user:pw@shop.example/cb', /must not contain credentials/],
    ];
    for (const [uri, message] of cases) {
      const error = await refuse([
        'clients',
        'create',
        '--name',
        'Rejected',
        '--public',
        '--redirect-uri',
        'https://ok.example/cb',
        '--redirect-uri',
        uri,
      ]);
      assert.match(error, message, uri);
      assert.ok(error.includes(uri), `names the URI: ${error}`);
    }
    assert.deepEqual(await queryRows("SELECT client_id FROM oauth_clients WHERE client_name = 'Rejected'"), []);
  });

  test('scopes outside the allowed set, and identity scopes on a service client, exit 2', async () => {
    assert.match(
      await refuse([
        'clients',
        'create',
        '--name',
        'Rejected',
        '--public',
        '--redirect-uri',
        'https://a.example/cb',
        '--scope',
        'openid orders:delete',
      ]),
      /a public client cannot have scope orders:delete/,
    );
    for (const scope of ['openid', 'profile', 'email', 'offline_access']) {
      assert.match(
        await refuse([
          'clients',
          'create',
          '--name',
          'Rejected',
          '--confidential',
          '--grant',
          'client_credentials',
          '--scope',
          `orders:read ${scope}`,
        ]),
        new RegExp(`a client-credentials client cannot have scope ${scope}`),
      );
    }
    assert.deepEqual(await queryRows("SELECT client_id FROM oauth_clients WHERE client_name = 'Rejected'"), []);
  });

  test('a command line that is not one of the two shapes exits 2', async () => {
    const SERVICE = ['--name', 'X', '--confidential', '--grant', 'client_credentials', '--scope', 'orders:read'];
    const refusals: [string[], RegExp][] = [
      [['--name', 'X', '--redirect-uri', 'https://a.example/cb'], /exactly one of --public or --confidential/],
      [
        ['--name', 'X', '--public', '--confidential', '--redirect-uri', 'https://a.example/cb'],
        /exactly one of --public or --confidential/,
      ],
      [['--public', '--redirect-uri', 'https://a.example/cb'], /needs --name/],
      [['--name', 'X', '--public'], /at least one redirect URI/],
      [['--name', 'X', '--public', '--redirect-uri', 'https://a.example/cb', '--grant', 'client_credentials'], /drop --grant/],
      [['--name', 'X', '--confidential', '--scope', 'orders:read'], /needs --grant client_credentials/],
      [['--name', 'X', '--confidential', '--grant', 'authorization_code', '--scope', 'orders:read'], /needs a redirect URI/],
      [['--name', 'X', '--confidential', '--grant', 'password', '--scope', 'orders:read'], /not password/],
      [['--name', 'X', '--public', '--redirect-uri', 'https://a.example/cb', '--profile', 'fapi2'], /a FAPI 2.0 client is confidential/],
      [[...SERVICE, '--jwks-uri', 'https://a.example/jwks'], /only a --profile fapi2 client authenticates with keys/],
      [[...SERVICE, '--profile', 'fapi2'], /exactly one of --jwks-file or --jwks-uri/],
      [[...SERVICE, '--profile', 'fapi1'], /not a client profile/],
      [['--name', 'X', '--confidential', '--grant', 'client_credentials'], /needs --scope/],
      [[...SERVICE, '--redirect-uri', 'https://a.example/cb'], /drop --redirect-uri/],
      [['--name', 'X', '--public', '--redirect-uri'], /--redirect-uri/],
    ];
    for (const [args, message] of refusals) assert.match(await refuse(['clients', 'create', ...args]), message, args.join(' '));
  });

  test('list shows every client and never a secret or its hash', async () => {
    const created = await succeed([
      'clients',
      'create',
      '--name',
      'Listed',
      '--confidential',
      '--grant',
      'client_credentials',
      '--scope',
      'payments:read',
    ]);
    const result = await runOrderpay(['clients', 'list', '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(!result.stdout.includes(created.client_secret as string));
    assert.doesNotMatch(result.stdout, /scrypt|"client_secret"/);
    const { clients } = parseJsonOutput(result.stdout) as { clients: Record<string, unknown>[] };
    const { client_secret: _secret, client_secret_expires_at: _expiry, ...expected } = created;
    assert.deepEqual(
      clients.find((c) => c.client_id === created.client_id),
      expected,
    );
    assert.ok(clients.some((c) => c.client_name === 'Shop app' && c.client_type === 'public'));

    const human = assertHuman(await runOrderpay(['clients', 'list'], env));
    assert.ok(human.includes(`${created.client_id}  confidential  "Listed"`));
    assert.ok(
      human.includes(
        `${created.client_id}  confidential  "Listed"\n  grants: client_credentials\n  profile: oauth2.1\n  scope: payments:read\n  API version: v${LATEST_API_VERSION}\n`,
      ),
    );
    assert.doesNotMatch(human, /scrypt|secret/);
  });

  /** `clients create` of an orders:read service client, with `extra` options. */
  const createServiceArgs = (name: string, ...extra: string[]) => [
    ...['clients', 'create', '--name', name, '--confidential', '--grant', 'client_credentials', '--scope', 'orders:read'],
    ...extra,
  ];
  /** A service client pinned to `apiVersion` (the latest when undefined). */
  const createService = (name: string, apiVersion?: string) =>
    succeed(createServiceArgs(name, ...(apiVersion === undefined ? [] : ['--api-version', apiVersion])));
  const apiVersionClaim = async (clientId: string) =>
    decodeJwt((await succeed(['tokens', 'issue', '--client-id', clientId])).access_token as string).api_version;

  test('create --api-version pins either kind of client to that version; list shows it', async () => {
    const service = await createService('Pinned service', '1');
    assert.equal(service.api_version, 1);
    const app = await succeed([
      'clients',
      'create',
      '--name',
      'Pinned app',
      '--public',
      '--redirect-uri',
      'https://a.example/cb',
      '--api-version',
      '1',
    ]);
    assert.equal(app.api_version, 1);
    for (const client of [service, app]) assert.equal((await findClient(client.client_id as string))!.api_version, 1);

    const { clients } = (await succeed(['clients', 'list'])) as { clients: Record<string, unknown>[] };
    const listed = new Map(clients.map((c) => [c.client_id, c.api_version]));
    assert.equal(listed.get(service.client_id), 1);
    assert.equal(listed.get(app.client_id), 1);
    assert.ok(clients.every((c) => API_VERSION_NUMBERS.includes(c.api_version as number)));
    const human = assertHuman(await runOrderpay(['clients', 'list'], env));
    assert.match(human, new RegExp(`^${app.client_id}  public  "Pinned app"\n(  .*\n)*?  API version: v1\n`, 'm'));
  });

  test('an API version the server does not speak exits 2 naming the supported ones, without a row', async () => {
    const supported = `supported: ${API_VERSION_NUMBERS.join(', ')}`;
    const unknown = String(Math.max(...API_VERSION_NUMBERS) + 1);
    for (const version of [unknown, '0', 'v2', '1.0', 'latest']) {
      assert.equal(
        await refuse(createServiceArgs('Rejected', '--api-version', version)),
        `API version ${version} is not supported; ${supported}`,
      );
    }
    assert.equal(
      await refuse([...'clients create --name Rejected --public --redirect-uri https://a.example/cb'.split(' '), '--api-version', unknown]),
      `API version ${unknown} is not supported; ${supported}`,
    );
    assert.deepEqual(await queryRows("SELECT client_id FROM oauth_clients WHERE client_name = 'Rejected'"), []);

    const service = await createService('Kept on its version');
    assert.equal(
      await refuse(['clients', 'set-api-version', '--client-id', service.client_id as string, '--api-version', unknown]),
      `API version ${unknown} is not supported; ${supported}`,
    );
    assert.equal((await findClient(service.client_id as string))!.api_version, LATEST_API_VERSION);
  });

  test('set-api-version re-pins a client: tokens issued afterwards carry the new version', async () => {
    const service = await createService('Re-pinned');
    const clientId = service.client_id as string;
    assert.equal(await apiVersionClaim(clientId), LATEST_API_VERSION);

    const { client_secret: _secret, client_secret_expires_at: _expiry, ...information } = service;
    const changed = await succeed(['clients', 'set-api-version', '--client-id', clientId, '--api-version', '1']);
    assert.deepEqual(changed, { ...information, api_version: 1, previous_api_version: LATEST_API_VERSION });
    assert.equal((await findClient(clientId))!.api_version, 1);
    assert.equal(await apiVersionClaim(clientId), 1);

    // The human form says when the change reaches the API.
    const human = assertHuman(
      await runOrderpay(['clients', 'set-api-version', '--client-id', clientId, '--api-version', String(LATEST_API_VERSION)], env),
    );
    assert.equal(
      human,
      `${clientId} "Re-pinned" is now pinned to API v${LATEST_API_VERSION} (was v1).
Its access tokens issued from now on carry api_version ${LATEST_API_VERSION}: its unversioned requests get v${LATEST_API_VERSION} from its next token.
Tokens issued before keep v1 until they expire (the authorization server's within 10 minutes).
`,
    );
    assert.equal(await apiVersionClaim(clientId), LATEST_API_VERSION);
    const again = assertHuman(
      await runOrderpay(['clients', 'set-api-version', '--client-id', clientId, '--api-version', String(LATEST_API_VERSION)], env),
    );
    assert.equal(again, `${clientId} "Re-pinned" is already pinned to API v${LATEST_API_VERSION}; nothing changed.\n`);
  });

  test('set-api-version of an unknown client, or without both options, exits 2', async () => {
    assert.match(
      await refuse(['clients', 'set-api-version', '--client-id', 'op_nobody', '--api-version', '1']),
      /^no client with id op_nobody in \S+ \((DATA_DIR, the embedded database|DATABASE_URL, PostgreSQL)\)$/,
    );
    for (const args of [['--client-id', 'op_nobody'], ['--api-version', '1'], []]) {
      assert.equal(
        await refuse(['clients', 'set-api-version', ...args]),
        'usage: orderpay clients set-api-version --client-id C --api-version N',
      );
    }
    assert.match(await refuse(['clients', 'set-api-version', '--client-id', 'op_nobody', '--api-version', '1', '--name', 'x']), /--name/);
    assert.match(await refuse(['clients', 'pin']), /orderpay clients set-api-version --client-id C --api-version N/);
  });
});

describe(`orderpay keys (${DATABASE})`, () => {
  interface KeyRow {
    kid: string;
    created_at: string;
    retired_at: string | null;
    expires_at: string | null;
    private_jwk: Record<string, string>;
  }
  const keyRows = () =>
    queryRows<KeyRow>('SELECT kid, created_at, retired_at, expires_at, private_jwk FROM signing_keys ORDER BY created_at, kid');
  const seconds = (timestamp: string) => Date.parse(timestamp) / 1000;

  test('rotate retires the active keys, published until their tokens expired, and a new key per algorithm signs', async () => {
    // A token from the key in use before the rotation, and the PS256 key beside it.
    const before = await succeed(['tokens', 'issue', '--client-id', 'svc']);
    const oldKid = decodeProtectedHeader(before.access_token as string).kid;
    const oldKids = (await keyRows()).filter((r) => r.retired_at === null).map((r) => r.kid);
    assert.equal(oldKids.length, 2, 'one active key per algorithm');

    const rotated = await succeed(['keys', 'rotate']);
    const { active, retired } = rotated as { active: Record<string, unknown>[]; retired: Record<string, unknown>[] };
    assert.deepEqual(Object.keys(rotated), ['active', 'retired']);
    assert.deepEqual(
      active.map((key) => key.alg),
      ['RS256', 'PS256'],
    );
    for (const key of active) {
      assert.deepEqual(key, { kid: key.kid, alg: key.alg, createdAt: key.createdAt, retiredAt: null, expiresAt: null, status: 'active' });
      assert.ok(!oldKids.includes(key.kid as string));
    }
    const [newRs256] = active;
    assert.deepEqual(retired.map((key) => key.kid).sort(), [...oldKids].sort());
    const retiredRs256 = retired.find((key) => key.kid === oldKid)!;
    assert.deepEqual(retiredRs256, {
      kid: oldKid,
      alg: 'RS256',
      createdAt: retiredRs256.createdAt,
      retiredAt: newRs256!.createdAt,
      expiresAt: retiredRs256.expiresAt,
      status: 'retired',
    });
    assert.equal(seconds(retiredRs256.expiresAt as string) - seconds(retiredRs256.retiredAt as string), MAX_SIGNED_TOKEN_LIFETIME_SECONDS);
    assert.equal(MAX_SIGNED_TOKEN_LIFETIME_SECONDS, 3600 + 300);

    const rows = await keyRows();
    const oldRow = rows.find((r) => r.kid === oldKid)!;
    const newRow = rows.find((r) => r.kid === newRs256!.kid)!;
    assert.equal(rows.filter((r) => r.retired_at === null).length, 2, 'one active key per algorithm');
    assert.equal(newRow.retired_at, null);
    assert.equal(newRow.expires_at, null);
    assert.ok(oldRow.retired_at && oldRow.expires_at);
    assert.equal(seconds(oldRow.expires_at) - seconds(oldRow.retired_at), MAX_SIGNED_TOKEN_LIFETIME_SECONDS);
    assert.ok(Math.abs(seconds(oldRow.retired_at) - Date.now() / 1000) < 120, 'retired now');

    // Tokens are signed with the new RS256 key from now on.
    const after = await succeed(['tokens', 'issue', '--client-id', 'svc']);
    assert.equal(decodeProtectedHeader(after.access_token as string).kid, newRs256!.kid);

    // A second rotation retires the second keys; the first keep their original expiry.
    const again = (await succeed(['keys', 'rotate'])) as { active: { kid: string }[]; retired: { kid: string }[] };
    assert.deepEqual(again.retired.map((k) => k.kid).sort(), active.map((k) => k.kid as string).sort());
    const firstAgain = (await keyRows()).find((r) => r.kid === oldKid)!;
    assert.equal(firstAgain.expires_at, oldRow.expires_at);
  });

  test('list shows kid, alg, status and dates of every key, never private members', async () => {
    await succeed(['keys', 'rotate']);
    const result = await runOrderpay(['keys', 'list', '--json'], env);
    assert.equal(result.code, 0, result.stderr);
    const { keys } = parseJsonOutput(result.stdout) as { keys: Record<string, unknown>[] };
    const rows = await keyRows();
    assert.deepEqual(keys.map((k) => k.kid).sort(), rows.map((r) => r.kid).sort());
    for (const key of keys) assert.deepEqual(Object.keys(key), ['kid', 'alg', 'createdAt', 'retiredAt', 'expiresAt', 'status']);
    // Newest first: the active key of each algorithm, then the retired ones.
    assert.deepEqual(
      keys
        .slice(0, 2)
        .map((k) => `${k.status} ${k.alg}`)
        .sort(),
      ['active PS256', 'active RS256'],
    );
    assert.deepEqual(
      keys.slice(2).map((k) => k.status),
      keys.slice(2).map(() => 'retired'),
    );
    for (const row of rows) {
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) {
        assert.ok(row.private_jwk[member], `the row has ${member}`);
        assert.ok(!result.stdout.includes(row.private_jwk[member]!), `private member ${member} of ${row.kid} printed`);
      }
      assert.ok(!result.stdout.includes(row.private_jwk.n!), 'not even the public modulus');
    }
    assert.doesNotMatch(result.stdout, /"(d|p|q|dp|dq|qi|n|e)":/);

    const human = assertHuman(await runOrderpay(['keys', 'list'], env));
    assert.match(human, new RegExp(`^${keys[0]!.kid}  ${keys[0]!.alg}  active `));
    assert.match(human, /retired .* published until /);
  });

  test('an unknown keys subcommand exits 2', async () => {
    assert.match(await refuse(['keys', 'delete']), /usage: orderpay keys rotate \| orderpay keys list/);
    assert.match(await refuse(['keys', 'rotate', '--force']), /--force/);
  });
});
