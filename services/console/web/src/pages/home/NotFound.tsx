import { Link, useLocation } from "react-router";

export default function NotFound() {
  const { pathname } = useLocation();
  return (
    <section>
      <h1>Not found</h1>
      <p>
        There is no console page at <code>{pathname}</code>. <Link to="/">Home</Link>
      </p>
    </section>
  );
}
