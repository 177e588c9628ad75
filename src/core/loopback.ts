// The loopback hosts as URLs spell them (WHATWG URL hostnames: IPv6 in brackets). Plain http is
// acceptable there only: RFC 8252 §7.3 for redirect URIs, and development pages calling the API.
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK_HOSTS.has(hostname);
}
