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
    ['64:ff9b::7f00:1', 'loopback', 'NAT64 of 127.0.0.1 (reaches it through a translator)'],
    ['2002:7f00:1::', '6to4', '6to4 (embeds 127.0.0.1)'],
    ['2001::1', 'teredo', 'Teredo'],
    ['::7f00:1', 'ipv4Compatible', 'IPv4-compatible 127.0.0.1 (ipaddr.js alone calls it unicast)'],
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

/** The address as two hexadecimal groups of IPv6 (127.0.0.1 → 7f00:1), optionally each bit flipped (Teredo's client). */
function hexGroups(ipv4: string, flipped = false): string {
  const [a, b, c, d] = ipv4.split('.').map((octet) => (flipped ? 255 - Number(octet) : Number(octet))) as [number, number, number, number];
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

// Every IPv6 form that can carry an IPv4 address (decision 0116): each spelling of it, and what the
// guard makes of a public IPv4 address inside (undefined: judged as that address, so allowed).
const EMBEDDING_FORMS: { form: string; spellings: (ipv4: string) => string[]; publicRefusedAs?: string; notPublicRefusedAs?: string }[] = [
  { form: 'IPv4-mapped ::ffff:0:0/96 (RFC 4291 §2.5.5.2)', spellings: (v4) => [`::ffff:${v4}`, `::ffff:${hexGroups(v4)}`] },
  {
    form: 'IPv4-compatible ::/96 (RFC 4291 §2.5.5.1, deprecated)',
    spellings: (v4) => [`::${v4}`, `::${hexGroups(v4)}`, `0:0:0:0:0:0:${v4}`],
    publicRefusedAs: 'ipv4Compatible',
    notPublicRefusedAs: 'ipv4Compatible',
  },
  {
    form: 'IPv4-translated ::ffff:0:0:0/96 (RFC 7915, RFC 6145)',
    spellings: (v4) => [`::ffff:0:${v4}`, `::ffff:0:${hexGroups(v4)}`],
    publicRefusedAs: 'ipv4Translated',
    notPublicRefusedAs: 'ipv4Translated',
  },
  { form: 'NAT64 Well-Known Prefix 64:ff9b::/96 (RFC 6052)', spellings: (v4) => [`64:ff9b::${v4}`, `64:ff9b::${hexGroups(v4)}`] },
  {
    form: 'NAT64 local-use 64:ff9b:1::/48 (RFC 8215), the IPv4 address where the prefix length puts it',
    spellings: (v4) => [`64:ff9b:1::${v4}`, `64:ff9b:1:${hexGroups(v4)}::`],
    publicRefusedAs: 'nat64LocalUse',
    notPublicRefusedAs: 'nat64LocalUse',
  },
  {
    form: '6to4 2002::/16 (RFC 3056)',
    spellings: (v4) => [`2002:${hexGroups(v4)}::1`],
    publicRefusedAs: '6to4',
    notPublicRefusedAs: '6to4',
  },
  {
    form: 'Teredo 2001::/32 (RFC 4380): the server, and the client obfuscated',
    spellings: (v4) => [`2001:0:${hexGroups(v4)}::1`, `2001:0:4136:e378:8000:63bf:${hexGroups(v4, true)}`],
    publicRefusedAs: 'teredo',
    notPublicRefusedAs: 'teredo',
  },
  {
    form: 'ISATAP interface identifier under a global prefix (RFC 5214 §6.1)',
    spellings: (v4) => [`2606:4700:1::5efe:${v4}`, `2606:4700:1::200:5efe:${hexGroups(v4)}`],
    notPublicRefusedAs: 'isatap',
  },
];

const NOT_PUBLIC_IPV4: [string, string][] = [
  ['127.0.0.1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
];

describe('IPv4 carried in IPv6: every form', () => {
  for (const { form, spellings, publicRefusedAs, notPublicRefusedAs } of EMBEDDING_FORMS) {
    test(`${form}: refused with a loopback, private, link-local or CGNAT address inside`, () => {
      for (const [ipv4, range] of NOT_PUBLIC_IPV4) {
        for (const address of spellings(ipv4)) {
          assert.equal(refusedAddressReason(address), `${address} is a ${notPublicRefusedAs ?? range} address`, `${address} (${ipv4})`);
        }
      }
    });
    test(`${form}: with a public address inside, ${publicRefusedAs ? 'refused all the same' : 'judged as that address: allowed'}`, () => {
      for (const address of spellings('8.8.8.8')) {
        assert.equal(refusedAddressReason(address), publicRefusedAs && `${address} is a ${publicRefusedAs} address`, address);
      }
    });
  }

  test("the resolver's spelling of ::7f00:1 (libuv writes ::127.0.0.1) is read as IPv4-compatible, not as ipaddr.js's IPv4-mapped", () => {
    assert.equal(refusedAddressReason('::8.8.8.8'), '::8.8.8.8 is a ipv4Compatible address');
    assert.equal(refusedAddressReason('::127.0.0.1%eth0'), '::127.0.0.1%eth0 is a ipv4Compatible address');
    // :: and ::1 lie inside ::/96 and keep their own names.
    assert.equal(refusedAddressReason('::0.0.0.1'), '::0.0.0.1 is a loopback address');
    assert.equal(refusedAddressReason('::0.0.0.0'), '::0.0.0.0 is a unspecified address');
  });

  test('a global address that only looks like a form is public: 64:ff9b:2::/48 is not NAT64, 2003::/16 not 6to4', () => {
    for (const address of ['64:ff9b:2::7f00:1', '2003:7f00:1::1', '2606:4700:1::5eff:a00:1'])
      assert.equal(refusedAddressReason(address), undefined);
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
