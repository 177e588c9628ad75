// ORDERPAY_FAPI2_FOR_PAYMENTS=true: a confidential client holds the scopes that move money only on
// the FAPI 2.0 profile. One registered before the setting was turned on keeps its other scopes and
// is refused those (invalid_scope); a FAPI 2.0 client gets them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as client from 'openid-client';
import { decodeJwt, exportJWK, generateKeyPair } from 'jose';
import { createConfidentialClient, createFapi2Client } from '../../src/auth/clients.store.ts';
import { discoverClient, startAuthServer, type AuthServer } from '../helpers/oauth.ts';

const PORT = 29_925;
let server: AuthServer;

before(async () => {
  server = await startAuthServer(PORT, { ORDERPAY_FAPI2_FOR_PAYMENTS: 'true' });
});
after(async () => {
  await server.close();
});

const discover = (clientId: string, auth: client.ClientAuth, secret?: string) => discoverClient(server, clientId, auth, secret);

describe('ORDERPAY_FAPI2_FOR_PAYMENTS', () => {
  test('a confidential client off the profile: payments:write and payments:refund refused, its other scopes granted', async () => {
    const service = await createConfidentialClient(server.db, {
      name: 'Legacy payouts',
      scopes: ['orders:read payments:read payments:write payments:refund'],
    });
    const config = await discover(service.clientId, client.ClientSecretBasic(service.clientSecret), service.clientSecret);
    for (const scope of ['payments:write', 'payments:refund', 'orders:read payments:write']) {
      await assert.rejects(
        client.clientCredentialsGrant(config, { scope }),
        (error: { error?: string }) => error.error === 'invalid_scope',
        scope,
      );
    }
    const granted = await client.clientCredentialsGrant(config, { scope: 'orders:read payments:read' });
    assert.equal(decodeJwt(granted.access_token).scope, 'orders:read payments:read');
  });

  test('a FAPI 2.0 client gets payments:write, DPoP-bound', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const service = await createFapi2Client(server.db, {
      name: 'FAPI payouts',
      scopes: ['payments:write'],
      keys: { jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: 'payouts-1' }] } },
    });
    const config = await discover(service.clientId, client.PrivateKeyJwt({ key: privateKey, kid: 'payouts-1' }));
    const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
    const tokens = await client.clientCredentialsGrant(config, { scope: 'payments:write' }, { DPoP });
    assert.equal(tokens.token_type, 'dpop');
    assert.equal(decodeJwt(tokens.access_token).scope, 'payments:write');
  });
});
