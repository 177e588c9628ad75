// Every OpenAPI document the server serves, linted by Spectral with its OpenAPI rules and the
// OWASP API Security Top 10 (2023) ruleset, as a deployment behind https serves it. Errors and
// warnings fail the test, except where the table below says why a rule does not fit; an exception
// that no longer matches anything fails too, so the table cannot outlive its reason.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Spectral, type RulesetDefinition } from '@stoplight/spectral-core';
import owasp from '@stoplight/spectral-owasp-ruleset';
import { oas } from '@stoplight/spectral-rulesets';
import { API_VERSION_NUMBERS } from '../../src/core/api-versions.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

interface Finding {
  code: string | number;
  severity: number;
  path: (string | number)[];
  message: string;
}

interface Exception {
  rules: string[];
  /** Whether a finding at this place is one the reason covers: its dot-joined path, the parameter it is the schema of. */
  at: (where: { path: string; parameter?: string }) => boolean;
  reason: string;
}

const CURRENCY = /\.properties\.currency$/;
const FREE_TEXT = /\.properties\.(title|detail|instance|parameter|name|description|reason)$/;
const RECEIVED_TEXT = /\.properties\.attempts\.items\.properties\.(error|responseBody)\.anyOf\.0$/;
const PARSED_PARAMETERS = new Set(['sort', 'if-match', 'if-none-match', 'idempotency-key']);
const READ_ONLY_FIELDS = /\.requestBody\..*\.properties\.(id|customerId|total|value|currency|createdAt|updatedAt)$/;

const EXCEPTIONS: Exception[] = [
  {
    rules: ['owasp:api1:2023-no-numeric-ids'],
    at: () => true,
    reason:
      'The specification addresses resources by integer id (/orders/1). A guessed id gains nothing: every read and write checks ownership and answers 404 for another customer (test/http/orders, test/http/payments).',
  },
  {
    rules: ['owasp:api2:2023-short-lived-access-tokens'],
    at: ({ path }) => path.endsWith('.flows.clientCredentials'),
    reason: 'Client credentials get no refresh token (RFC 6749 §4.4.3): the client asks again when its 10-minute token expires.',
  },
  {
    rules: ['owasp:api4:2023-string-limit'],
    at: ({ path }) => CURRENCY.test(path),
    reason:
      'A currency is bounded by its pattern, ^[A-Z]{3}$ (ISO 4217); a maxLength beside it would only repeat the pattern\'s error for "EURO".',
  },
  {
    rules: ['owasp:api4:2023-string-restricted'],
    at: ({ path }) => FREE_TEXT.test(path),
    reason:
      "Human-readable text (problem title and detail, product names, the path a problem names, a webhook endpoint's description, why a payment needs a person) has no grammar to restrict; each is bounded by maxLength.",
  },
  {
    rules: ['owasp:api4:2023-string-restricted'],
    at: ({ path }) => RECEIVED_TEXT.test(path),
    reason:
      "A delivery attempt shows what the webhook receiver answered (the first 1 KiB of its body) and why the attempt failed, as they came: another party's text, with no grammar to restrict; each is bounded by maxLength.",
  },
  {
    rules: ['owasp:api4:2023-string-limit', 'owasp:api4:2023-string-restricted'],
    at: ({ parameter }) => parameter !== undefined && PARSED_PARAMETERS.has(parameter),
    reason:
      "sort, If-Match, If-None-Match and Idempotency-Key are restricted by their patterns (record 0109) and parsed by the service, which names the error precisely (an unknown sort key, a malformed entity tag, a key over 255 characters); a maxLength beside a list's pattern would be arbitrary. Node bounds a request's line and headers at 16 KiB.",
  },
  {
    rules: ['owasp:api4:2023-string-limit', 'owasp:api4:2023-string-restricted', 'owasp:api4:2023-integer-limit'],
    at: ({ path }) => path.includes('/orders/{orderId}.put.') && READ_ONLY_FIELDS.test(path),
    reason:
      "A PUT body may carry an order's read-only fields as read: they must equal the current ones (422 otherwise), and createdAt and updatedAt are ignored. v1 has always taken them unbounded and its contract is frozen; the body is bounded at 64 KiB.",
  },
];

/** The parameter a finding's path points into, when it is one (paths.<p>.<m>.parameters.<i>.schema). */
function parameterName(document: Record<string, unknown>, path: (string | number)[]): string | undefined {
  const at = path.indexOf('parameters');
  if (at < 0 || path[at + 2] !== 'schema' || path.length !== at + 3) return undefined;
  let node: unknown = document;
  for (const key of path.slice(0, at + 2)) node = (node as Record<string | number, unknown>)[key];
  return (node as { name?: string }).name?.toLowerCase();
}

function exceptionFor(document: Record<string, unknown>, finding: Finding): Exception | undefined {
  const where = { path: finding.path.join('.'), parameter: parameterName(document, finding.path) };
  return EXCEPTIONS.find((e) => e.rules.includes(String(finding.code)) && e.at(where));
}

describe('the served OpenAPI documents pass the OWASP API security ruleset', () => {
  let t: TestApp;
  const spectral = new Spectral();
  spectral.setRuleset({
    extends: [
      [oas, 'recommended'],
      [owasp, 'all'],
    ],
  } as unknown as RulesetDefinition);
  const used = new Set<Exception>();

  before(async () => {
    t = await startTestApp({ publicUrl: 'https://api.orderpay.example' });
  });
  after(() => t.close());

  for (const path of ['/openapi.json', ...API_VERSION_NUMBERS.map((v) => `/v${v}/openapi.json`)]) {
    it(`${path}: no error or warning outside the documented exceptions`, async () => {
      const response = await t.app.inject({ url: path });
      assert.equal(response.statusCode, 200);
      const document = response.json() as Record<string, unknown>;
      const findings = (await spectral.run(response.body)) as Finding[];
      const failures: string[] = [];
      for (const finding of findings) {
        if (finding.severity > 1) continue; // info and hints are advice
        const exception = exceptionFor(document, finding);
        if (exception) used.add(exception);
        else failures.push(`${finding.code} at ${finding.path.join('.')}: ${finding.message}`);
      }
      assert.deepEqual(failures, [], `${failures.length} findings, the first:\n${failures.slice(0, 20).join('\n')}`);
    });
  }

  it('every exception still covers a finding (a stale one is removed, not kept)', () => {
    const stale = EXCEPTIONS.filter((e) => !used.has(e)).map((e) => `${e.rules.join(', ')}: ${e.reason}`);
    assert.deepEqual(stale, []);
  });
});
