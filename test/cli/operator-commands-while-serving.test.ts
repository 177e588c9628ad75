// Operators' commands beside a running `orderpay serve`, all real processes, and a real OAuth
// client (openid-client) at the server: what `users disable`, `clients disable` and `clients
// rotate-secret` write, the running server acts on (on the embedded database the commands reach it
// through the server's socket). The grace period's end is proved in-process with an injected clock
// (test/e2e/client-secret-rotation.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { buildPkceAuthorization, FormBrowser, readForm, signInWithForms, untilAccepted, untilRefused } from '../helpers/oauth.ts';
import {
  cleanUpProcessesAndDatabases,
  commandEnv,
  createTargetDatabase,
  DATABASE_LABEL,
  parseJsonOutput,
  runOrderpay,
  startServe,
  type Env,
  type ServeProcess,
} from './orderpay-process.ts';

const PORT = 29_813;
const BASE_URL = `http://127.0.0.1:${PORT}`;
const REDIRECT_URI = 'http://127.0.0.1:29819/callback';
/** How long the server may take to see a disable or an enable before the test gives up (not a speed claim): it reads them at most once a second. */
const PROPAGATION_DEADLINE_MS = 10_000;

let env: Env;
let server: ServeProcess;

before(async () => {
  const target = await createTargetDatabase();
  // PUBLIC_URL is where the server listens, so that discovery's issuer is the one openid-client asked.
  env = commandEnv({ ...target.env, PORT: String(PORT), PUBLIC_URL: BASE_URL, ORDERPAY_HTTP_MAX_EVENT_LOOP_DELAY_MS: '0' });
  server = await startServe(env);
});
after(async () => {
  await server?.stop();
  await cleanUpProcessesAndDatabases();
});

async function orderpay(args: string[], input?: string): Promise<Record<string, unknown>> {
  const result = await runOrderpay([...args, '--json'], env, { input });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return parseJsonOutput(result.stdout);
}

function discover(clientId: string, secret?: string): Promise<client.Configuration> {
  const auth = secret === undefined ? client.None() : client.ClientSecretBasic(secret);
  return client.discovery(new URL(`${BASE_URL}/oauth`), clientId, secret, auth, { execute: [client.allowInsecureRequests] });
}

const listOrders = (accessToken: string) => fetch(`${BASE_URL}/v1/orders`, { headers: { authorization: `Bearer ${accessToken}` } });

async function assertAccepted(accessToken: string): Promise<void> {
  const response = await listOrders(accessToken);
  assert.equal(response.status, 200, await response.text());
}

/** After an enable: the server sees it when it next reads the revocations, within about a second. */
async function assertAcceptedWithinDeadline(accessToken: string): Promise<void> {
  const response = await untilAccepted(() => listOrders(accessToken), PROPAGATION_DEADLINE_MS);
  assert.equal(response.status, 200, await response.text());
}

/** The server refreshes its copy of the revocations at most once a second. */
async function assertRefusedWithinDeadline(accessToken: string): Promise<void> {
  const response = await untilRefused(() => listOrders(accessToken), PROPAGATION_DEADLINE_MS);
  assert.equal(response.status, 401);
  assert.equal(
    response.headers.get('www-authenticate'),
    'Bearer realm="orderpay", error="invalid_token", error_description="the token has been revoked"',
  );
  await response.body?.cancel();
}

/** RFC 6749 §5.2 invalid_client: a client that authenticated with Basic gets it as a 401 challenge. */
const isInvalidClient = (error: unknown) =>
  error instanceof client.WWWAuthenticateChallengeError && error.cause[0]?.parameters.error === 'invalid_client';

const clientCredentials = async (clientId: string, secret: string) =>
  (await client.clientCredentialsGrant(await discover(clientId, secret), { scope: 'orders:read' })).access_token;

describe(`operators' commands while orderpay serve runs (${DATABASE_LABEL})`, () => {
  test('a service: after rotate-secret both secrets work; disabled, it gets no token and its token is refused; enabled, it works again', async () => {
    const service = (await orderpay([
      ...['clients', 'create', '--name', 'Served service', '--confidential'],
      ...['--grant', 'client_credentials', '--scope', 'orders:read'],
    ])) as { client_id: string; client_secret: string };
    const accessToken = await clientCredentials(service.client_id, service.client_secret);
    await assertAccepted(accessToken);

    const rotated = (await orderpay(['clients', 'rotate-secret', '--client-id', service.client_id, '--grace', '1h'])) as {
      client_secret: string;
    };
    await assertAccepted(await clientCredentials(service.client_id, service.client_secret));
    await assertAccepted(await clientCredentials(service.client_id, rotated.client_secret));

    await orderpay(['clients', 'disable', '--client-id', service.client_id]);
    await assert.rejects(clientCredentials(service.client_id, rotated.client_secret), isInvalidClient);
    await assertRefusedWithinDeadline(accessToken);

    await orderpay(['clients', 'enable', '--client-id', service.client_id]);
    await assertAcceptedWithinDeadline(await clientCredentials(service.client_id, rotated.client_secret));
  });

  test('a user: disabled, its token and refresh token are refused and it cannot sign in; enabled, it signs in again', async () => {
    const email = 'served-user@example.com';
    const password = 'served horse battery';
    await orderpay(['users', 'create', '--email', email, '--password-stdin'], `${password}\n`);
    const app = (await orderpay([
      ...['clients', 'create', '--name', 'Served app', '--public'],
      ...['--redirect-uri', REDIRECT_URI, '--scope', 'openid orders:read'],
    ])) as { client_id: string };
    const config = await discover(app.client_id);

    const authorize = () => buildPkceAuthorization(config, { redirectUri: REDIRECT_URI, scope: 'openid orders:read' });
    async function signIn() {
      const { url, checks } = await authorize();
      return client.authorizationCodeGrant(config, await signInWithForms({ baseUrl: BASE_URL }, url, email, password), checks);
    }

    const tokens = await signIn();
    await assertAccepted(tokens.access_token);

    await orderpay(['users', 'disable', '--email', email]);
    await assertRefusedWithinDeadline(tokens.access_token);
    await assert.rejects(
      client.refreshTokenGrant(config, tokens.refresh_token!),
      (error: unknown) => error instanceof client.ResponseBodyError && error.error === 'invalid_grant',
    );
    const browser = new FormBrowser();
    const { response } = await browser.follow((await authorize()).url);
    const login = readForm(await response.text());
    const refused = await browser.request(new URL(login.action, BASE_URL).toString(), { form: { ...login.fields, email, password } });
    assert.equal(refused.status, 401);
    assert.match(await refused.text(), /The email or password is not correct, or the account cannot sign in\./);

    await orderpay(['users', 'enable', '--email', email]);
    await assertAcceptedWithinDeadline((await signIn()).access_token);
  });
});
