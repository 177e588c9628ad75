// What a user's state is, and what erasure leaves in place of personal data
// (docs/decisions/0112-disabling-and-erasing.md). Pure.

export type UserStatus = 'active' | 'disabled' | 'erased';

export function userStatus(user: { disabledAt: string | null; erasedAt: string | null }): UserStatus {
  if (user.erasedAt !== null) return 'erased';
  return user.disabledAt === null ? 'active' : 'disabled';
}

/**
 * What an erased user's email and name become: the same for every erased user but for the id, which
 * orders, payments and events already carry, so nothing new is learnt from them. The address is in
 * the .invalid domain (RFC 2606 §2), which can never be anyone's, and is unique like every email.
 */
export function erasedUserPlaceholders(id: number): { email: string; name: string } {
  return { email: `erased-user-${id}@erased.invalid`, name: 'Erased user' };
}
