// npm run test:pooled — the HTTP suites (test/http) through PgBouncer in transaction mode, in front
// of the PostgreSQL server of TEST_DATABASE_URL (else the local one on 5432): every test file's
// database, its migrations and every request go through the pooler, with ORDERPAY_DB_POOLER's
// `transaction` mode (docs/deploy.md, "Connection poolers"). The pooler's server connections run
// in a time zone with a half-hour offset, so nothing may depend on the session's being UTC.
import { spawn } from 'node:child_process';
import { startPgBouncer } from '../test/helpers/pgbouncer.ts';

const serverUrl = new URL(process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
const port = Number(process.env.ORDERPAY_POOLED_TESTS_PORT || 26432);
const user = decodeURIComponent(serverUrl.username || 'postgres');

const pooler = await startPgBouncer({
  port,
  server: { host: serverUrl.hostname, port: Number(serverUrl.port || 5432) },
  users: [user],
  timezone: 'Asia/Kolkata',
});
console.log(`== HTTP suites through PgBouncer (transaction mode) on 127.0.0.1:${port} → ${serverUrl.host}`);
let code: number | null = 1;
try {
  const child = spawn(
    process.execPath,
    ['--test', '--test-concurrency=2', '--test-timeout=120000', ...process.argv.slice(2), 'test/http/**/*.test.ts'],
    {
      stdio: 'inherit',
      env: { ...process.env, TEST_DATABASE_URL: pooler.url(user, 'postgres'), TEST_DB_POOLER: 'transaction', DATABASE_URL: '' },
    },
  );
  code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
} finally {
  if (code !== 0) console.error(`pgbouncer's log:\n${pooler.log().split('\n').slice(-30).join('\n')}`);
  await pooler.stop();
}
process.exit(code ?? 1);
