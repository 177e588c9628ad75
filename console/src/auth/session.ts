// Signing in and out with oauth4webapi, against orderpay's authorization server as the public
// client orderpay-console: authorization code + PKCE (S256) and state (RFC 6749 §4.1, RFC 7636),
// refresh tokens rotated on every use, revocation (RFC 7009) and RP-Initiated Logout at sign-out.
//
// Tokens live in this tab's sessionStorage (docs/decisions/0131-staff-console.md): they survive a
// reload and the redirects of signing in, and end with the tab; nothing is in localStorage or a
// cookie, and the page's CSP allows no script but its own.
import * as oauth from 'oauth4webapi';
import type { ConsoleSettings, ConsoleSignIn } from '../settings.ts';

const TOKENS_KEY = 'orderpay-console.tokens';
const PENDING_KEY = 'orderpay-console.sign-in';
/** Refresh this long before the access token expires, so that no request carries one about to lapse. */
const REFRESH_MARGIN_MS = 60_000;

export interface Tokens {
  accessToken: string;
  refreshToken?: string;
  idToken?: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  /** What was granted (the token response's scope), not what was asked for. */
  scopes: string[];
  email?: string;
}

/** An authorization request under way: what the callback checks and needs (RFC 7636 §4.1, RFC 6749 §10.12). */
interface PendingSignIn {
  codeVerifier: string;
  state: string;
  nonce: string;
  returnTo: string;
}

export type SessionState =
  | { status: 'signed-out'; reason?: 'expired' | 'signed-out' }
  | { status: 'signed-in'; tokens: Tokens; staff: boolean };

/** Why a sign-in failed, in words for the person who tried. */
export class SignInError extends Error {
  override name = 'SignInError';
}

function readJson<T>(key: string): T | undefined {
  const raw = sessionStorage.getItem(key);
  if (raw === null) return undefined;
  try {
    return JSON.parse(raw) as T;
  } catch {
    sessionStorage.removeItem(key);
    return undefined;
  }
}

export class Session {
  private state: SessionState;
  private readonly listeners = new Set<() => void>();
  private server?: Promise<oauth.AuthorizationServer>;
  private refreshing?: Promise<Tokens | undefined>;
  private readonly client: oauth.Client;
  private readonly options: { [oauth.allowInsecureRequests]?: boolean };

  private readonly settings: ConsoleSettings;
  private readonly signIn: ConsoleSignIn;

  constructor(settings: ConsoleSettings, signIn: ConsoleSignIn) {
    this.settings = settings;
    this.signIn = signIn;
    this.client = { client_id: signIn.clientId };
    // Plain http only where the server allows it for the redirect URI too: a loopback host (RFC 8252 §7.3).
    this.options = new URL(settings.issuer).protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};
    const tokens = readJson<Tokens>(TOKENS_KEY);
    this.state = tokens ? { status: 'signed-in', tokens, staff: this.isStaff(tokens.scopes) } : { status: 'signed-out' };
  }

  get current(): SessionState {
    return this.state;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): SessionState => this.state;

  /** Whether the token was granted a scope (payments:refund, webhooks:write, …). */
  has(scope: string): boolean {
    return this.state.status === 'signed-in' && this.state.tokens.scopes.includes(scope);
  }

  private isStaff(scopes: string[]): boolean {
    return scopes.some((scope) => this.settings.staffScopes.includes(scope));
  }

  private set(state: SessionState): void {
    this.state = state;
    if (state.status === 'signed-in') sessionStorage.setItem(TOKENS_KEY, JSON.stringify(state.tokens));
    else sessionStorage.removeItem(TOKENS_KEY);
    for (const listener of this.listeners) listener();
  }

  /** The authorization server's metadata (RFC 8414 / OpenID Connect Discovery), read once. */
  private authorizationServer(): Promise<oauth.AuthorizationServer> {
    this.server ??= (async () => {
      const issuer = new URL(this.settings.issuer);
      const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...this.options });
      return oauth.processDiscoveryResponse(issuer, response);
    })();
    this.server.catch(() => {
      this.server = undefined;
    });
    return this.server;
  }

  /** Sends the browser to the authorization endpoint; the callback comes back to returnTo. */
  async startSignIn(returnTo: string): Promise<void> {
    const server = await this.authorizationServer();
    const pending: PendingSignIn = {
      codeVerifier: oauth.generateRandomCodeVerifier(),
      state: oauth.generateRandomState(),
      nonce: oauth.generateRandomNonce(),
      returnTo,
    };
    sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
    const url = new URL(server.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: this.signIn.clientId,
      redirect_uri: this.signIn.redirectUri,
      response_type: 'code',
      scope: this.signIn.scope,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
    }).toString();
    window.location.assign(url.href);
  }

  /** The callback: checks state, redeems the code with its verifier; returns where to go next. */
  async completeSignIn(callbackUrl: URL): Promise<string> {
    const pending = readJson<PendingSignIn>(PENDING_KEY);
    sessionStorage.removeItem(PENDING_KEY);
    if (!pending) throw new SignInError('This sign-in was not started here, or was already completed. Sign in again.');
    const server = await this.authorizationServer();
    let parameters: URLSearchParams;
    try {
      parameters = oauth.validateAuthResponse(server, this.client, callbackUrl, pending.state);
    } catch (error) {
      if (error instanceof oauth.AuthorizationResponseError) {
        throw new SignInError(error.error_description ?? `The authorization server refused: ${error.error}`);
      }
      throw new SignInError('The answer of the authorization server does not belong to this sign-in. Sign in again.');
    }
    const response = await oauth.authorizationCodeGrantRequest(
      server,
      this.client,
      oauth.None(),
      parameters,
      this.signIn.redirectUri,
      pending.codeVerifier,
      this.options,
    );
    const result = await oauth.processAuthorizationCodeResponse(server, this.client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
    const claims = oauth.getValidatedIdTokenClaims(result);
    this.store(result, typeof claims?.email === 'string' ? claims.email : undefined);
    return pending.returnTo;
  }

  private store(result: oauth.TokenEndpointResponse, email: string | undefined, previous?: Tokens): Tokens {
    const tokens: Tokens = {
      accessToken: result.access_token,
      refreshToken: result.refresh_token ?? previous?.refreshToken,
      idToken: result.id_token ?? previous?.idToken,
      expiresAt: Date.now() + (result.expires_in ?? 600) * 1000,
      // RFC 6749 §5.1: scope is left out when it is what was asked for.
      scopes: (result.scope ?? previous?.scopes.join(' ') ?? this.signIn.scope).split(' ').filter(Boolean),
      email: email ?? previous?.email,
    };
    this.set({ status: 'signed-in', tokens, staff: this.isStaff(tokens.scopes) });
    return tokens;
  }

  /**
   * A current access token: refreshed first when it is about to expire. Undefined when signed out
   * or when the refresh was refused (the session then says it expired).
   */
  async accessToken(): Promise<string | undefined> {
    if (this.state.status !== 'signed-in') return undefined;
    if (this.state.tokens.expiresAt - Date.now() > REFRESH_MARGIN_MS) return this.state.tokens.accessToken;
    return (await this.refresh())?.accessToken;
  }

  /**
   * One refresh at a time (RFC 6749 §6): the refresh token rotates on every use, so two at once would
   * present a used one, which the server takes for a stolen token and ends the grant.
   */
  refresh(): Promise<Tokens | undefined> {
    this.refreshing ??= this.refreshOnce().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async refreshOnce(): Promise<Tokens | undefined> {
    if (this.state.status !== 'signed-in') return undefined;
    const previous = this.state.tokens;
    if (!previous.refreshToken) {
      this.expire();
      return undefined;
    }
    const server = await this.authorizationServer();
    try {
      const response = await oauth.refreshTokenGrantRequest(server, this.client, oauth.None(), previous.refreshToken, this.options);
      const result = await oauth.processRefreshTokenResponse(server, this.client, response);
      return this.store(result, undefined, previous);
    } catch (error) {
      // A network failure keeps the session for the next try; a refusal (invalid_grant) ends it.
      if (error instanceof TypeError) throw error;
      this.expire();
      return undefined;
    }
  }

  /** The session is over (a refresh was refused, or the API refused the token twice). */
  expire(): void {
    this.set({ status: 'signed-out', reason: 'expired' });
  }

  /**
   * Revokes the refresh token (which recalls the access tokens of its grant), forgets the tokens,
   * then ends the session at the authorization server when it offers RP-Initiated Logout.
   */
  async signOut(): Promise<void> {
    const tokens = this.state.status === 'signed-in' ? this.state.tokens : undefined;
    this.set({ status: 'signed-out', reason: 'signed-out' });
    let server: oauth.AuthorizationServer | undefined;
    try {
      server = await this.authorizationServer();
      if (tokens?.refreshToken && server.revocation_endpoint) {
        const response = await oauth.revocationRequest(server, this.client, oauth.None(), tokens.refreshToken, {
          ...this.options,
          additionalParameters: { token_type_hint: 'refresh_token' },
        });
        await oauth.processRevocationResponse(response);
      }
    } catch {
      // Signed out here all the same: the tokens are forgotten, and the refresh token ends with the session below.
    }
    if (!server?.end_session_endpoint) {
      window.location.assign(this.signIn.postLogoutRedirectUri);
      return;
    }
    const url = new URL(server.end_session_endpoint);
    url.searchParams.set('client_id', this.signIn.clientId);
    url.searchParams.set('post_logout_redirect_uri', this.signIn.postLogoutRedirectUri);
    if (tokens?.idToken) url.searchParams.set('id_token_hint', tokens.idToken);
    window.location.assign(url.href);
  }
}
