// Lifetimes (seconds) of what the authorization server issues, in oidc-provider's `ttl` shape.
// Its own module because the provider and the revoked-grants store both size things by them.

export const TOKEN_TTL = {
  /** FAPI 2.0 §5.3.2.1 item 11: at most 60 seconds. */
  AuthorizationCode: 60,
  /** RFC 9126's request_uri; FAPI 2.0 §5.3.2.2 item 12: less than 600 seconds, and enough to open a link (its Note 2). */
  PushedAuthorizationRequest: 90,
  AccessToken: 600,
  ClientCredentials: 600,
  IdToken: 3600,
  RefreshToken: 14 * 24 * 3600,
  Interaction: 15 * 60,
  Session: 14 * 24 * 3600,
  Grant: 14 * 24 * 3600,
} as const;
