import { NavLink, Outlet } from "react-router";
import { useAuth } from "../auth/AuthContext";
import { NAV } from "./nav";
import { ProjectSwitcher } from "./ProjectSwitcher";

export function Layout() {
  const { session, signOut } = useAuth();
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
        <Outlet />
      </main>
    </div>
  );
}
