import { useLocation } from "react-router";

export default function Placeholder() {
  const { pathname } = useLocation();
  return (
    <section>
      <h1>Coming soon</h1>
      <p>The page {pathname} is being built.</p>
    </section>
  );
}
