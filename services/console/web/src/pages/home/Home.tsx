import { Link } from "react-router";
import { useAuth } from "../../auth/AuthContext";
import { NAV } from "../../components/nav";

export default function Home() {
  const { session, project } = useAuth();
  return (
    <section>
      <h1>Welcome{session?.user.name ? `, ${session.user.name}` : ""}</h1>
      <p>
        Project <strong>{project?.name ?? "—"}</strong>
        {project && <> · your role: {project.role}</>}
      </p>
      <ul className="home-links">
        {NAV.map((n) => (
          <li key={n.to}>
            <Link to={n.to}>{n.label}</Link>
          </li>
        ))}
      </ul>
    </section>
  );
}
