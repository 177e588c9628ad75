// A configuration that cannot work stops `orderpay serve` with one line on stderr and exit 2
// (docs/deploy.md, "Signals: which command to run"): a typo in NODE_ENV, production without a payment processor, an empty variable, a
// DATABASE_URL that is not PostgreSQL's, a port in use, a HOST that is not this machine's, a
// database that does not exist. A PostgreSQL that does not answer is one line too, with exit 1 (a
// restart may succeed). Never a stack trace, never a password.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { serverUrl } from '../helpers/db.ts';
import {
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  parseJsonOutput,
  runOrderpay,
  type CommandResult,
  type Env,
  type TargetDatabase,
} from './orderpay-process.ts';

// 29276: a server main would start with an empty HOST; 29277: taken by this file; 29278: nothing listens.
const PORTS = { emptyHost: 29276, taken: 29277, closed: 29278 };

after(cleanUpProcessesAndDatabases);

/** Exit status, nothing on stdout, and exactly the one line on stderr. */
function assertOneLine(result: CommandResult, code: number, line: RegExp): void {
  assert.equal(result.stdout, '');
  const lines = result.stderr.split('\n');
  assert.deepEqual(lines.slice(1), [''], `one line on stderr, not:\n${result.stderr}`);
  assert.match(lines[0]!, line);
  assert.equal(result.code, code, result.stderr);
}

describe(`orderpay serve refuses a configuration that cannot work (${DATABASE_LABEL})`, () => {
  let target: TargetDatabase;
  let env: Env;
  before(async () => {
    target = await createTargetDatabase();
    env = commandEnv(target.env);
  });
  // No /docs or /console client: on the tests' plain-http PUBLIC_URL each would log why it is not
  // offered before the listener is refused, and stdout must stay empty.
  const serve = (extra: Env) =>
    runOrderpay(
      ['serve'],
      { ...env, PORT: String(PORTS.emptyHost), ORDERPAY_DOCS_CLIENT: 'false', ORDERPAY_CONSOLE: 'false', ...extra },
      { timeoutMs: 30_000 },
    );

  test('NODE_ENV=prod is not production, nor silently development', async () => {
    assertOneLine(await serve({ NODE_ENV: 'prod' }), 2, /^orderpay: NODE_ENV must be one of development, test, production, got "prod"$/);
  });

  test('production serves the API only through a payment processor it is told to use', async () => {
    assertOneLine(
      await serve({ NODE_ENV: 'production' }),
      2,
      /^orderpay: ORDERPAY_PAYMENT_PROCESSOR must name the payment processor when NODE_ENV=production \(simulator for a deployment that moves no money; its payments say livemode: false\)$/,
    );
  });

  test('an empty variable (HOST=) is refused, not replaced by its default', async () => {
    assertOneLine(
      await serve({ HOST: '' }),
      2,
      /^orderpay: HOST is set but empty: give it a value, or unset it for the default \(127\.0\.0\.1\)$/,
    );
  });

  test('DATABASE_URL must be a PostgreSQL URL; the refusal does not show its password', async () => {
    assertOneLine(
      await serve({ DATABASE_URL: 'newcomer_db' }),
      2,
      /^orderpay: DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL \(orderpay runs on PostgreSQL\), got "newcomer_db"$/,
    );
    const mysql = await serve({ DATABASE_URL: 'mysql://shop:s3cret@127.0.0.1:3306/shop' });
    assertOneLine(mysql, 2, /^orderpay: DATABASE_URL must be a postgres:\/\/ .* got "mysql:\/\/shop:\*\*\*@127\.0\.0\.1:3306\/shop"$/);
    assert.doesNotMatch(mysql.stderr, /s3cret/);

    const json = await runOrderpay(['serve', '--json'], { ...env, DATABASE_URL: 'newcomer_db' });
    assert.equal(json.code, 2);
    assert.match(parseJsonOutput(json.stderr).error as string, /^DATABASE_URL must be a postgres:\/\//);
  });

  describe('where the server cannot listen', () => {
    let taken: Server;
    before(async () => {
      taken = createServer();
      await new Promise<void>((resolve) => taken.listen(PORTS.taken, '127.0.0.1', resolve));
    });
    after(() => new Promise<void>((resolve) => taken.close(() => resolve())));

    test('a port in use', async () => {
      assertOneLine(
        await serve({ PORT: String(PORTS.taken) }),
        2,
        new RegExp(`^orderpay: PORT ${PORTS.taken} is in use on 127\\.0\\.0\\.1 by another process: stop it, or set PORT to a free port$`),
      );
      // The database it had opened is closed again: the embedded one is not left locked.
      if (target.dataDir) assert.equal(existsSync(`${target.dataDir}.lock`), false);
    });

    test('a HOST that is not an address of this machine, or no address at all', async () => {
      // 192.0.2.1: TEST-NET-1 (RFC 5737), never a local address.
      assertOneLine(
        await serve({ HOST: '192.0.2.1' }),
        2,
        /^orderpay: HOST 192\.0\.2\.1 is not an address of this machine: set HOST to one of its addresses, or 0\.0\.0\.0 for all$/,
      );
      // .invalid never resolves (RFC 6761); without DNS the lookup fails as unanswered.
      assertOneLine(
        await serve({ HOST: 'orderpay.invalid' }),
        2,
        /^orderpay: HOST orderpay\.invalid (does not resolve|could not be resolved)/,
      );
    });
  });
});

describe('a PostgreSQL that cannot be used is one line, not a stack trace', () => {
  const env = commandEnv({ PORT: String(PORTS.emptyHost) });

  test('nothing listens at the address: exit 1, since a restart may succeed', async () => {
    const url = `postgres://orderpay:s3cret@127.0.0.1:${PORTS.closed}/orderpay`;
    for (const command of ['serve', 'migrate']) {
      const result = await runOrderpay([command], { ...env, DATABASE_URL: url }, { timeoutMs: 30_000 });
      assertOneLine(
        result,
        1,
        new RegExp(
          `^orderpay: cannot connect to PostgreSQL at 127\\.0\\.0\\.1:${PORTS.closed}/orderpay: connection refused \\(is PostgreSQL running, on this host and port\\?\\)$`,
        ),
      );
      assert.doesNotMatch(result.stderr, /s3cret/);
    }
  });

  if (serverUrl) {
    test('the database does not exist: exit 2, since DATABASE_URL is wrong', async () => {
      const missing = new URL(serverUrl!);
      missing.pathname = '/orderpay_no_such_database';
      assertOneLine(
        await runOrderpay(['serve'], { ...env, DATABASE_URL: missing.href }, { timeoutMs: 30_000 }),
        2,
        /^orderpay: cannot connect to PostgreSQL at [^ ]+\/orderpay_no_such_database: the database does not exist/,
      );
    });
  }
});
