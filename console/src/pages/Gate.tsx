// Who may see the console's pages: nobody signed out (a sign-in page), a customer never (their
// token carries no staff scope: "staff only").
import { Outlet, useLocation } from 'react-router';
import { useConsole, useSession } from '../context.ts';

function SignInPage({ expired }: { expired: boolean }) {
  const { session } = useConsole();
  const location = useLocation();
  return (
    <article>
      <h1>Sign in to the orderpay console</h1>
      {expired ? (
        <p role="alert" className="failure">
          Your session has expired. Sign in again.
        </p>
      ) : null}
      <p>
        The console is for orderpay's staff. You sign in with your orderpay account; the console then acts with the scopes you grant it.
      </p>
      <button type="button" onClick={() => void session.startSignIn(location.pathname + location.search)}>
        Sign in
      </button>
    </article>
  );
}

function StaffOnlyPage() {
  const { session } = useConsole();
  return (
    <article>
      <h1>Staff only</h1>
      <p>
        You are signed in, but your account was granted none of the staff scopes, so the console has nothing it may show you. Customers see
        their orders through the shop they ordered from.
      </p>
      <button type="button" onClick={() => void session.signOut()}>
        Sign out
      </button>
    </article>
  );
}

export function Gate() {
  const state = useSession();
  if (state.status === 'signed-out') return <SignInPage expired={state.reason === 'expired'} />;
  if (!state.staff) return <StaffOnlyPage />;
  return <Outlet />;
}
