// What /oauth/userinfo answers (OpenID Connect Core §5.3.2): the claims its scopes release, no more.
import { Type } from 'typebox';

export const UserinfoClaims = Type.Object(
  {
    sub: Type.String({ description: "The user's identifier; the same as the ID token's `sub` (§5.3.2)." }),
    name: Type.Optional(Type.String({ description: 'With the profile scope.' })),
    email: Type.Optional(Type.String({ description: 'With the email scope.' })),
    email_verified: Type.Optional(Type.Boolean({ description: 'With the email scope; always false: no address is verified.' })),
  },
  { additionalProperties: false },
);
