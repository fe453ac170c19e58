import { NavLink, Outlet } from "react-router";
import { useAuth } from "../auth/AuthContext";
import { NAV } from "./nav";
import { ProjectSwitcher } from "./ProjectSwitcher";

export function Layout() {
  const { session, signOut, projectId } = useAuth();
  return (
    <div className="layout">
      <header className="topbar">
        <NavLink to="/" className="brand">
          Assay
        </NavLink>
        <ProjectSwitcher />
        <span className="spacer" />
        <span className="user" title={session?.user.id}>
          {session?.user.name || session?.user.username || session?.user.email}
        </span>
        <button type="button" className="link" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <nav className="sidenav" aria-label="Main">
        {NAV.map((n) => (
          <NavLink key={n.to} to={n.to}>
            {n.label}
          </NavLink>
        ))}
      </nav>
      <main className="content">
        {/* Keyed by project: a switch remounts the page, which asks for its data again. */}
        <Outlet key={projectId} />
      </main>
    </div>
  );
}
