// orderpay CLI: serve | migrate | seed here; tokens, users, clients and keys in src/cli/. Every
// command accepts --json; exit 2 for usage and validation errors, 1 for anything unexpected.
import { issueTokenFor, TokenRequestError } from './auth/access-token.ts';
import { ClientMetadataError } from './auth/clients.rules.ts';
import { runClientsCommand, CLIENTS_USAGE } from './cli/clients.command.ts';
import { createOutput, parseCommandLine, takeWord, UsageError, withDatabase, withMigratedDatabase, type Output } from './cli/command.ts';
import { runKeysCommand, KEYS_USAGE } from './cli/keys.command.ts';
import { runTokensCommand, TOKENS_USAGE } from './cli/tokens.command.ts';
import { runUsersCommand, USERS_USAGE } from './cli/users.command.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { DatabaseConnectError } from './db/connect-failure.ts';
import { DataDirInUseError } from './db/data-dir-lock.ts';
import type { Db } from './db/db.ts';
import { migrateDatabase } from './db/migrate.ts';
import { listenForStopSignals, startServer } from './main.ts';
import { countUsers } from './users/users.store.ts';
import { DEMO_CLIENT_ID, DEMO_CUSTOMER_EMAILS, DEMO_PASSWORD, DEMO_REDIRECT_URI, DEMO_STAFF_EMAIL, seedDemoData } from './seed.ts';

const USAGE = `Usage: orderpay <command> [options]

Commands:
  serve                      migrate, then start the HTTP server
  migrate                    apply pending database migrations
  seed                       load demo users, products and orders (once)
${TOKENS_USAGE}
${USERS_USAGE}
${CLIENTS_USAGE}
${KEYS_USAGE}

Options:
  --json                     machine-readable output (one JSON object)
  --help                     this text

Configuration comes from the environment; see README.md.`;

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

/**
 * When there are no demo tokens to print, what to do about it: a database without the demo data
 * (PostgreSQL is not seeded unless asked) says how to load it; production, where demo data has no
 * place, says how to add a first user.
 */
async function missingDataHint(config: Config, db: Db): Promise<string> {
  if (config.env !== 'production') {
    return `No demo data in this database: load it with \`orderpay seed\` (in a clone: \`npm run orderpay -- seed\`), then restart for demo access tokens.`;
  }
  if ((await countUsers(db)) > 0) return '';
  return 'No users yet: add one with `orderpay users create --email … --role staff` (it asks for the password; README: "The command").';
}

/** What the banner prints beyond the address: demo access tokens, or else a hint on what to load. */
async function readBannerExtras(config: Config, db: Db): Promise<{ tokens: Record<string, string>; hint: string }> {
  const tokens = await demoTokens(config, db);
  return { tokens, hint: Object.keys(tokens).length > 0 ? '' : await missingDataHint(config, db) };
}

async function serve(config: Config, out: Output): Promise<void> {
  const signals = listenForStopSignals();
  const server = await startServer(config);
  // Stopped by a signal that came while it started: nothing to announce.
  if (signals.serve(server)) return;
  const { tokens, hint } = await readBannerExtras(config, server.db).catch((error: unknown) => {
    // The server is up and serving: a database that fails this one read (restarting, say) costs
    // the banner its tokens or hint, never the server.
    server.app.log.warn({ err: error }, 'the start-up banner could not read the database: no demo tokens or hint');
    return { tokens: {}, hint: '' };
  });
  const tokenLines = Object.entries(tokens)
    .map(([email, token]) => `  ${email}:\n    ${token}`)
    .join('\n');
  out.print(
    `orderpay listening on ${server.url} (${server.db.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'})
  API docs: ${config.publicUrl}/docs${config.console ? `\n  Staff console: ${config.publicUrl}/console` : ''}
${
  tokenLines
    ? `Demo access tokens (development only, valid 1 hour):\n${tokenLines}\nTry: curl -H "Authorization: Bearer <token>" ${config.publicUrl}/v1/orders
Sign in through OAuth: client_id ${DEMO_CLIENT_ID}, redirect_uri ${DEMO_REDIRECT_URI}, users ${DEMO_CUSTOMER_EMAILS[0]} or ${DEMO_STAFF_EMAIL} with password ${DEMO_PASSWORD} (README: "Signing in with OAuth")`
    : hint
}`,
    { event: 'listening', url: server.url, publicUrl: config.publicUrl, database: server.db.kind, demoTokens: tokens },
  );
}

async function runMigrate(config: Config, out: Output): Promise<void> {
  const applied = await withDatabase(config, (db) => migrateDatabase(config, db));
  out.print(applied.length ? `Applied ${applied.join(', ')}` : 'Database is up to date', { applied });
}

async function runSeed(config: Config, out: Output): Promise<void> {
  const result = await withMigratedDatabase(config, seedDemoData, { create: true });
  out.print(
    result.seeded
      ? `Seeded ${result.users} users (staff: ${DEMO_STAFF_EMAIL}; customers: ${DEMO_CUSTOMER_EMAILS.join(', ')}), ${result.products} products, ${result.orders} orders`
      : 'Demo data already present; nothing changed',
    { ...result },
  );
}

/** Commands without subcommands take no options of their own. */
const COMMANDS: Record<string, (argv: string[], out: Output) => Promise<void>> = {
  async serve(argv, out) {
    parseCommandLine(argv, {});
    await serve(loadConfig(), out);
  },
  async migrate(argv, out) {
    parseCommandLine(argv, {});
    await runMigrate(loadConfig(), out);
  },
  async seed(argv, out) {
    parseCommandLine(argv, {});
    await runSeed(loadConfig(), out);
  },
  tokens: runTokensCommand,
  users: runUsersCommand,
  clients: runClientsCommand,
  keys: runKeysCommand,
};

/** Refusals of what was asked (exit 2), as opposed to failures (exit 1). */
const isRefusal = (error: unknown) =>
  error instanceof UsageError ||
  error instanceof ConfigError ||
  error instanceof DataDirInUseError ||
  error instanceof TokenRequestError ||
  error instanceof ClientMetadataError;

/** The exit status of a failed command, and whether its message says all (no stack trace needed). */
function classifyFailure(error: unknown): { code: 1 | 2; explained: boolean } {
  if (isRefusal(error)) return { code: 2, explained: true };
  if (error instanceof DatabaseConnectError) return { code: error.exitCode, explained: true };
  return { code: 1, explained: false };
}

export async function runCli(argv: string[]): Promise<number> {
  const out = createOutput(argv.includes('--json'));
  try {
    const { word: command, rest } = takeWord(argv);
    if (argv.includes('--help') || command === 'help') {
      console.log(USAGE);
      return 0;
    }
    if (!command) {
      console.error(USAGE);
      return 2;
    }
    const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!run) throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
    await run(rest, out);
    return 0;
  } catch (error) {
    const { code, explained } = classifyFailure(error);
    const message = error instanceof Error ? error.message : String(error);
    if (out.json) console.error(JSON.stringify({ error: message }));
    else console.error(`orderpay: ${message}`);
    if (!explained) console.error(error);
    return code;
  }
}

if (import.meta.main) {
  const code = await runCli(process.argv.slice(2));
  // serve keeps running (signal handlers stop it); other commands end here.
  if (code !== 0 || process.argv[2] !== 'serve') process.exitCode = code;
}
