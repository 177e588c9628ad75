// Lifetimes (seconds) of what the authorization server issues, in oidc-provider's `ttl` shape.
// Its own module because the provider and the revoked-grants store both size things by them.

export const TOKEN_TTL = {
  AuthorizationCode: 60,
  AccessToken: 600,
  ClientCredentials: 600,
  IdToken: 3600,
  RefreshToken: 14 * 24 * 3600,
  Interaction: 15 * 60,
  Session: 14 * 24 * 3600,
  Grant: 14 * 24 * 3600,
} as const;
