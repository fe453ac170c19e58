import { NavLink } from "react-router";

export function SettingsNav() {
  return (
    <nav className="tabs" aria-label="Settings">
      <NavLink to="/settings/keys">API keys</NavLink>
      <NavLink to="/settings/secrets">Provider secrets</NavLink>
      <NavLink to="/settings/projects">Projects</NavLink>
      <NavLink to="/settings/members">Members</NavLink>
      <NavLink to="/settings/invitations">Invitations</NavLink>
      <NavLink to="/settings/audit">Audit log</NavLink>
    </nav>
  );
}
