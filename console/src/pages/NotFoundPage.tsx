import { Link } from 'react-router';

export function NotFoundPage() {
  return (
    <article>
      <h1>No such page</h1>
      <p>
        The console has no page here. <Link to="/">Go to the overview</Link>.
      </p>
    </article>
  );
}
