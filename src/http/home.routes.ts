// GET / : where to start. Links to the docs page, the OpenAPI documents, the authorization
// server's discovery documents and each API version with its lifecycle; JSON for API clients, a
// small HTML page for browsers (chosen by Accept, RFC 9110 §12.5.1). Not an API resource: it is in
// no version's OpenAPI document, whose paths all live under that version's /v<N> server.
import fastifyAccepts from '@fastify/accepts';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { API_VERSION_NUMBERS, LATEST_API_VERSION } from '../core/api-versions.ts';
import { migrationGuideUrl } from './versioning.ts';

interface VersionEntry {
  version: number;
  status: 'current' | 'deprecated' | 'retired';
  baseUrl: string;
  openapi: string;
  deprecation?: string;
  sunset?: string;
  migrationGuide?: string;
}

interface Home {
  name: string;
  description: string;
  docs: string;
  openapi: string;
  versions: VersionEntry[];
  oauth: { issuer: string; authorizationServerMetadata: string; openidConfiguration: string };
}

/**
 * RFC 8414 §3.1: the metadata of an issuer with a path is at /.well-known/oauth-authorization-server
 * followed by that path; OpenID Connect Discovery 1.0 §4 appends its well-known path to the issuer.
 */
function discoveryUrls(issuer: string): Home['oauth'] {
  const { origin, pathname } = new URL(issuer);
  return {
    issuer,
    authorizationServerMetadata: `${origin}/.well-known/oauth-authorization-server${pathname === '/' ? '' : pathname}`,
    openidConfiguration: `${issuer}/.well-known/openid-configuration`,
  };
}

/** The versions, the latest first, each with its dates when it is deprecated. */
function listVersions(config: Config, now: Date): VersionEntry[] {
  return [...API_VERSION_NUMBERS].reverse().map((version) => {
    const urls = { baseUrl: `${config.publicUrl}/v${version}`, openapi: `${config.publicUrl}/v${version}/openapi.json` };
    const retired = config.apiDeprecations.find((d) => d.version === version);
    if (!retired) return { version, status: 'current', ...urls };
    return {
      version,
      status: now >= retired.sunset ? 'retired' : 'deprecated',
      ...urls,
      deprecation: retired.deprecation.toISOString(),
      sunset: retired.sunset.toISOString(),
      migrationGuide: migrationGuideUrl(config.publicUrl, version),
    };
  });
}

function describeHome(config: Config, now: Date): Home {
  return {
    name: 'orderpay',
    description: `Orders & Payments API (v${LATEST_API_VERSION} the latest) with its own OAuth 2.0 / OpenID Connect authorization server.`,
    docs: `${config.publicUrl}/docs`,
    openapi: `${config.publicUrl}/openapi.json`,
    versions: listVersions(config, now),
    oauth: discoveryUrls(config.issuer),
  };
}

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const link = (href: string, text = href) => `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>`;

function describeVersion(entry: VersionEntry): string {
  const lifecycle =
    entry.status === 'current'
      ? 'the latest'
      : `${entry.status}: deprecated ${entry.deprecation!.slice(0, 10)}, sunset ${entry.sunset!.slice(0, 10)}; ${link(entry.migrationGuide!, 'migration guide')}`;
  return `<li><code>${escapeHtml(entry.baseUrl)}</code> — v${entry.version}, ${lifecycle}; ${link(entry.openapi, 'OpenAPI document')}</li>`;
}

/** The same links as a page; no script, no style: the default Content-Security-Policy holds. */
function renderHomePage(home: Home): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>orderpay</title></head><body><main><h1>orderpay</h1><p>${escapeHtml(home.description)}</p>
<h2>Documentation</h2><ul><li>${link(home.docs, 'API reference')} (sign in, or paste an access token, and try requests)</li>
<li>${link(home.openapi, 'OpenAPI document')} of the latest version</li></ul>
<h2>Versions</h2><ul>${home.versions.map(describeVersion).join('')}</ul>
<h2>OAuth 2.0 / OpenID Connect</h2><ul><li>Issuer <code>${escapeHtml(home.oauth.issuer)}</code></li>
<li>${link(home.oauth.authorizationServerMetadata, 'Authorization server metadata')} (RFC 8414)</li>
<li>${link(home.oauth.openidConfiguration, 'OpenID Connect discovery')}</li></ul></main></body></html>`;
}

export async function homeRoutes(app: FastifyInstance, { config }: { config: Config }): Promise<void> {
  await app.register(fastifyAccepts);
  // RFC 8631: the service's documentation and its description, for clients that follow links.
  const links = `<${config.publicUrl}/docs>; rel="service-doc", <${config.publicUrl}/openapi.json>; rel="service-desc"; type="application/json"`;
  app.get('/', { schema: { hide: true } }, async function describeService(request, reply) {
    const home = describeHome(config, new Date());
    reply.header('cache-control', 'public, max-age=300').header('vary', 'Accept').header('link', links);
    // Whatever Accept names but HTML gets JSON: an API client asking for neither still gets the
    // links (RFC 9110 §12.5.1 lets a server disregard Accept rather than answer 406).
    if (request.accepts().type(['application/json', 'text/html']) === 'text/html') {
      return reply.type('text/html; charset=utf-8').send(renderHomePage(home));
    }
    return home;
  });
}
