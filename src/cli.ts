// orderpay CLI: serve | migrate | seed | tokens issue. Every command accepts --json.
import { parseArgs } from 'node:util';
import { issueTokenFor, TokenRequestError } from './auth/access-token.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { DataDirInUseError } from './db/data-dir-lock.ts';
import { createDatabase } from './db/create-database.ts';
import type { Db } from './db/db.ts';
import { migrate } from './db/migrate.ts';
import { startServer, stopOnSignals } from './main.ts';
import { DEMO_CUSTOMER_EMAILS, DEMO_STAFF_EMAIL, seedDemoData } from './seed.ts';

const USAGE = `Usage: orderpay <command> [options]

Commands:
  serve                      migrate, then start the HTTP server
  migrate                    apply pending database migrations
  seed                       load demo users, products and orders (once)
  tokens issue               sign an access token with the active signing key
      --email <email>        for this user (role from the database), or
      --client-id <id>       for a service client (client credentials)
      --scope "<scopes>"     space-separated (default: every API scope the subject may hold)
      --expires-in <sec>     lifetime, default 600

Options:
  --json                     machine-readable output (one JSON object)
  --help                     this text

Configuration comes from the environment; see README.md.`;

class UsageError extends Error {}

interface Output {
  json: boolean;
  print(human: string, data: Record<string, unknown>): void;
}

function output(json: boolean): Output {
  return {
    json,
    print: (human, data) => console.log(json ? JSON.stringify(data) : human),
  };
}

async function withDatabase<T>(config: Config, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await createDatabase(config);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** Outside production, tokens for the demo users (when present) so the API can be tried at once. */
async function demoTokens(config: Config, db: Db): Promise<Record<string, string>> {
  if (config.env === 'production') return {};
  const tokens: Record<string, string> = {};
  for (const email of [DEMO_CUSTOMER_EMAILS[0]!, DEMO_STAFF_EMAIL]) {
    try {
      tokens[email] = await issueTokenFor(db, config, { email }, [], 3600);
    } catch (error) {
      if (!(error instanceof TokenRequestError)) throw error;
    }
  }
  return tokens;
}

async function serve(config: Config, out: Output): Promise<void> {
  const server = await startServer(config);
  stopOnSignals(server);
  const tokens = await demoTokens(config, server.db);
  const tokenLines = Object.entries(tokens).map(([email, token]) => `  ${email}:\n    ${token}`).join('\n');
  out.print(
    `orderpay listening on ${server.url} (${server.db.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'})
  API docs: ${config.publicUrl}/docs
${tokenLines ? `Demo access tokens (development only, valid 1 hour):\n${tokenLines}\nTry: curl -H "Authorization: Bearer <token>" ${config.publicUrl}/v1/orders` : ''}`,
    { event: 'listening', url: server.url, publicUrl: config.publicUrl, database: server.db.kind, demoTokens: tokens },
  );
}

async function runMigrate(config: Config, out: Output): Promise<void> {
  const applied = await withDatabase(config, migrate);
  out.print(applied.length ? `Applied ${applied.join(', ')}` : 'Database is up to date', { applied });
}

async function runSeed(config: Config, out: Output): Promise<void> {
  const result = await withDatabase(config, async (db) => {
    await migrate(db);
    return seedDemoData(db);
  });
  out.print(
    result.seeded
      ? `Seeded ${result.users} users (staff: ${DEMO_STAFF_EMAIL}; customers: ${DEMO_CUSTOMER_EMAILS.join(', ')}), ${result.products} products, ${result.orders} orders`
      : 'Demo data already present; nothing changed',
    { ...result },
  );
}

async function issueToken(config: Config, out: Output, args: { email?: string; clientId?: string; scope?: string; expiresIn?: string }): Promise<void> {
  if (!args.email === !args.clientId) throw new UsageError('tokens issue needs exactly one of --email or --client-id');
  const expiresIn = args.expiresIn === undefined ? 600 : Number(args.expiresIn);
  if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > 86_400) throw new UsageError('--expires-in must be 1–86400 seconds');
  const scopes = (args.scope ?? '').split(' ').filter(Boolean);
  const subject = args.email ? { email: args.email } : { clientId: args.clientId! };
  const token = await withDatabase(config, async (db) => {
    await migrate(db);
    return issueTokenFor(db, config, subject, scopes, expiresIn);
  });
  out.print(token, { access_token: token, token_type: 'Bearer', expires_in: expiresIn });
}

const OPTIONS = {
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
  email: { type: 'string' },
  'client-id': { type: 'string' },
  scope: { type: 'string' },
  'expires-in': { type: 'string' },
} as const;

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    // An unknown option or a missing value is a usage error (exit 2), not a crash.
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS_')) throw new UsageError(error.message);
    throw error;
  }
}

export async function runCli(argv: string[]): Promise<number> {
  const out = output(argv.includes('--json'));
  try {
    const { values, positionals } = parseCommandLine(argv);
    const [command, sub] = positionals;
    if (values.help || command === 'help') {
      console.log(USAGE);
      return 0;
    }
    if (!command) {
      console.error(USAGE);
      return 2;
    }
    const config = loadConfig();
    switch (command) {
      case 'serve': await serve(config, out); return 0;
      case 'migrate': await runMigrate(config, out); return 0;
      case 'seed': await runSeed(config, out); return 0;
      case 'tokens':
        if (sub !== 'issue') throw new UsageError('usage: orderpay tokens issue (--email E | --client-id C) [--scope S]');
        await issueToken(config, out, { email: values.email, clientId: values['client-id'], scope: values.scope, expiresIn: values['expires-in'] });
        return 0;
      default:
        throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
    }
  } catch (error) {
    const known = error instanceof UsageError || error instanceof ConfigError || error instanceof DataDirInUseError || error instanceof TokenRequestError;
    const message = error instanceof Error ? error.message : String(error);
    if (out.json) console.error(JSON.stringify({ error: message }));
    else console.error(`orderpay: ${message}`);
    if (!known && !(error instanceof Error && /ECONNREFUSED|does not exist|password authentication/.test(message))) console.error(error);
    return known ? 2 : 1;
  }
}

if (import.meta.main) {
  const code = await runCli(process.argv.slice(2));
  // serve keeps running (signal handlers stop it); other commands end here.
  if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
}
