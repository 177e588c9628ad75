// Bearer authentication at the resource server: how a request presents its access token
// (RFC 6750) and which JWT access tokens (RFC 9068) are accepted.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { base64url, decodeJwt, exportJWK, exportSPKI, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { issueTokenFor, signAccessToken } from '../../../src/auth/access-token.ts';
import { createSigningKey, findActiveSigningKey, listPublishedKeys, type SigningKey } from '../../../src/auth/keys.store.ts';
import { loadConfig } from '../../../src/config.ts';
import { LATEST_API_VERSION, UNPINNED_API_VERSION } from '../../../src/core/api-versions.ts';
import { BOUND_TOKEN_AS_BEARER } from '../../../src/http/token-binding.ts';
import { createTokenVerifier, MAX_CLOCK_SKEW_SECONDS } from '../../../src/http/token-verifier.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createUser } from '../../helpers/factories.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { EMPTY_FIRST_PAGE_META } from '../../helpers/paging.ts';

const REALM_ONLY = 'Bearer realm="orderpay"';

function invalidTokenChallenge(description: string): string {
  return `Bearer realm="orderpay", error="invalid_token", error_description="${description}"`;
}

describe('RFC 6750 / RFC 9068 bearer tokens', () => {
  let t: TestApp;
  let clock = new Date();
  let key: SigningKey;
  let customerId: number;

  before(async () => {
    t = await startTestApp({}, () => clock);
    key = (await findActiveSigningKey(t.db))!;
    customerId = (await createUser(t.db)).id;
  });
  after(() => t.close());

  /** GET /orders with this Authorization header (or none). */
  const listOrders = (authorization?: string, url = '/orders') =>
    t.request(undefined, { method: 'GET', url, headers: authorization === undefined ? {} : { authorization } });

  /** The claims an RFC 9068 access token for our customer carries, for hand-built tokens. */
  function accessTokenClaims(): Record<string, unknown> {
    const iat = Math.floor(clock.getTime() / 1000);
    return {
      iss: t.config.issuer,
      aud: t.config.audience,
      sub: String(customerId),
      client_id: 'test-client',
      scope: 'orders:read',
      iat,
      exp: iat + 600,
      jti: `jti-${iat}-${Math.random()}`,
    };
  }

  async function signWith(privateJwk: JWK, alg: string, header: Record<string, unknown>, claims = accessTokenClaims()): Promise<string> {
    const { alg: _alg, ...material } = privateJwk;
    return new SignJWT(claims).setProtectedHeader({ alg, ...header }).sign(await importJWK(material, alg));
  }

  function assertUnauthorized(response: Awaited<ReturnType<typeof listOrders>>, code: string, challenge: string, detail: string): void {
    assert.equal(response.statusCode, 401, response.body);
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(response.headers['www-authenticate'], challenge);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.deepEqual(response.json(), {
      type: `http://orderpay.test/problems/${code.toLowerCase().replaceAll('_', '-')}`,
      title: code === 'AUTH_TOKEN_MISSING' ? 'Authentication required' : 'Access token is invalid',
      status: 401,
      detail,
      instance: '/orders',
      code,
      requestId: response.headers['x-request-id'],
    });
  }

  /** 401 invalid_token whose error_description and detail name the failed check (and, for a token meant for another server, what this one accepts). */
  const assertInvalid = (response: Awaited<ReturnType<typeof listOrders>>, description: string, hint?: string) =>
    assertUnauthorized(
      response,
      'AUTH_TOKEN_INVALID',
      invalidTokenChallenge(description),
      `The access token is invalid: ${description}.${hint ? ` ${hint}` : ''}`,
    );
  const acceptedHere = () => `This API accepts tokens issued by ${t.config.issuer} for the audience ${t.config.audience}.`;

  const assertMissing = (response: Awaited<ReturnType<typeof listOrders>>) =>
    assertUnauthorized(
      response,
      'AUTH_TOKEN_MISSING',
      REALM_ONLY,
      'This endpoint requires an access token: Authorization: Bearer <token>.',
    );

  describe('presenting the token (RFC 6750 §2)', () => {
    test('no Authorization header → 401 AUTH_TOKEN_MISSING with a bare Bearer challenge (§3.1: no error code)', async () => {
      assertMissing(await listOrders());
    });

    test('an empty Authorization header → 401 AUTH_TOKEN_MISSING', async () => {
      assertMissing(await listOrders(''));
    });

    test('another scheme (Basic) → 401 AUTH_TOKEN_MISSING: an unsupported method carries no error code (§3.1)', async () => {
      assertMissing(await listOrders(`Basic ${Buffer.from('alice:secret').toString('base64')}`));
      assertMissing(await listOrders('Bearerish abc.def.ghi'));
    });

    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      test(`the scheme is case-insensitive: "${scheme}" → 200`, async () => {
        const token = await t.token({ userId: customerId, scopes: ['orders:read'] });
        const response = await listOrders(`${scheme} ${token}`);
        assert.equal(response.statusCode, 200, response.body);
        assert.equal(response.headers['content-type'], 'application/json; charset=utf-8');
        assert.equal(response.headers['www-authenticate'], undefined);
        assert.deepEqual(response.json(), {
          data: [],
          meta: EMPTY_FIRST_PAGE_META,
        });
      });
    }

    test('"Bearer" without a token, or a token with characters outside b64token → 401 invalid_token', async () => {
      const token = await t.token({ userId: customerId });
      for (const header of ['Bearer', 'Bearer ', `Bearer ${token} extra`, `Bearer ${token.replace('.', '!')}`, `Bearer "${token}"`]) {
        assertInvalid(await listOrders(header), 'the Bearer credentials are malformed');
      }
    });

    test('two Authorization headers → 400 REQUEST_HEADER_INVALID with invalid_request (Node would silently keep the first)', async () => {
      const token = await t.token({ userId: customerId, scopes: ['orders:read'] });
      const injected = await t.request(undefined, {
        method: 'GET',
        url: '/orders',
        headers: { authorization: [`Bearer ${token}`, `Bearer ${token}`] as unknown as string },
      });
      expectProblem(injected, 400, 'REQUEST_HEADER_INVALID', '/orders', 'Send one Authorization header, not several.', {
        errors: [{ parameter: 'Authorization', detail: 'Authorization must be sent once' }],
      });
      assert.equal(
        injected.headers['www-authenticate'],
        'Bearer realm="orderpay", error="invalid_request", error_description="several Authorization headers"',
      );
    });

    test('access_token in the query string → 400 AUTH_TOKEN_NOT_IN_HEADER (RFC 9700 §2.5), with or without a header', async () => {
      const token = await t.token({ userId: customerId });
      for (const authorization of [undefined, `Bearer ${token}`]) {
        const response = await listOrders(authorization, `/orders?access_token=${token}`);
        assert.equal(response.statusCode, 400);
        assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
        assert.equal(
          response.headers['www-authenticate'],
          'Bearer realm="orderpay", error="invalid_request", error_description="token in query string"',
        );
        assert.deepEqual(response.json(), {
          type: 'http://orderpay.test/problems/auth-token-not-in-header',
          title: 'Access token must be sent in the Authorization header',
          status: 400,
          detail: 'Send the access token in the Authorization header, not in the query string.',
          instance: '/orders',
          code: 'AUTH_TOKEN_NOT_IN_HEADER',
          requestId: response.headers['x-request-id'],
        });
      }
    });

    test('a token in the query string is refused before any route work, also on /v1 paths', async () => {
      const response = await listOrders(undefined, '/v1/orders/1?access_token=x');
      assert.equal(response.statusCode, 400);
      assert.equal(response.json().code, 'AUTH_TOKEN_NOT_IN_HEADER');
      assert.equal(response.json().instance, '/v1/orders/1');
    });
  });

  describe('verifying the JWT (RFC 9068 §4)', () => {
    test('garbage and truncated tokens → 401 invalid_token: not a well-formed JWT, or a signature that does not verify', async () => {
      const token = await t.token({ userId: customerId });
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const malformed = ['garbage', 'a.b.c', `${header}.${payload}`, `${base64url.encode('{"alg":')}.${payload}.${signature}`];
      for (const candidate of malformed) assertInvalid(await listOrders(`Bearer ${candidate}`), 'the token is not a well-formed JWT');
      const forged = [
        token.slice(0, -10),
        `${header}.${payload}.`,
        `${header}.${payload}.${signature.slice(0, -4)}`,
        // Claims changed after signing (exp pushed out): the signature no longer matches.
        `${header}.${base64url.encode(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), exp: 9_999_999_999 }))}.${signature}`,
      ];
      for (const candidate of forged) assertInvalid(await listOrders(`Bearer ${candidate}`), "the token's signature does not verify");
    });

    test('expired (exp in the past) → 401 invalid_token "the token has expired"', async () => {
      const token = await t.token({ userId: customerId, expiresIn: -60 });
      assertInvalid(await listOrders(`Bearer ${token}`), 'the token has expired');
    });

    test('a token that verified stops verifying once the clock passes exp, even though it was cached', async () => {
      const start = clock;
      try {
        const token = await t.token({ userId: customerId, expiresIn: 120 });
        assert.equal((await listOrders(`Bearer ${token}`)).statusCode, 200);
        clock = new Date(start.getTime() + 119_000);
        assert.equal((await listOrders(`Bearer ${token}`)).statusCode, 200);
        clock = new Date(start.getTime() + 121_000);
        assertInvalid(await listOrders(`Bearer ${token}`), 'the token has expired');
      } finally {
        clock = start;
      }
    });

    test(`issued in the future (iat more than ${MAX_CLOCK_SKEW_SECONDS} s ahead) → 401 invalid_token; within the skew → 200`, async () => {
      const nowSeconds = Math.floor(clock.getTime() / 1000);
      const sign = (iat: number) =>
        signWith(key.privateJwk, key.alg, { kid: key.kid, typ: 'at+jwt' }, { ...accessTokenClaims(), iat, exp: iat + 600 });
      assertInvalid(
        await listOrders(`Bearer ${await sign(nowSeconds + MAX_CLOCK_SKEW_SECONDS + 5)}`),
        'the token was issued in the future (iat)',
      );
      assertInvalid(await listOrders(`Bearer ${await sign(nowSeconds + 3600)}`), 'the token was issued in the future (iat)');
      assert.equal((await listOrders(`Bearer ${await sign(nowSeconds + MAX_CLOCK_SKEW_SECONDS - 5)}`)).statusCode, 200);
    });

    test('not yet valid (nbf in the future) → 401 invalid_token', async () => {
      const claims = { ...accessTokenClaims(), nbf: Math.floor(clock.getTime() / 1000) + 300 };
      assertInvalid(
        await listOrders(`Bearer ${await signWith(key.privateJwk, key.alg, { kid: key.kid, typ: 'at+jwt' }, claims)}`),
        'the token is not valid yet (nbf)',
      );
    });

    test('wrong issuer → 401 invalid_token', async () => {
      const token = await signAccessToken(key, {
        issuer: 'http://evil.test/oauth',
        audience: t.config.audience,
        subject: String(customerId),
        clientId: 'test-client',
        scope: 'orders:read',
        now: clock,
      });
      assertInvalid(await listOrders(`Bearer ${token}`), 'the token is from another issuer', acceptedHere());
    });

    test('wrong audience (a token for another resource server) → 401 invalid_token', async () => {
      const token = await signAccessToken(key, {
        issuer: t.config.issuer,
        audience: 'http://other-api.test',
        subject: String(customerId),
        clientId: 'test-client',
        scope: 'orders:read',
        now: clock,
      });
      assertInvalid(await listOrders(`Bearer ${token}`), 'the token is for another audience', acceptedHere());
    });

    test('a token `orderpay tokens issue` signed for a server on another PORT → 401 naming the failed check and what this server accepts', async () => {
      const elsewhere = loadConfig({ NODE_ENV: 'test', PORT: '3000' });
      assert.notEqual(elsewhere.issuer, t.config.issuer);
      const token = await issueTokenFor(t.db, elsewhere, { clientId: 'svc' }, ['orders:read']);
      const response = await listOrders(`Bearer ${token}`);
      assertInvalid(response, 'the token is from another issuer', acceptedHere());
      assert.match(response.json().detail, /issued by http:\/\/orderpay\.test\/oauth for the audience http:\/\/orderpay\.test\./);
      // RFC 6750 §3: error_description="…" holds %x20-21 / %x23-5B / %x5D-7E only, and no part of the token.
      const description = /error_description="([^"]*)"/.exec(response.headers['www-authenticate'] as string)![1]!;
      assert.match(description, /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/);
      for (const part of token.split('.')) assert.ok(!response.body.includes(part) && !description.includes(part));
    });

    test('a token `issueTokenFor` binds to a DPoP key carries cnf.jkt (RFC 9449 §6.1) and is refused as Bearer (§7.2)', async () => {
      const jkt = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';
      const token = await issueTokenFor(t.db, t.config, { clientId: 'svc' }, ['orders:read'], 600, jkt);
      assert.deepEqual(decodeJwt(token).cnf, { jkt });
      const response = await listOrders(`Bearer ${token}`);
      assert.equal(response.statusCode, 401);
      const challenge = response.headers['www-authenticate'] as string;
      assert.ok(challenge.startsWith('DPoP '), challenge);
      assert.ok(challenge.includes(`error="invalid_token", error_description="${BOUND_TOKEN_AS_BEARER}"`), challenge);
    });

    test('the well-formed control token built by hand is accepted (so the variants below fail for their one difference)', async () => {
      const response = await listOrders(`Bearer ${await signWith(key.privateJwk, key.alg, { kid: key.kid, typ: 'at+jwt' })}`);
      assert.equal(response.statusCode, 200, response.body);
    });

    for (const typ of ['JWT', 'jwt', 'application/jwt', undefined]) {
      test(`typ ${typ ?? '(absent)'} instead of at+jwt → 401 invalid_token (RFC 9068 §4 step 1)`, async () => {
        const header = typ === undefined ? { kid: key.kid } : { kid: key.kid, typ };
        assertInvalid(
          await listOrders(`Bearer ${await signWith(key.privateJwk, key.alg, header)}`),
          'the token is not a JWT access token (typ at+jwt)',
        );
      });
    }

    test('application/at+jwt (the full media type form of typ) is accepted', async () => {
      const response = await listOrders(`Bearer ${await signWith(key.privateJwk, key.alg, { kid: key.kid, typ: 'application/at+jwt' })}`);
      assert.equal(response.statusCode, 200, response.body);
    });

    test('an id_token-like JWT (typ JWT, aud = client id) → 401 invalid_token', async () => {
      const claims = {
        ...accessTokenClaims(),
        aud: 'test-client',
        azp: 'test-client',
        nonce: 'n-0S6_WzA2Mj',
        auth_time: Math.floor(clock.getTime() / 1000),
      };
      assertInvalid(
        await listOrders(`Bearer ${await signWith(key.privateJwk, key.alg, { kid: key.kid, typ: 'JWT' }, claims)}`),
        'the token is not a JWT access token (typ at+jwt)',
      );
    });

    test('alg "none" (an unsigned token) → 401 invalid_token', async () => {
      const encode = (value: object) => base64url.encode(JSON.stringify(value));
      for (const header of [
        { alg: 'none', typ: 'at+jwt' },
        { alg: 'none', typ: 'at+jwt', kid: key.kid },
        { alg: 'None', typ: 'at+jwt', kid: key.kid },
      ]) {
        const unsigned = `${encode(header)}.${encode(accessTokenClaims())}.`;
        assertInvalid(await listOrders(`Bearer ${unsigned}`), "the token's signing algorithm is not accepted");
      }
    });

    test('HS256 signed with the public key material (algorithm confusion) → 401 invalid_token', async () => {
      const pem = await exportSPKI((await importJWK(key.publicJwk, key.alg)) as Parameters<typeof exportSPKI>[0]);
      const secrets = [
        new TextEncoder().encode(pem),
        new TextEncoder().encode(JSON.stringify(key.publicJwk)),
        Buffer.from(key.publicJwk.n!, 'base64url'),
      ];
      for (const secret of secrets) {
        const token = await new SignJWT(accessTokenClaims()).setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'at+jwt' }).sign(secret);
        assertInvalid(await listOrders(`Bearer ${token}`), "the token's signing algorithm is not accepted");
      }
    });

    test('an algorithm outside the allow-list (RS384 with the real private key) → 401 invalid_token', async () => {
      assertInvalid(
        await listOrders(`Bearer ${await signWith(key.privateJwk, 'RS384', { kid: key.kid, typ: 'at+jwt' })}`),
        "the token's signing algorithm is not accepted",
      );
    });

    test('signed by a key that is not in the database → 401 invalid_token, whether its kid is unknown or borrowed', async () => {
      const { privateKey } = await generateKeyPair('RS256', { extractable: true });
      const foreign = await exportJWK(privateKey);
      clock = new Date(clock.getTime() + 2_000); // past the JWKS reload cooldown: the unknown kid causes a real reload
      assertInvalid(
        await listOrders(`Bearer ${await signWith(foreign, 'RS256', { kid: 'not-a-known-kid', typ: 'at+jwt' })}`),
        'the token is signed with a key this server does not publish',
      );
      assertInvalid(
        await listOrders(`Bearer ${await signWith(foreign, 'RS256', { kid: key.kid, typ: 'at+jwt' })}`),
        "the token's signature does not verify",
      );
      assertInvalid(
        await listOrders(`Bearer ${await signWith(foreign, 'RS256', { typ: 'at+jwt' })}`),
        "the token's signature does not verify",
      );
    });

    test('claims RFC 9068 §2.2 requires (sub, client_id, iat) missing, or sub not a user id → 401 invalid_token', async () => {
      for (const drop of ['sub', 'client_id', 'iat', 'exp']) {
        const { [drop]: _dropped, ...claims } = accessTokenClaims();
        assertInvalid(
          await listOrders(`Bearer ${await signWith(key.privateJwk, key.alg, { kid: key.kid, typ: 'at+jwt' }, claims)}`),
          `the token's ${drop} claim is missing or invalid`,
        );
      }
      for (const sub of ['alice', '0', '-1', '12345678901234567']) {
        const claims = { ...accessTokenClaims(), sub };
        assertInvalid(
          await listOrders(`Bearer ${await signWith(key.privateJwk, key.alg, { kid: key.kid, typ: 'at+jwt' }, claims)}`),
          "the token's sub claim is missing or invalid",
        );
      }
    });

    test('key rotation: a token signed by a key created after start verifies once the JWKS reloads; old tokens still verify', async () => {
      const earlier = await t.token({ userId: customerId, scopes: ['orders:read'] });
      assert.equal((await listOrders(`Bearer ${earlier}`)).statusCode, 200);
      const rotated = await createSigningKey(t.db);
      assert.notEqual(rotated.kid, key.kid);
      // The verifier reloads the key set on an unknown kid at most once per second (of its clock).
      clock = new Date(clock.getTime() + 2_000);
      const token = await signAccessToken(rotated, {
        issuer: t.config.issuer,
        audience: t.config.audience,
        subject: String(customerId),
        clientId: 'test-client',
        scope: 'orders:read',
        now: clock,
      });
      const response = await listOrders(`Bearer ${token}`);
      assert.equal(response.statusCode, 200, response.body);
      assert.deepEqual(response.json().meta, EMPTY_FIRST_PAGE_META);
      const old = await signAccessToken(key, {
        issuer: t.config.issuer,
        audience: t.config.audience,
        subject: String(customerId),
        clientId: 'test-client',
        scope: 'orders:read',
        now: clock,
      });
      assert.equal((await listOrders(`Bearer ${old}`)).statusCode, 200);
    });
  });

  describe("the api_version claim: the client's pinned API version becomes principal.apiVersion", () => {
    /** The principal the app's verifier makes of a token (the same options as src/app.ts). */
    const principalOf = (token: string) =>
      createTokenVerifier({
        issuer: t.config.issuer,
        audience: t.config.audience,
        loadKeys: () => listPublishedKeys(t.db),
        now: () => clock,
      })
        .verify(token)
        .then((verified) => verified.principal);
    const signWithClaim = (apiVersion: unknown) =>
      signWith(key.privateJwk, key.alg, { kid: key.kid, typ: 'at+jwt' }, { ...accessTokenClaims(), api_version: apiVersion });

    test('a supported version in the claim becomes apiVersion, for users and services alike', async () => {
      // Otherwise a claim ignored and a claim honoured would look the same.
      assert.notEqual(LATEST_API_VERSION, UNPINNED_API_VERSION);
      const user = await t.token({ userId: customerId, scopes: ['orders:read'], apiVersion: LATEST_API_VERSION });
      assert.deepEqual(await principalOf(user), {
        kind: 'user',
        userId: customerId,
        role: 'customer',
        clientId: 'test-client',
        scopes: new Set(['orders:read']),
        subject: String(customerId),
        apiVersion: LATEST_API_VERSION,
      });
      const service = await t.token({ service: true, clientId: 'svc-pinned', scopes: ['orders:read'], apiVersion: LATEST_API_VERSION });
      assert.deepEqual(await principalOf(service), {
        kind: 'service',
        clientId: 'svc-pinned',
        scopes: new Set(['orders:read']),
        subject: 'svc-pinned',
        apiVersion: LATEST_API_VERSION,
      });
      const pinnedToOne = await t.token({ service: true, clientId: 'svc-v1', apiVersion: 1 });
      assert.equal((await principalOf(pinnedToOne)).apiVersion, 1);
    });

    test('no claim (a user token from the CLI, an unregistered client) → the unpinned version', async () => {
      assert.equal((await principalOf(await t.token({ userId: customerId }))).apiVersion, UNPINNED_API_VERSION);
      assert.equal((await principalOf(await t.token({ service: true, clientId: 'svc-unpinned' }))).apiVersion, UNPINNED_API_VERSION);
    });

    test('a version the server does not speak, or a malformed claim, is unpinned: the token is still accepted', async () => {
      for (const claim of [99, 0, -1, 1.5, '2', String(LATEST_API_VERSION), null, true, [LATEST_API_VERSION], { v: 2 }]) {
        const token = await signWithClaim(claim);
        assert.equal((await principalOf(token)).apiVersion, UNPINNED_API_VERSION, JSON.stringify(claim));
        const response = await listOrders(`Bearer ${token}`);
        assert.equal(response.statusCode, 200, `${JSON.stringify(claim)}: ${response.body}`);
      }
    });
  });

  describe('scopes (RFC 6750 §3.1 insufficient_scope)', () => {
    test('a valid token without the scope → 403 AUTH_INSUFFICIENT_SCOPE naming it in WWW-Authenticate', async () => {
      const token = await t.token({ userId: customerId, scopes: ['products:write', 'payments:read'] });
      const response = await listOrders(`Bearer ${token}`);
      assert.equal(response.statusCode, 403);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8');
      assert.equal(response.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:read"');
      assert.deepEqual(response.json(), {
        type: 'http://orderpay.test/problems/auth-insufficient-scope',
        title: 'Insufficient scope',
        status: 403,
        detail: 'This operation requires the scope "orders:read".',
        instance: '/orders',
        code: 'AUTH_INSUFFICIENT_SCOPE',
        requestId: response.headers['x-request-id'],
      });
    });

    test('orders:read does not grant writes: POST /orders → 403 naming orders:write, and no order is created', async () => {
      const token = await t.token({ userId: customerId, scopes: ['orders:read'] });
      const response = await t.request(token, { method: 'POST', url: '/orders', payload: { productId: 1, qty: 1 } });
      assert.equal(response.statusCode, 403);
      assert.equal(response.headers['www-authenticate'], 'Bearer realm="orderpay", error="insufficient_scope", scope="orders:write"');
      assert.equal(response.json().code, 'AUTH_INSUFFICIENT_SCOPE');
      const { rows } = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM orders WHERE customer_id = $1', [customerId]);
      assert.equal(rows[0]!.n, 0);
    });

    test('a scope is matched whole, not as a prefix ("orders:readx", "orders") → 403', async () => {
      const token = await t.token({ userId: customerId, scopes: ['orders:readx', 'orders', 'ORDERS:READ'] });
      const response = await listOrders(`Bearer ${token}`);
      assert.equal(response.statusCode, 403);
      assert.equal(response.json().code, 'AUTH_INSUFFICIENT_SCOPE');
    });
  });
});
