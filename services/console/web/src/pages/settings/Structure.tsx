import { useState, type FormEvent, type ReactNode } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { structureApi, type OrganizationItem, type ProjectItem, type WorkspaceItem } from "../../api/structure";
import { useAuth } from "../../auth/AuthContext";
import { useLevelPermissions } from "../../auth/permissions";
import { ErrorBox } from "../../components/ErrorBox";
import { SettingsNav } from "./SettingsNav";

// Creating organizations, workspaces and projects. Creating a project needs
// manage_members on its workspace, a workspace manage_members on its
// organization, an organization nothing (its creator owns it): the pickers
// offer only the places the user's role there allows.
export default function Structure() {
  const { projectId, setProject, refreshSession } = useAuth();
  const qc = useQueryClient();
  const canAt = useLevelPermissions();
  const orgs = useQuery({ queryKey: ["structure", "organizations"], queryFn: structureApi.organizations });
  const wss = useQuery({ queryKey: ["structure", "workspaces"], queryFn: structureApi.workspaces });
  const prjs = useQuery({ queryKey: ["structure", "projects"], queryFn: structureApi.projects });
  const [done, setDone] = useState<ReactNode>(null);

  const organizations = orgs.data ?? [];
  const workspaces = wss.data?.workspaces ?? [];
  const projects = prjs.data?.projects ?? [];
  const orgName = (id: string) => organizations.find((o) => o.id === id)?.name ?? "";
  const current = projects.find((p) => p.id === projectId);

  const wsChoices = workspaces.filter((w) => canAt("workspace", w.role, "manage_members"));
  const orgChoices = organizations.filter((o) => canAt("organization", o.role, "manage_members"));
  const [wsPick, setWsPick] = useState("");
  const [orgPick, setOrgPick] = useState("");
  const wsId = wsPick || (wsChoices.some((w) => w.id === current?.workspace_id) ? current!.workspace_id : wsChoices[0]?.id) || "";
  const orgId = orgPick || (orgChoices.some((o) => o.id === current?.organization_id) ? current!.organization_id : orgChoices[0]?.id) || "";
  const [projectName, setProjectName] = useState("");
  const [workspaceName, setWorkspaceName] = useState("");
  const [orgNameInput, setOrgNameInput] = useState("");

  const reload = async () => {
    await Promise.all([qc.invalidateQueries({ queryKey: ["structure"] }), refreshSession()]);
  };
  const createProject = useMutation({
    mutationFn: () => structureApi.createProject(wsId, projectName.trim()),
    onSuccess: async (r) => {
      const p = r.project;
      await reload();
      setProjectName("");
      setDone(
        <>
          Project <strong>{p.name}</strong> created in workspace {workspaces.find((w) => w.id === p.workspace_id)?.name}.{" "}
          <button type="button" onClick={() => setProject(p.id)}>
            Open {p.name}
          </button>
        </>,
      );
    },
  });
  const createWorkspace = useMutation({
    mutationFn: () => structureApi.createWorkspace(orgId, workspaceName.trim()),
    onSuccess: async (r) => {
      await reload();
      setWorkspaceName("");
      setWsPick(r.workspace.id);
      setDone(
        <>
          Workspace <strong>{r.workspace.name}</strong> created in organization {orgName(r.workspace.organization_id)}. Add a project to it
          below.
        </>,
      );
    },
  });
  const createOrg = useMutation({
    mutationFn: () => structureApi.createOrganization(orgNameInput.trim()),
    onSuccess: async (o) => {
      await reload();
      setOrgNameInput("");
      setDone(
        <>
          Organization <strong>{o.name}</strong> created, with a Default workspace and a Default project; you own it.
        </>,
      );
    },
  });
  const submit = (m: { mutate: () => void; reset: () => void }) => (e: FormEvent) => {
    e.preventDefault();
    setDone(null);
    for (const x of [createProject, createWorkspace, createOrg]) x.reset();
    m.mutate();
  };

  return (
    <section>
      <h1>Settings</h1>
      <SettingsNav />
      <h2>Organizations, workspaces and projects</h2>
      <p className="muted">
        An organization holds workspaces, a workspace holds projects; testsets, apps, evaluations and traces belong to one project.
      </p>
      <ErrorBox error={orgs.error ?? wss.error ?? prjs.error} />
      {done && (
        <div className="notice ok" role="status">
          {done}
        </div>
      )}
      <ErrorBox error={createProject.error} title="Project not created" />
      <ErrorBox error={createWorkspace.error} title="Workspace not created" />
      <ErrorBox error={createOrg.error} title="Organization not created" />

      <CreateForm
        what="project"
        place={{ label: "Workspace", value: wsId, pick: setWsPick, choices: wsChoices.map((w) => ({ id: w.id, name: `${orgName(w.organization_id)} / ${w.name}` })) }}
        refusal={wss.isSuccess && "Creating a project needs the manage_members permission on its workspace (owners and admins)."}
        name={projectName}
        setName={setProjectName}
        pending={createProject.isPending}
        onSubmit={submit(createProject)}
      />
      <CreateForm
        what="workspace"
        place={{ label: "Organization", value: orgId, pick: setOrgPick, choices: orgChoices }}
        refusal={orgs.isSuccess && "Creating a workspace needs the manage_members permission on its organization (owners and admins)."}
        name={workspaceName}
        setName={setWorkspaceName}
        pending={createWorkspace.isPending}
        onSubmit={submit(createWorkspace)}
      />
      <CreateForm
        what="organization"
        name={orgNameInput}
        setName={setOrgNameInput}
        pending={createOrg.isPending}
        onSubmit={submit(createOrg)}
        hint="you become its owner"
      />

      <Tree organizations={organizations} workspaces={workspaces} projects={projects} currentId={projectId} open={setProject} />
    </section>
  );
}

/** CreateForm is the form of one level: "New <what>", where (a picker of
 * the places the user may create one in, or why they may not), its name,
 * and "Create <what>". */
function CreateForm(props: {
  what: "project" | "workspace" | "organization";
  place?: { label: string; value: string; pick: (id: string) => void; choices: { id: string; name: string }[] };
  /** shown instead of the fields when there is no place to pick (false: nothing yet, still loading). */
  refusal?: ReactNode;
  name: string;
  setName: (name: string) => void;
  pending: boolean;
  onSubmit: (e: FormEvent) => void;
  hint?: ReactNode;
}) {
  const { what, place, name } = props;
  const What = what[0].toUpperCase() + what.slice(1);
  return (
    <form className="toolbar card" aria-label={`New ${what}`} onSubmit={props.onSubmit}>
      <strong>New {what}</strong>
      {place && place.choices.length === 0 ? (
        props.refusal && (
          <span className="muted" role="note">
            {props.refusal}
          </span>
        )
      ) : (
        <>
          {place && (
            <label className="inline">
              in
              <select aria-label={place.label} value={place.value} onChange={(e) => place.pick(e.target.value)}>
                {place.choices.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          <input aria-label={`${What} name`} placeholder="name" required value={name} onChange={(e) => props.setName(e.target.value)} />
          <button type="submit" className="primary" disabled={props.pending || !name.trim()}>
            Create {what}
          </button>
          {props.hint && <span className="muted">{props.hint}</span>}
        </>
      )}
    </form>
  );
}

function Tree(props: {
  organizations: OrganizationItem[];
  workspaces: WorkspaceItem[];
  projects: ProjectItem[];
  currentId: string;
  open: (id: string) => void;
}) {
  const { organizations, workspaces, projects, currentId, open } = props;
  // A workspace or project reached through a membership below its
  // organization still shows, under its organization's id if the name is not
  // visible to the user.
  const orgIds = [...new Set([...organizations.map((o) => o.id), ...workspaces.map((w) => w.organization_id)])];
  return (
    <ul className="structure" data-testid="structure">
      {orgIds.map((oid) => {
        const o = organizations.find((x) => x.id === oid);
        return (
          <li key={oid}>
            <strong>{o?.name ?? "Organization"}</strong> {o?.role && <span className="muted">({o.role})</span>}
            <ul>
              {workspaces
                .filter((w) => w.organization_id === oid)
                .map((w) => (
                  <li key={w.id}>
                    {w.name} <span className="muted">workspace{w.role ? ` (${w.role})` : ""}</span>
                    <ul>
                      {projects
                        .filter((p) => p.workspace_id === w.id)
                        .map((p) => (
                          <li key={p.id}>
                            {p.name} {p.role && <span className="muted">({p.role})</span>}{" "}
                            {p.id === currentId ? (
                              <span className="badge">current</span>
                            ) : (
                              <button type="button" className="link" onClick={() => open(p.id)}>
                                Open
                              </button>
                            )}
                          </li>
                        ))}
                    </ul>
                  </li>
                ))}
            </ul>
          </li>
        );
      })}
    </ul>
  );
}
