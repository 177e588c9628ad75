// Sender-constrained tokens (RFC 9449 DPoP, RFC 8705 mTLS) are not spoken yet: the API does not
// verify proofs of possession. So nothing advertises DPoP, a client that sends a DPoP proof anyway
// gets a plain Bearer token it can use, and a token bound to a key (a `cnf` claim, from our issuer
// or another) is never accepted as a bearer token (RFC 9449 §7.2: that would let a stolen bound
// token work anywhere). Driven by openid-client's own DPoP support.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { decodeJwt, importJWK, SignJWT } from 'jose';
import { createConfidentialClient } from '../../src/auth/clients.store.ts';
import { findActiveSigningKey } from '../../src/auth/keys.store.ts';
import { startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_330;
let server: AuthServer;
let service: client.Configuration;
let serviceId: string;

before(async () => {
  server = await startAuthServer(PORT);
  const registered = await createConfidentialClient(server.db, { name: 'Bound service', scopes: ['orders:read'] });
  serviceId = registered.clientId;
  service = await client.discovery(
    new URL(server.issuer),
    registered.clientId,
    registered.clientSecret,
    client.ClientSecretBasic(registered.clientSecret),
    { execute: [client.allowInsecureRequests] },
  );
});
after(async () => {
  await server.close();
});

const listOrders = (authorization: string) => fetch(`${server.baseUrl}/v1/orders`, { headers: { authorization } });

/** A well-formed access token of our issuer for the service, signed with the active key, with these extra claims. */
async function signedToken(extra: Record<string, unknown>): Promise<string> {
  const key = (await findActiveSigningKey(server.db))!;
  const { alg: _alg, ...material } = key.privateJwk;
  const iat = Math.floor(Date.now() / 1000);
  const claims = {
    iss: server.issuer,
    aud: server.config.audience,
    sub: serviceId,
    client_id: serviceId,
    scope: 'orders:read',
    iat,
    exp: iat + 300,
    jti: `jti-${Math.random()}`,
    ...extra,
  };
  return new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' }).sign(await importJWK(material, key.alg));
}

describe('sender-constrained tokens: not accepted until the API verifies proofs', () => {
  test('discovery advertises no DPoP', () => {
    const metadata = service.serverMetadata();
    assert.equal(metadata.dpop_signing_alg_values_supported, undefined);
  });

  test('a client-credentials grant with a DPoP proof gets a Bearer token, unbound, that the API accepts', async () => {
    const dpop = client.getDPoPHandle(service, await client.randomDPoPKeyPair('ES256'));
    const tokens = await client.clientCredentialsGrant(service, { scope: 'orders:read' }, { DPoP: dpop });
    assert.equal(tokens.token_type, 'bearer');
    assert.equal(decodeJwt(tokens.access_token).cnf, undefined, 'no key binding');
    assert.equal((await listOrders(`Bearer ${tokens.access_token}`)).status, 200);
  });

  for (const [binding, cnf] of [
    ['DPoP (cnf.jkt, RFC 9449)', { jkt: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs' }],
    ['mTLS (cnf.x5t#S256, RFC 8705)', { 'x5t#S256': 'bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2' }],
  ] as const) {
    test(`a token bound to a key by ${binding} → 401 invalid_token saying why, as Bearer and under any other scheme`, async () => {
      const token = await signedToken({ cnf });
      const control = await listOrders(`Bearer ${await signedToken({})}`);
      assert.equal(control.status, 200, 'the same token without cnf is accepted');
      const response = await listOrders(`Bearer ${token}`);
      assert.equal(response.status, 401);
      const description = 'the token is bound to a key (cnf); this API accepts only unbound Bearer tokens';
      assert.equal(
        response.headers.get('www-authenticate'),
        `Bearer realm="orderpay", error="invalid_token", error_description="${description}"`,
      );
      const problem = (await response.json()) as { code: string; detail: string };
      assert.equal(problem.code, 'AUTH_TOKEN_INVALID');
      assert.equal(problem.detail, `The access token is invalid: ${description}.`);
      assert.equal((await listOrders(`DPoP ${token}`)).status, 401);
    });
  }
});
