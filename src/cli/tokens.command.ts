// `orderpay tokens issue`: an access token signed with the active key, for a user or a service client.
import { issueTokenFor, UnknownSubjectError } from '../auth/access-token.ts';
import { MAX_TOKEN_LIFETIME_SECONDS } from '../auth/keys.store.ts';
import { loadConfig } from '../config.ts';
import { describeDatabase, parseCommandLine, takeWord, UsageError, withMigratedDatabase, type Output } from './command.ts';

export const TOKENS_USAGE = `  tokens issue               sign an access token with the active signing key
      --email <email>        for this user (role from the database), or
      --client-id <id>       for a service client (client credentials); a registered
                             client's token carries its API version (clients list)
      --scope "<scopes>"     space-separated (default: every API scope the subject may hold)
      --expires-in <sec>     lifetime, default 600, at most ${MAX_TOKEN_LIFETIME_SECONDS}`;

const OPTIONS = {
  email: { type: 'string' },
  'client-id': { type: 'string' },
  scope: { type: 'string', multiple: true },
  'expires-in': { type: 'string' },
} as const;

/** argv: what follows `tokens`. */
export async function runTokensCommand(argv: string[], out: Output): Promise<void> {
  const { word, rest } = takeWord(argv);
  if (word !== 'issue') throw new UsageError('usage: orderpay tokens issue (--email E | --client-id C) [--scope S] [--expires-in N]');
  const values = parseCommandLine(rest, OPTIONS);
  const { email, 'client-id': clientId } = values;
  if (!email === !clientId) throw new UsageError('tokens issue needs exactly one of --email or --client-id');
  const expiresIn = values['expires-in'] === undefined ? 600 : Number(values['expires-in']);
  // A rotated key stays published for MAX_TOKEN_LIFETIME_SECONDS (+ skew): no token may outlive that.
  if (!Number.isInteger(expiresIn) || expiresIn < 1 || expiresIn > MAX_TOKEN_LIFETIME_SECONDS) {
    throw new UsageError(`--expires-in must be 1–${MAX_TOKEN_LIFETIME_SECONDS} seconds`);
  }
  const scopes = (values.scope ?? []).flatMap((s) => s.split(' ')).filter(Boolean);
  const subject = email ? { email } : { clientId: clientId! };
  const config = loadConfig();
  const { issuer, audience } = config;
  const token = await withMigratedDatabase(config, (db) => issueTokenFor(db, config, subject, scopes, expiresIn)).catch(
    (error: unknown) => {
      if (error instanceof UnknownSubjectError) throw new UnknownSubjectError(`${error.message} in ${describeDatabase(config)}`);
      throw error;
    },
  );
  out.print(token, { access_token: token, token_type: 'Bearer', expires_in: expiresIn, issuer, audience });
  // Only a server with this issuer and audience (its PUBLIC_URL, or PORT) accepts the token. Said on
  // stderr, so that TOKEN=$(orderpay tokens issue …) still captures the token alone. With --json the
  // object names them; a warning line is added when they come from PORT alone, which a command run
  // without the server's settings gets wrong without a word.
  const fromPortAlone = !process.env.PUBLIC_URL && !process.env.ORDERPAY_ISSUER;
  if (!out.json) console.error(`Signed for issuer ${issuer} and audience ${audience}: only a server with these accepts it.`);
  else if (fromPortAlone) out.warn(`signed for issuer ${issuer} (from PORT; no PUBLIC_URL): only a server with this issuer accepts it`);
}
