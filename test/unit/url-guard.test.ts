// The webhook URL guard, without a network: which addresses a delivery may connect to (IPv4, IPv6,
// IPv4 inside IPv6), and the checks a URL passes before its host is resolved.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DomainError } from '../../src/core/errors.ts';
import { parseWebhookUrl, refusedAddressReason } from '../../src/webhooks/url-guard.ts';

describe('refusedAddressReason', () => {
  test('public unicast addresses, IPv4 and IPv6, may be called', () => {
    for (const address of ['8.8.8.8', '93.184.215.14', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(refusedAddressReason(address), undefined, address);
    }
  });

  const refused: [string, string, string][] = [
    // IPv4
    ['127.0.0.1', 'loopback', 'loopback'],
    ['127.255.255.254', 'loopback', 'all of 127/8'],
    ['10.1.2.3', 'private', '10/8'],
    ['172.16.0.1', 'private', '172.16/12, first'],
    ['172.31.255.255', 'private', '172.16/12, last'],
    ['192.168.1.1', 'private', '192.168/16'],
    ['169.254.169.254', 'linkLocal', 'the cloud metadata service'],
    ['169.254.0.1', 'linkLocal', 'link-local'],
    ['100.64.0.1', 'carrierGradeNat', 'CGNAT, first'],
    ['100.127.255.255', 'carrierGradeNat', 'CGNAT, last'],
    ['0.0.0.0', 'unspecified', 'unspecified (reaches this host)'],
    ['224.0.0.1', 'multicast', 'multicast'],
    ['239.255.255.250', 'multicast', 'SSDP multicast'],
    ['255.255.255.255', 'broadcast', 'broadcast'],
    ['192.0.2.1', 'reserved', 'documentation'],
    ['198.18.0.1', 'reserved', 'benchmarking'],
    // IPv6
    ['::1', 'loopback', 'loopback'],
    ['::', 'unspecified', 'unspecified'],
    ['fe80::1', 'linkLocal', 'link-local'],
    ['fe80::1%eth0', 'linkLocal', 'link-local with a zone'],
    ['fc00::1', 'uniqueLocal', 'unique local'],
    ['fd00:ec2::254', 'uniqueLocal', 'the AWS metadata service over IPv6'],
    ['ff02::1', 'multicast', 'multicast'],
    ['2001:db8::1', 'reserved', 'documentation'],
    ['100::1', 'discard', 'discard-only'],
    // IPv4 carried in IPv6: judged as the address that is reached
    ['::ffff:127.0.0.1', 'loopback', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'loopback', 'IPv4-mapped loopback, in hex'],
    ['::ffff:10.0.0.1', 'private', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'linkLocal', 'IPv4-mapped metadata service'],
    ['::ffff:a9fe:a9fe', 'linkLocal', 'IPv4-mapped metadata service, in hex'],
    ['::ffff:100.64.0.1', 'carrierGradeNat', 'IPv4-mapped CGNAT'],
    ['64:ff9b::7f00:1', 'rfc6052', 'NAT64 (could reach 127.0.0.1 through a translator)'],
    ['2002:7f00:1::', '6to4', '6to4 (embeds 127.0.0.1)'],
    ['2001::1', 'teredo', 'Teredo'],
    // Forms inet_aton reads: the guard reads them the same way
    ['127.1', 'loopback', 'shorthand loopback'],
    ['2130706433', 'loopback', 'one number'],
    ['0x7f.0.0.1', 'loopback', 'hexadecimal'],
  ];
  for (const [address, range, what] of refused) {
    test(`${address} is refused: ${what}`, () => {
      assert.equal(refusedAddressReason(address), `${address} is a ${range} address`);
    });
  }

  test('a name or a bracketed literal is not an address', () => {
    for (const text of ['localhost', 'example.com', '[::1]', '']) assert.equal(refusedAddressReason(text), `${text} is not an IP address`);
  });
});

describe('parseWebhookUrl', () => {
  const refusal = (text: string, allowPrivate: boolean): string => {
    try {
      parseWebhookUrl(text, { allowPrivate });
    } catch (error) {
      assert.ok(error instanceof DomainError);
      assert.equal(error.code, 'WEBHOOK_URL_REFUSED');
      assert.deepEqual(error.options.errors, [{ pointer: '/url', detail: error.detail }]);
      return error.detail;
    }
    return assert.fail(`${text} was accepted`);
  };

  test('https only, unless private addresses are allowed (development, tests), which allows http too', () => {
    assert.equal(parseWebhookUrl('https://hooks.example.com/x?y=1', { allowPrivate: false }).href, 'https://hooks.example.com/x?y=1');
    assert.equal(refusal('http://hooks.example.com/', false), 'The url must be https.');
    assert.equal(parseWebhookUrl('http://127.0.0.1:29420/', { allowPrivate: true }).href, 'http://127.0.0.1:29420/');
    assert.equal(refusal('ftp://hooks.example.com/', true), 'The url must be http or https.');
  });

  test('no credentials, no fragment, an absolute URL', () => {
    assert.equal(
      refusal('https://user:pw@hooks.example.com/', false),
      'The url may not carry credentials; authenticate deliveries by their signature.',
    );
    assert.equal(refusal('https://hooks.example.com/#x', false), 'The url may not have a fragment.');
    assert.equal(refusal('/relative', false), 'The url is not an absolute URL.');
  });

  test("the URL parser's normal form: another spelling of 127.0.0.1 is 127.0.0.1", () => {
    for (const text of ['https://127.1/', 'https://0x7f.0.0.1/', 'https://2130706433/', 'https://0177.0.0.1/']) {
      assert.equal(parseWebhookUrl(text, { allowPrivate: false }).hostname, '127.0.0.1', text);
    }
  });
});
