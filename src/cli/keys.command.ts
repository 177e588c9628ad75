// `orderpay keys rotate | list`: the authorization server's signing keys (public facts only).
import { MAX_SIGNED_TOKEN_LIFETIME_SECONDS, listSigningKeys, rotateSigningKeys, type SigningKeyInfo } from '../auth/keys.store.ts';
import { loadConfig } from '../config.ts';
import { parseCommandLine, takeWord, UsageError, withMigratedDatabase, type Output } from './command.ts';

export const KEYS_USAGE = `  keys rotate                a new signing key per algorithm (RS256, and PS256 for FAPI 2.0
                             clients) signs from now on; the old ones stay published for
                             ${MAX_SIGNED_TOKEN_LIFETIME_SECONDS} s, until what they signed has expired
  keys list                  kid, algorithm, status and dates of every key (never private parts)`;

function describeKey(key: SigningKeyInfo): string {
  const until = key.status === 'active' ? '' : `  published until ${key.expiresAt}`;
  return `${key.kid}  ${key.alg}  ${key.status.padEnd(7)}  created ${key.createdAt}${key.retiredAt ? `  retired ${key.retiredAt}` : ''}${until}`;
}

async function rotateKeys(argv: string[], out: Output): Promise<void> {
  parseCommandLine(argv, {});
  const { active, retired } = await withMigratedDatabase(loadConfig(), (db) => rotateSigningKeys(db));
  const lines = active.map((key) => `New signing key ${key.kid} (${key.alg}) signs from now on.`);
  for (const key of retired) lines.push(`Retired ${key.kid}; it stays in the JWKS until ${key.expiresAt}.`);
  out.print(lines.join('\n'), { active, retired });
}

async function printKeys(argv: string[], out: Output): Promise<void> {
  parseCommandLine(argv, {});
  const keys = await withMigratedDatabase(loadConfig(), listSigningKeys);
  out.print(keys.length ? keys.map(describeKey).join('\n') : 'No signing keys yet (one is created on first start)', { keys });
}

/** argv: what follows `keys`. */
export async function runKeysCommand(argv: string[], out: Output): Promise<void> {
  const { word, rest } = takeWord(argv);
  if (word === 'rotate') return rotateKeys(rest, out);
  if (word === 'list') return printKeys(rest, out);
  throw new UsageError('usage: orderpay keys rotate | orderpay keys list');
}
