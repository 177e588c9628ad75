// What every command shares: strict option parsing, --json output, usage errors (exit 2) and a
// migrated database for the length of one command.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import type { Config } from '../config.ts';
import { describeServer } from '../db/connect-failure.ts';
import { openCommandDatabase } from '../db/create-database.ts';
import type { Db } from '../db/db.ts';
import { migrateDatabase } from '../db/migrate.ts';

/** A command line or input the command refuses: exit 2, one line, no stack trace. */
export class UsageError extends Error {}

export interface Output {
  json: boolean;
  print(human: string, data: Record<string, unknown>): void;
  /** A line on stderr that does not stop the command: `{"warning": …}` with --json. */
  warn(line: string): void;
}

export function createOutput(json: boolean): Output {
  return {
    json,
    print: (human, data) => console.log(json ? JSON.stringify(data) : human),
    warn: (line) => console.error(json ? JSON.stringify({ warning: line }) : `orderpay: ${line}`),
  };
}

export const COMMON_OPTIONS = {
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const satisfies ParseArgsOptionsConfig;

/**
 * The command (or subcommand) word at the head of argv, after any leading --json/--help, and
 * the arguments without it: `orderpay --json users create …` reads like `orderpay users create --json …`.
 */
export function takeWord(argv: readonly string[]): { word: string | undefined; rest: string[] } {
  let i = 0;
  while (i < argv.length && (argv[i] === '--json' || argv[i] === '--help')) i++;
  return { word: argv[i], rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
}

/** Parses a command's options (plus --json and --help); anything else is a usage error. */
export function parseCommandLine<T extends ParseArgsOptionsConfig>(args: string[], options: T) {
  try {
    return parseArgs({ args, allowPositionals: false, strict: true, options: { ...COMMON_OPTIONS, ...options } }).values;
  } catch (error) {
    // An unknown option, a stray argument or a missing value is a usage error (exit 2), not a crash.
    if (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS_'))
      throw new UsageError(error.message);
    throw error;
  }
}

/** The database for the length of fn: through `orderpay serve` when it holds the embedded one. */
export async function withDatabase<T>(config: Config, fn: (db: Db) => Promise<T>): Promise<T> {
  const db = await openCommandDatabase(config);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** Which database a command used, in words: what it says when it finds nothing there. */
export function describeDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  if (!config.databaseUrl) return `${path.resolve(config.dataDir)} (DATA_DIR, the embedded database)`;
  return `${describeServer(config.databaseUrl)} (DATABASE_URL, PostgreSQL)`;
}

/** A command found no orderpay database where the configuration points: it creates none. */
function noDatabase(config: Config): UsageError {
  return new UsageError(
    `no orderpay database at ${describeDatabase(config)}: start the server there first (orderpay serve, or orderpay migrate), or set DATA_DIR or DATABASE_URL to the server's`,
  );
}

async function hasSchema(db: Db): Promise<boolean> {
  const { rows } = await db.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
  return rows[0]!.present;
}

/**
 * Commands that read or write rows, on the database a server made: never a new one (a command run
 * without the server's DATA_DIR would otherwise make and migrate ./data and then find nothing in
 * it). Migrations the database lacks are applied first, as the server would on its next start.
 */
export async function withMigratedDatabase<T>(
  config: Config,
  fn: (db: Db) => Promise<T>,
  /** `orderpay seed` makes the database it fills, as `serve` and `migrate` do. */
  { create = false }: { create?: boolean } = {},
): Promise<T> {
  const embedded = !config.databaseUrl && !config.dataDir.startsWith('memory://');
  if (!create && embedded && !existsSync(path.join(config.dataDir, 'PG_VERSION'))) throw noDatabase(config);
  return withDatabase(config, async (db) => {
    if (!create && !(await hasSchema(db))) throw noDatabase(config);
    await migrateDatabase(config, db);
    return fn(db);
  });
}
