// `orderpay users disable | enable | erase` and `orderpay clients disable | enable | delete |
// rotate-secret`, spawned as real processes over a fresh database (embedded, or PostgreSQL when
// TEST_DATABASE_URL is set): what each prints (human and --json), its exit status, and the rows it
// leaves (docs/decisions/0112-disabling-and-erasing.md, 0113-client-secret-rotation.md).
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { digestOidcIdentifier } from '../../src/auth/oidc.adapter.ts';
import { verifyClientSecret } from '../../src/auth/passwords.ts';
import { REVOKED_SUBJECT_KEPT_SECONDS } from '../../src/auth/revoked-subjects.store.ts';
import { createOrder } from '../helpers/factories.ts';
import {
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  parseJsonOutput,
  runOrderpay,
  withTargetDatabase,
  type Env,
  type TargetDatabase,
} from './orderpay-process.ts';

/** One database for the file, migrated up front so each command does only its own work. */
let target: TargetDatabase;
let env: Env;
after(cleanUpProcessesAndDatabases);
before(async () => {
  target = await createTargetDatabase();
  env = commandEnv(target.env);
  const migrated = await runOrderpay(['migrate', '--json'], env);
  assert.equal(migrated.code, 0, migrated.stderr);
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
/** How a command names the database it searched (src/cli/command.ts describeDatabase). */
const IN_DATABASE = / in .+ \((DATA_DIR, the embedded database|DATABASE_URL, PostgreSQL)\)$/;

/** Reads or writes rows straight in the database, between commands (the embedded one admits one process). */
async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  return withTargetDatabase(target, async (db) => (await db.query<T>(sql, params)).rows);
}

async function succeed(args: string[]): Promise<Record<string, unknown>> {
  const result = await runOrderpay([...args, '--json'], env);
  assert.equal(result.stderr, '', args.join(' '));
  assert.equal(result.code, 0);
  return parseJsonOutput(result.stdout);
}

/** The human form: exit 0, the text on stdout. */
async function human(args: string[]): Promise<string> {
  const result = await runOrderpay(args, env);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  return result.stdout.trimEnd();
}

/** Exit 2, nothing on stdout, `{"error": …}` on stderr. */
async function refuse(args: string[]): Promise<string> {
  const result = await runOrderpay([...args, '--json'], env);
  assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
  assert.equal(result.stdout, '');
  const error = parseJsonOutput(result.stderr);
  assert.deepEqual(Object.keys(error), ['error']);
  return error.error as string;
}

async function insertUser(role = 'customer'): Promise<{ id: number; email: string; name: string }> {
  const email = `Op-${randomUUID().slice(0, 8)}@Example.com`;
  const [user] = await query<{ id: number; email: string; name: string }>(
    `INSERT INTO users (email, name, role, password_hash) VALUES ($1, 'Ada Lovelace', $2, 'scrypt$placeholder') RETURNING id, email, name`,
    [email, role],
  );
  return user!;
}

/** A grant of the authorization server for the account or client, with a refresh token under it (as the adapter stores them). */
async function insertGrant(owner: { accountId?: number; clientId: string }): Promise<string> {
  const grantId = randomBytes(16).toString('base64url');
  const payload = { ...(owner.accountId === undefined ? {} : { accountId: String(owner.accountId) }), clientId: owner.clientId };
  await query(
    `INSERT INTO oidc_payloads (model, id, payload, grant_id, expires_at) VALUES
       ('Grant', $1, $3, NULL, now() + interval '1 day'),
       ('RefreshToken', $4, $5, $2, now() + interval '1 day')`,
    [
      digestOidcIdentifier(grantId),
      grantId,
      JSON.stringify({ ...payload, kind: 'Grant' }),
      digestOidcIdentifier(randomBytes(16).toString('base64url')),
      JSON.stringify({ ...payload, grantId, kind: 'RefreshToken' }),
    ],
  );
  return grantId;
}

async function oidcRowsOfGrant(grantId: string): Promise<string[]> {
  const rows = await query<{ model: string }>('SELECT model FROM oidc_payloads WHERE id = $1 OR grant_id = $2 ORDER BY model', [
    digestOidcIdentifier(grantId),
    grantId,
  ]);
  return rows.map((row) => row.model);
}

const isGrantRevoked = async (grantId: string) =>
  (await query('SELECT 1 FROM revoked_grants WHERE grant_digest = $1', [digestOidcIdentifier(grantId)])).length === 1;

interface RevokedSubjectRow {
  restored: boolean;
  expires: number | null;
}
async function revokedSubject(subject: string): Promise<RevokedSubjectRow | undefined> {
  const [row] = await query<RevokedSubjectRow>(
    `SELECT restored_at IS NOT NULL AS restored, extract(epoch FROM expires_at - coalesce(restored_at, revoked_at))::int AS expires
     FROM revoked_subjects WHERE subject = $1`,
    [subject],
  );
  return row;
}

describe(`orderpay users disable | enable | erase (${DATABASE_LABEL})`, () => {
  test('disable (by email in any case, or by id) records it, ends the grants, and says so; a second time changes nothing', async () => {
    const user = await insertUser();
    const grant = await insertGrant({ accountId: user.id, clientId: 'op_app' });
    const otherUsers = await insertGrant({ accountId: user.id + 1000, clientId: 'op_app' });

    const disabled = await succeed(['users', 'disable', '--email', user.email.toUpperCase()]);
    assert.match(disabled.disabledAt as string, ISO);
    assert.deepEqual(disabled, {
      id: user.id,
      email: user.email,
      name: 'Ada Lovelace',
      role: 'customer',
      status: 'disabled',
      disabledAt: disabled.disabledAt,
      erasedAt: null,
      changed: true,
      revokedGrants: 1,
    });
    assert.deepEqual(await revokedSubject(`user:${user.id}`), { restored: false, expires: null });
    assert.deepEqual(await oidcRowsOfGrant(grant), []);
    assert.equal(await isGrantRevoked(grant), true);
    assert.deepEqual(await oidcRowsOfGrant(otherUsers), ['Grant', 'RefreshToken'], "another user's grant is left alone");

    const again = await succeed(['users', 'disable', '--id', String(user.id)]);
    assert.deepEqual(again, { ...disabled, changed: false, revokedGrants: 0 });
    assert.equal(
      await human(['users', 'disable', '--id', String(user.id)]),
      `customer ${user.email} (id ${user.id}) is already disabled; nothing changed.`,
    );
  });

  test('the human form of disable and enable says what happened to sign-in and to tokens', async () => {
    const user = await insertUser('staff');
    assert.equal(
      await human(['users', 'disable', '--id', String(user.id)]),
      `Disabled staff ${user.email} (id ${user.id}): it can no longer sign in; 0 grants ended with their refresh tokens and sessions, and the API refuses its access tokens (every process within about a second).`,
    );
    assert.equal(
      await human(['users', 'enable', '--email', user.email]),
      `Enabled staff ${user.email} (id ${user.id}): it can sign in again. Tokens issued before it was disabled stay refused.`,
    );
    assert.equal(
      await human(['users', 'enable', '--email', user.email]),
      `staff ${user.email} (id ${user.id}) is already active; nothing changed.`,
    );
  });

  test('enable makes the user active; the revocation is kept for the tokens issued before', async () => {
    const user = await insertUser();
    await succeed(['users', 'disable', '--id', String(user.id)]);
    const enabled = await succeed(['users', 'enable', '--id', String(user.id)]);
    assert.deepEqual(enabled, {
      id: user.id,
      email: user.email,
      name: 'Ada Lovelace',
      role: 'customer',
      status: 'active',
      disabledAt: null,
      erasedAt: null,
      changed: true,
      revokedGrants: 0,
    });
    assert.deepEqual(await revokedSubject(`user:${user.id}`), { restored: true, expires: REVOKED_SUBJECT_KEPT_SECONDS });
  });

  test('tokens issue refuses a disabled user (exit 2)', async () => {
    const user = await insertUser();
    await succeed(['users', 'disable', '--id', String(user.id)]);
    assert.equal(await refuse(['tokens', 'issue', '--email', user.email]), `user ${user.email} is disabled (orderpay users enable)`);
  });

  test('erase needs --yes; with it the personal data is replaced, orders and payments keep naming the user', async () => {
    const user = await insertUser();
    const grant = await insertGrant({ accountId: user.id, clientId: 'op_app' });
    const order = await withTargetDatabase(target, (db) => createOrder(db, user.id, { status: 'paid' }));
    const [payment] = await query<{ id: number }>(
      `INSERT INTO payments (customer_id, client_id, order_id, amount, currency, status, processor, reference)
       VALUES ($1, 'op_app', $2, $3, 'EUR', 'succeeded', 'simulator', $4) RETURNING id`,
      [user.id, order.id, order.total, `erase-${user.id}`],
    );
    const signInCounter = `login-account:${user.email.toLowerCase()}`;
    await query("INSERT INTO rate_limit_hits (key, window_start, hits) VALUES ($1, now(), 3), ('login-ip:10.9.9.9', now(), 3)", [
      signInCounter,
    ]);

    assert.equal(
      await refuse(['users', 'erase', '--email', user.email]),
      "users erase replaces the user's email, name and password hash for good, and cannot be undone: add --yes to confirm",
    );
    assert.deepEqual(await query('SELECT email, erased_at FROM users WHERE id = $1', [user.id]), [{ email: user.email, erased_at: null }]);

    const erased = await succeed(['users', 'erase', '--email', user.email, '--yes']);
    assert.deepEqual(erased, {
      id: user.id,
      email: `erased-user-${user.id}@erased.invalid`,
      name: 'Erased user',
      role: 'customer',
      status: 'erased',
      disabledAt: erased.erasedAt,
      erasedAt: erased.erasedAt,
      changed: true,
      revokedGrants: 1,
    });
    const [row] = await query<Record<string, unknown>>(
      'SELECT email, name, password_hash, disabled_at = erased_at AS together FROM users WHERE id = $1',
      [user.id],
    );
    assert.deepEqual(row, { email: `erased-user-${user.id}@erased.invalid`, name: 'Erased user', password_hash: null, together: true });
    assert.deepEqual(await oidcRowsOfGrant(grant), []);
    assert.deepEqual(await query('SELECT customer_id FROM orders WHERE id = $1', [order.id]), [{ customer_id: user.id }]);
    assert.deepEqual(await query('SELECT customer_id FROM payments WHERE id = $1', [payment!.id]), [{ customer_id: user.id }]);
    assert.deepEqual(await query('SELECT key FROM rate_limit_hits WHERE key IN ($1, $2)', [signInCounter, 'login-ip:10.9.9.9']), [
      { key: 'login-ip:10.9.9.9' },
    ]);

    assert.equal(await human(['users', 'erase', '--id', String(user.id), '--yes']), `User ${user.id} is already erased; nothing changed.`);
    assert.equal(
      await refuse(['users', 'enable', '--id', String(user.id)]),
      `user ${user.id} was erased: erasure cannot be undone, and an erased user cannot be enabled`,
    );
    const byOldEmail = await refuse(['users', 'disable', '--email', user.email]);
    assert.ok(byOldEmail.startsWith(`no user with email ${user.email} in `), byOldEmail);
    assert.match(byOldEmail, IN_DATABASE);
  });

  test('the human form of erase names the placeholders and what is kept', async () => {
    const user = await insertUser();
    assert.equal(
      await human(['users', 'erase', '--id', String(user.id), '--yes']),
      `Erased user ${user.id}: email, name and password replaced by placeholders (erased-user-${user.id}@erased.invalid, "Erased user"), disabled for good. Its orders, payments and events are kept and still name user ${user.id}.`,
    );
  });

  test('list shows each user as active, disabled or erased', async () => {
    const active = await insertUser();
    const disabled = await insertUser();
    const erased = await insertUser();
    await succeed(['users', 'disable', '--id', String(disabled.id)]);
    await succeed(['users', 'erase', '--id', String(erased.id), '--yes']);

    const { users } = (await succeed(['users', 'list'])) as { users: { id: number; status: string; disabledAt: string | null }[] };
    const statusOf = (id: number) => users.find((u) => u.id === id)?.status;
    assert.deepEqual([statusOf(active.id), statusOf(disabled.id), statusOf(erased.id)], ['active', 'disabled', 'erased']);

    const rows = (await human(['users', 'list'])).split('\n').map((line) => line.trim().split(/\s{2,}/));
    assert.deepEqual(rows[0], ['ID', 'ROLE', 'STATUS', 'PASSWORD', 'EMAIL', 'NAME']);
    assert.deepEqual(
      rows.find(([id]) => id === String(erased.id)),
      [String(erased.id), 'customer', 'erased', 'not set', `erased-user-${erased.id}@erased.invalid`, 'Erased user'],
    );
    assert.equal(rows.find(([id]) => id === String(disabled.id))?.[2], 'disabled');
  });

  test('an unknown user is named with the database searched; a malformed command line exits 2', async () => {
    for (const command of ['disable', 'enable']) {
      const byId = await refuse(['users', command, '--id', '987654321']);
      assert.ok(byId.startsWith('no user with id 987654321 in '), byId);
      assert.match(byId, IN_DATABASE);
    }
    assert.match(await refuse(['users', 'erase', '--email', 'nobody@example.com', '--yes']), /^no user with email nobody@example\.com in /);
    const refusals: [string[], RegExp][] = [
      [['users', 'disable'], /^usage: orderpay users disable \(--email E \| --id N\)$/],
      [['users', 'enable', '--email', 'a@example.com', '--id', '1'], /^usage: orderpay users enable/],
      [['users', 'erase', '--yes'], /^usage: orderpay users erase \(--email E \| --id N\) --yes$/],
      [['users', 'disable', '--id', '0'], /^--id must be a user id \(a positive whole number\), got "0"$/],
      [['users', 'disable', '--id', '1e3'], /got "1e3"/],
      [['users', 'disable', '--id', '1', '--yes'], /'--yes'/],
      [['users', 'disable', '--id', '1', 'extra'], /extra/],
      [['users', 'remove', '--id', '1'], /orderpay users disable\|enable/],
    ];
    for (const [args, message] of refusals) assert.match(await refuse(args), message, args.join(' '));
  });
});

describe(`orderpay clients disable | enable | delete | rotate-secret (${DATABASE_LABEL})`, () => {
  const createService = async (name = 'Operated service') =>
    (await succeed(['clients', 'create', '--name', name, '--confidential', '--grant', 'client_credentials', '--scope', 'orders:read'])) as {
      client_id: string;
      client_secret: string;
    } & Record<string, unknown>;

  test('disable and enable: the row, the revocation, the grants; tokens issue refuses a disabled client; list says so', async () => {
    const service = await createService();
    const grant = await insertGrant({ clientId: service.client_id });
    const { client_secret: _secret, client_secret_expires_at: _expiry, ...information } = service;

    const disabled = await succeed(['clients', 'disable', '--client-id', service.client_id]);
    assert.deepEqual(disabled, { ...information, status: 'disabled', changed: true, revoked_grants: 1 });
    assert.deepEqual(await revokedSubject(`client:${service.client_id}`), { restored: false, expires: null });
    assert.deepEqual(await oidcRowsOfGrant(grant), []);
    assert.equal(await isGrantRevoked(grant), true);
    assert.match(await refuse(['tokens', 'issue', '--client-id', service.client_id]), /is disabled \(orderpay clients enable\)$/);
    assert.match(
      await human(['clients', 'list']),
      new RegExp(`^${service.client_id}  confidential  "Operated service"  disabled since \\S+Z$`, 'm'),
    );
    assert.equal(
      await human(['clients', 'disable', '--client-id', service.client_id]),
      `${service.client_id} "Operated service" is already disabled; nothing changed.`,
    );

    const enabled = await succeed(['clients', 'enable', '--client-id', service.client_id]);
    assert.deepEqual(enabled, { ...information, status: 'active', changed: true, revoked_grants: 0 });
    assert.deepEqual(await revokedSubject(`client:${service.client_id}`), { restored: true, expires: REVOKED_SUBJECT_KEPT_SECONDS });
    assert.ok((await succeed(['tokens', 'issue', '--client-id', service.client_id])).access_token);
    assert.equal(
      await human(['clients', 'enable', '--client-id', service.client_id]),
      `${service.client_id} "Operated service" is already active; nothing changed.`,
    );
  });

  test('delete removes the client and its grants; its tokens are refused until they expire; payments keep its id', async () => {
    const service = await createService('Doomed service');
    const grant = await insertGrant({ accountId: 1, clientId: service.client_id });
    const [payment] = await query<{ id: number }>(
      `INSERT INTO payments (client_id, amount, currency, status, processor, reference)
       VALUES ($1, 500, 'EUR', 'succeeded', 'simulator', $2) RETURNING id`,
      [service.client_id, `delete-${service.client_id}`],
    );

    assert.equal(
      await human(['clients', 'delete', '--client-id', service.client_id]),
      `Deleted ${service.client_id} "Doomed service": 1 grant ended with their refresh tokens, and the API refuses its access tokens until they expire. Payments and events that name it keep its id.`,
    );
    assert.deepEqual(await query('SELECT 1 FROM oauth_clients WHERE client_id = $1', [service.client_id]), []);
    assert.deepEqual(await oidcRowsOfGrant(grant), []);
    assert.deepEqual(await revokedSubject(`client:${service.client_id}`), { restored: false, expires: REVOKED_SUBJECT_KEPT_SECONDS });
    assert.deepEqual(await query('SELECT client_id FROM payments WHERE id = $1', [payment!.id]), [{ client_id: service.client_id }]);

    const again = await refuse(['clients', 'delete', '--client-id', service.client_id]);
    assert.ok(again.startsWith(`no client with id ${service.client_id} in `), again);
    assert.match(again, IN_DATABASE);

    const other = await createService('Deleted with --json');
    const { client_secret: _secret, client_secret_expires_at: _expiry, ...information } = other;
    assert.deepEqual(await succeed(['clients', 'delete', '--client-id', other.client_id]), {
      ...information,
      status: 'deleted',
      changed: true,
      revoked_grants: 0,
    });
  });

  test('rotate-secret prints the new secret once; the previous one is kept hashed for the grace period', async () => {
    const service = await createService('Rotated service');
    const startedAt = Math.floor(Date.now() / 1000);
    const rotated = await succeed(['clients', 'rotate-secret', '--client-id', service.client_id]);
    const newSecret = rotated.client_secret as string;
    assert.match(newSecret, /^[\w-]{43}$/);
    assert.notEqual(newSecret, service.client_secret);
    const { client_secret: _secret, ...information } = service;
    assert.deepEqual(rotated, {
      ...information,
      client_secret: newSecret,
      previous_client_secret_expires_at: rotated.previous_client_secret_expires_at,
    });
    // 24 hours from the rotation, which happened while the command ran (epoch seconds, like client_secret_expires_at).
    const expiresAt = rotated.previous_client_secret_expires_at as number;
    assert.ok(expiresAt >= startedAt + 24 * 3600 && expiresAt <= Date.now() / 1000 + 24 * 3600, `24 hours, got ${expiresAt - startedAt} s`);

    const [row] = await query<{ current: string; previous: string; grace: number }>(
      `SELECT metadata ->> 'client_secret' AS current, previous_secret_hash AS previous,
         extract(epoch FROM previous_secret_expires_at - now())::int AS grace FROM oauth_clients WHERE client_id = $1`,
      [service.client_id],
    );
    assert.equal(await verifyClientSecret(row!.current, newSecret), true);
    assert.equal(await verifyClientSecret(row!.previous, service.client_secret), true);
    assert.ok(!JSON.stringify(row).includes(newSecret) && !JSON.stringify(row).includes(service.client_secret), 'only hashes are kept');

    const listed = (await succeed(['clients', 'list'])) as { clients: Record<string, unknown>[] };
    assert.equal(
      listed.clients.find((c) => c.client_id === service.client_id)?.previous_client_secret_expires_at,
      rotated.previous_client_secret_expires_at,
    );
    assert.match(await human(['clients', 'list']), /^ {2}previous secret: still accepted until \S+Z$/m);
  });

  test('rotate-secret in human form; --grace in seconds to days, 0 retiring the previous secret at once', async () => {
    const service = await createService('Graced service');
    const text = await human(['clients', 'rotate-secret', '--client-id', service.client_id, '--grace', '90s']);
    const lines = text.split('\n');
    assert.equal(lines[0], `Rotated the secret of ${service.client_id} "Graced service"`);
    assert.match(lines[1]!, /^ {2}client_secret: [\w-]{43}$/);
    assert.equal(lines[2], 'Store the secret now: it is shown only this once (orderpay keeps only its hash).');
    assert.match(lines[3]!, /^The previous secret still works until \S+Z; then only this one does\.$/);
    const [{ grace }] = (await query<{ grace: number }>(
      'SELECT extract(epoch FROM previous_secret_expires_at - now())::int AS grace FROM oauth_clients WHERE client_id = $1',
      [service.client_id],
    )) as [{ grace: number }];
    assert.ok(grace > 0 && grace <= 90, `90 s, got ${grace}`);

    assert.match(
      await human(['clients', 'rotate-secret', '--client-id', service.client_id, '--grace', '0']),
      /\nThe previous secret no longer works\.$/,
    );
    assert.deepEqual(
      await query('SELECT previous_secret_hash, previous_secret_expires_at FROM oauth_clients WHERE client_id = $1', [service.client_id]),
      [{ previous_secret_hash: null, previous_secret_expires_at: null }],
    );
    const withoutGrace = await succeed(['clients', 'rotate-secret', '--client-id', service.client_id, '--grace', '0']);
    assert.equal('previous_client_secret_expires_at' in withoutGrace, false);
  });

  test('refusals: a public client, a bad --grace, the built-in /docs client, an unknown client, a missing --client-id', async () => {
    const app = await succeed(['clients', 'create', '--name', 'Public app', '--public', '--redirect-uri', 'https://app.example/cb']);
    assert.equal(
      await refuse(['clients', 'rotate-secret', '--client-id', app.client_id as string]),
      `${app.client_id} is a public client: it has no secret to rotate`,
    );
    const service = await createService('Refusing service');
    assert.match(
      await refuse(['clients', 'rotate-secret', '--client-id', service.client_id, '--grace', '2w']),
      /^--grace "2w" is not a duration/,
    );
    assert.match(await refuse(['clients', 'rotate-secret', '--client-id', service.client_id, '--grace', '31d']), /longer than the 30 days/);
    const [row] = await query<{ secret: string }>("SELECT metadata ->> 'client_secret' AS secret FROM oauth_clients WHERE client_id = $1", [
      service.client_id,
    ]);
    assert.equal(await verifyClientSecret(row!.secret, service.client_secret), true, 'a refused rotation changes nothing');

    for (const command of ['disable', 'enable', 'delete', 'rotate-secret']) {
      assert.equal(
        await refuse(['clients', command, '--client-id', 'orderpay-docs']),
        "orderpay-docs is the /docs page's built-in client, declared by the configuration rather than registered: commands cannot change it; ORDERPAY_DOCS_CLIENT=false turns it off",
      );
      const unknown = await refuse(['clients', command, '--client-id', 'op_unknown']);
      assert.ok(unknown.startsWith('no client with id op_unknown in '), unknown);
      assert.match(unknown, IN_DATABASE);
      assert.match(await refuse(['clients', command]), new RegExp(`^usage: orderpay clients ${command} --client-id C`));
    }
  });
});
