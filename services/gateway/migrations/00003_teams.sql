-- +goose Up
-- Roles are one of pkg/roles' names at every level; the rows that exist
-- already were all written as "owner" by provisioning.
ALTER TABLE organization_memberships ADD CONSTRAINT organization_memberships_role
    CHECK (role IN ('owner', 'admin', 'editor', 'annotator', 'viewer'));
ALTER TABLE workspace_memberships ADD CONSTRAINT workspace_memberships_role
    CHECK (role IN ('owner', 'admin', 'editor', 'annotator', 'viewer'));
ALTER TABLE project_memberships ADD CONSTRAINT project_memberships_role
    CHECK (role IN ('owner', 'admin', 'editor', 'annotator', 'viewer'));

-- A user's memberships are read on every team route (profile, lists, role
-- resolution); the unique keys lead with the target, not the user.
CREATE INDEX organization_memberships_user ON organization_memberships (user_id);
CREATE INDEX workspace_memberships_user ON workspace_memberships (user_id);
CREATE INDEX project_memberships_user ON project_memberships (user_id);
CREATE INDEX workspaces_organization ON workspaces (organization_id);
CREATE INDEX projects_workspace ON projects (workspace_id);
CREATE INDEX projects_organization ON projects (organization_id);
-- Keys are revoked by creator when a member is removed.
CREATE INDEX api_keys_creator ON api_keys (created_by_id) WHERE revoked_at IS NULL;

-- Invitations to a workspace (optionally narrowed to some of its projects).
-- Only the SHA-256 (hex) of the token is stored; "expired" is not a stored
-- status but a pending invitation past expires_at.
CREATE TABLE invitations (
    id              uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    email           text NOT NULL,
    role            text NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'annotator', 'viewer')),
    project_ids     uuid[] NOT NULL DEFAULT '{}',
    token_hash      text NOT NULL UNIQUE,
    status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked')),
    invited_by_id   uuid REFERENCES users (id) ON DELETE SET NULL,
    accepted_by_id  uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    expires_at      timestamptz NOT NULL,
    accepted_at     timestamptz
);
CREATE INDEX invitations_workspace ON invitations (workspace_id, created_at);
-- One open invitation per email and workspace: a second one is a resend.
CREATE UNIQUE INDEX invitations_pending ON invitations (workspace_id, lower(email)) WHERE status = 'pending';

-- +goose Down
DROP TABLE invitations;
DROP INDEX api_keys_creator, projects_organization, projects_workspace, workspaces_organization,
    project_memberships_user, workspace_memberships_user, organization_memberships_user;
ALTER TABLE project_memberships DROP CONSTRAINT project_memberships_role;
ALTER TABLE workspace_memberships DROP CONSTRAINT workspace_memberships_role;
ALTER TABLE organization_memberships DROP CONSTRAINT organization_memberships_role;
