// /console/signed-out: where the authorization server sends the browser once the session ended.
import { useConsole } from '../context.ts';

export function SignedOutPage() {
  const { session } = useConsole();
  return (
    <article>
      <h1>You are signed out</h1>
      <p>Your tokens were revoked and forgotten, and your session at orderpay's sign-in has ended.</p>
      <button type="button" onClick={() => void session.startSignIn('/')}>
        Sign in again
      </button>
    </article>
  );
}
