// The SSRF guard on registration: in production (where private addresses are never allowed) an
// endpoint must be https on a host that resolves to public addresses only; IP literals need no DNS,
// and `localhost` is a name that resolves to loopback. Development and tests may allow private
// addresses (ORDERPAY_WEBHOOKS_ALLOW_PRIVATE), and http with them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setUpTestApp, startTestApp, type TestApp } from '../../helpers/app.ts';
import { expectProblem } from '../../helpers/problems.ts';
import { PUBLIC_URL_LITERAL, registerEndpoint, send, storedEndpoint, webhookStaffToken, webhookTestConfig } from './webhooks.ts';

const t = setUpTestApp({ env: 'production', ...webhookTestConfig() });

async function endpointCount(app: TestApp): Promise<number> {
  return (await app.db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_endpoints')).rows[0]!.n;
}

describe('registering an endpoint in production', () => {
  test('the configuration allows no private address', () => {
    assert.equal(t.config.env, 'production');
    assert.equal(t.config.webhooks.allowPrivate, false);
  });

  const refusedHosts: [string, string, string][] = [
    ['https://127.0.0.1/hooks', '127.0.0.1', '127.0.0.1 is a loopback address'],
    ['https://10.20.30.40/hooks', '10.20.30.40', '10.20.30.40 is a private address'],
    ['https://192.168.0.10:8443/hooks', '192.168.0.10', '192.168.0.10 is a private address'],
    ['https://169.254.169.254/latest/meta-data/', '169.254.169.254', '169.254.169.254 is a linkLocal address'],
    ['https://100.64.1.2/hooks', '100.64.1.2', '100.64.1.2 is a carrierGradeNat address'],
    ['https://0.0.0.0/hooks', '0.0.0.0', '0.0.0.0 is a unspecified address'],
    ['https://224.0.0.251/hooks', '224.0.0.251', '224.0.0.251 is a multicast address'],
    ['https://[::1]/hooks', '[::1]', '::1 is a loopback address'],
    ['https://[::ffff:127.0.0.1]/hooks', '[::ffff:7f00:1]', '::ffff:7f00:1 is a loopback address'],
    ['https://[fd00:ec2::254]/latest/meta-data/', '[fd00:ec2::254]', 'fd00:ec2::254 is a uniqueLocal address'],
    ['https://[fe80::1]/hooks', '[fe80::1]', 'fe80::1 is a linkLocal address'],
    ['https://[ff02::1]/hooks', '[ff02::1]', 'ff02::1 is a multicast address'],
    // IPv6 forms carrying an IPv4 address (decision 0116; every form in test/unit/url-guard.test.ts).
    ['https://[::127.0.0.1]:4296/e', '[::7f00:1]', '::7f00:1 is a ipv4Compatible address'],
    ['https://[::a9fe:a9fe]/latest/meta-data/', '[::a9fe:a9fe]', '::a9fe:a9fe is a ipv4Compatible address'],
    ['https://[::8.8.8.8]/hooks', '[::808:808]', '::808:808 is a ipv4Compatible address'],
    ['https://[::ffff:0:10.0.0.1]/hooks', '[::ffff:0:a00:1]', '::ffff:0:a00:1 is a ipv4Translated address'],
    ['https://[64:ff9b::169.254.169.254]/hooks', '[64:ff9b::a9fe:a9fe]', '64:ff9b::a9fe:a9fe is a linkLocal address'],
    ['https://[64:ff9b:1::8.8.8.8]/hooks', '[64:ff9b:1::808:808]', '64:ff9b:1::808:808 is a nat64LocalUse address'],
    ['https://[2002:7f00:1::1]/hooks', '[2002:7f00:1::1]', '2002:7f00:1::1 is a 6to4 address'],
    ['https://[2001:0:a9fe:a9fe::1]/hooks', '[2001:0:a9fe:a9fe::1]', '2001:0:a9fe:a9fe::1 is a teredo address'],
    ['https://[2606:4700:1::5efe:10.0.0.1]/hooks', '[2606:4700:1::5efe:a00:1]', '2606:4700:1::5efe:a00:1 is a isatap address'],
    // Another spelling of loopback: the URL parser writes 127.1 as 127.0.0.1.
    ['https://127.1/hooks', '127.0.0.1', '127.0.0.1 is a loopback address'],
  ];
  for (const [url, host, reason] of refusedHosts) {
    test(`${url} → 400 WEBHOOK_URL_REFUSED (${reason}); nothing written`, async () => {
      const before = await endpointCount(t);
      const res = await send(t, 'POST', await webhookStaffToken(t), '/webhook-endpoints', { url, enabledEvents: ['*'] });
      expectProblem(
        res,
        400,
        'WEBHOOK_URL_REFUSED',
        '/webhook-endpoints',
        `The url's host ${host} is refused: ${reason}; webhooks go to public addresses only.`,
        { errors: [{ pointer: '/url', detail: reason }] },
      );
      assert.equal(await endpointCount(t), before);
    });
  }

  test('a name that resolves to loopback (localhost) → 400 WEBHOOK_URL_REFUSED', async () => {
    const res = await send(t, 'POST', await webhookStaffToken(t), '/webhook-endpoints', {
      url: 'https://localhost:8443/hooks',
      enabledEvents: ['*'],
    });
    assert.equal(res.statusCode, 400, res.body);
    const problem = res.json();
    assert.equal(problem.code, 'WEBHOOK_URL_REFUSED');
    assert.match(
      problem.detail,
      /^The url's host localhost is refused: (127\.0\.0\.1|::1) is a loopback address; webhooks go to public addresses only\.$/,
    );
    assert.deepEqual(problem.errors, [{ pointer: '/url', detail: problem.detail.split(': ')[1].split(';')[0] }]);
  });

  test('a name that does not resolve → 400 WEBHOOK_URL_REFUSED', async () => {
    expectProblem(
      await send(t, 'POST', await webhookStaffToken(t), '/webhook-endpoints', { url: 'https://hooks.invalid/', enabledEvents: ['*'] }),
      400,
      'WEBHOOK_URL_REFUSED',
      '/webhook-endpoints',
      "The url's host hooks.invalid does not resolve.",
      { errors: [{ pointer: '/url', detail: 'the host does not resolve' }] },
    );
  });

  const refusedUrls: [string, string][] = [
    ['http://93.184.215.14/hooks', 'The url must be https.'],
    ['https://user:password@93.184.215.14/hooks', 'The url may not carry credentials; authenticate deliveries by their signature.'],
    ['https://93.184.215.14/hooks#section', 'The url may not have a fragment.'],
  ];
  for (const [url, detail] of refusedUrls) {
    test(`${url} → 400 WEBHOOK_URL_REFUSED: ${detail}`, async () => {
      expectProblem(
        await send(t, 'POST', await webhookStaffToken(t), '/webhook-endpoints', { url, enabledEvents: ['*'] }),
        400,
        'WEBHOOK_URL_REFUSED',
        '/webhook-endpoints',
        detail,
        { errors: [{ pointer: '/url', detail }] },
      );
    });
  }

  test('https on a public address is registered', async () => {
    // A public IPv4 address in the IPv6 forms judged as the address they reach (decision 0116).
    for (const url of [
      PUBLIC_URL_LITERAL,
      'https://[2606:4700:4700::1111]/hooks',
      'https://[::ffff:5db8:d70e]/hooks',
      'https://[64:ff9b::5db8:d70e]/hooks',
    ]) {
      const made = await registerEndpoint(t, await webhookStaffToken(t), { url });
      assert.equal((await storedEndpoint(t.db, made.id))!.url, url);
    }
  });
});

describe('with ORDERPAY_WEBHOOKS_ALLOW_PRIVATE=true (development, tests)', () => {
  let dev: TestApp;
  before(async () => {
    dev = await startTestApp(webhookTestConfig({ allowPrivate: true }));
  });
  after(() => dev.close());

  test('http and loopback or private addresses are registered', async () => {
    for (const url of ['http://127.0.0.1:29420/hooks', 'https://[::1]:29421/', 'http://10.0.0.8/hooks', 'http://localhost:29422/']) {
      const made = await registerEndpoint(dev, await webhookStaffToken(dev), { url });
      assert.equal(made.url, url);
    }
  });

  test('credentials and other schemes are still refused', async () => {
    for (const [url, detail] of [
      ['http://user:pw@127.0.0.1/', 'The url may not carry credentials; authenticate deliveries by their signature.'],
      ['ftp://127.0.0.1/', 'The url must be http or https.'],
    ] as const) {
      expectProblem(
        await send(dev, 'POST', await webhookStaffToken(dev), '/webhook-endpoints', { url, enabledEvents: ['*'] }),
        400,
        'WEBHOOK_URL_REFUSED',
        '/webhook-endpoints',
        detail,
        { errors: [{ pointer: '/url', detail }] },
      );
    }
  });
});
