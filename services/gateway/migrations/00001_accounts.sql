-- +goose Up
CREATE TABLE users (
    id         uuid PRIMARY KEY,
    email      text NOT NULL,
    username   text,
    name       text,
    is_admin   boolean NOT NULL DEFAULT false,
    is_root    boolean NOT NULL DEFAULT false,
    metadata   jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE user_identities (
    id            uuid PRIMARY KEY,
    user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    method        text NOT NULL,
    subject       text NOT NULL,
    email         text,
    password_hash text, -- bcrypt; never returned
    verified      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (method, subject)
);

CREATE TABLE organizations (
    id            uuid PRIMARY KEY,
    name          text NOT NULL,
    slug          text UNIQUE,
    description   text,
    owner_user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workspaces (
    id              uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    description     text,
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
    id              uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    workspace_id    uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name            text NOT NULL,
    description     text,
    is_default      boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE organization_memberships (
    id              uuid PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (organization_id, user_id)
);

CREATE TABLE workspace_memberships (
    id           uuid PRIMARY KEY,
    workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    user_id      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, user_id)
);

CREATE TABLE project_memberships (
    id         uuid PRIMARY KEY,
    project_id uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, user_id)
);

-- API keys: the prefix and the SHA-256 (hex) of the secret, never the secret.
-- Revocation keeps the row (revoked_at) for audit.
CREATE TABLE api_keys (
    id            uuid PRIMARY KEY,
    project_id    uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    prefix        text NOT NULL UNIQUE,
    secret_hash   text NOT NULL,
    name          text,
    created_by_id uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz,
    revoked_at    timestamptz
);
CREATE INDEX api_keys_project ON api_keys (project_id, created_at);

-- Every change to a key (revoke, delete, also by cascade) is announced so the
-- verifiers in the gateway and tracing replicas drop it from their caches at once.
-- +goose StatementBegin
CREATE FUNCTION notify_api_key_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('assay_api_keys', COALESCE(OLD.prefix, NEW.prefix));
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd

CREATE TRIGGER api_keys_notify AFTER INSERT OR UPDATE OR DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION notify_api_key_change();

-- +goose Down
DROP TABLE api_keys, project_memberships, workspace_memberships, organization_memberships,
    projects, workspaces, organizations, user_identities, users;
DROP FUNCTION notify_api_key_change;
