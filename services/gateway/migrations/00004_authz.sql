-- +goose Up
-- A key's own role; NULL means "its creator's role at use time", so the keys
-- issued before roles existed keep working with their creator's rights. The
-- verifier caps it by the creator's current role either way.
ALTER TABLE api_keys ADD COLUMN role text
    CHECK (role IN ('owner', 'admin', 'editor', 'annotator', 'viewer'));

-- A membership, role or ownership change changes what every key of the
-- affected users may do: the verifiers flush their whole caches ('*' on the
-- key channel). Such changes are rare next to key lookups.
-- +goose StatementBegin
CREATE FUNCTION notify_role_change() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('assay_api_keys', '*');
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd

CREATE TRIGGER organization_memberships_notify AFTER INSERT OR UPDATE OR DELETE ON organization_memberships
    FOR EACH STATEMENT EXECUTE FUNCTION notify_role_change();
CREATE TRIGGER workspace_memberships_notify AFTER INSERT OR UPDATE OR DELETE ON workspace_memberships
    FOR EACH STATEMENT EXECUTE FUNCTION notify_role_change();
CREATE TRIGGER project_memberships_notify AFTER INSERT OR UPDATE OR DELETE ON project_memberships
    FOR EACH STATEMENT EXECUTE FUNCTION notify_role_change();
CREATE TRIGGER organizations_owner_notify AFTER UPDATE OF owner_user_id ON organizations
    FOR EACH STATEMENT EXECUTE FUNCTION notify_role_change();

-- The audit log: one row per successful change on an audited route family.
-- Append-only: a trigger refuses UPDATE and DELETE (the application role
-- owns the table, so revoking privileges would not stop it). Rows keep no
-- foreign keys: they outlive the users, keys and projects they name.
CREATE TABLE audit_log (
    id              uuid PRIMARY KEY,
    at              timestamptz NOT NULL DEFAULT now(),
    organization_id uuid,
    project_id      uuid,
    actor_user_id   uuid,
    actor_key_id    uuid,
    session_id      uuid,
    action          text NOT NULL, -- "POST /keys": method and route pattern
    target          jsonb NOT NULL DEFAULT '{}', -- ids from the path
    status          integer NOT NULL,
    request_id      text
);
-- Reads are per organization, newest first, windowed by (at, id).
CREATE INDEX audit_log_org_at ON audit_log (organization_id, at DESC, id DESC);

-- +goose StatementBegin
CREATE FUNCTION audit_log_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd

CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- +goose Down
DROP TABLE audit_log;
DROP FUNCTION audit_log_append_only;
DROP TRIGGER organizations_owner_notify ON organizations;
DROP TRIGGER project_memberships_notify ON project_memberships;
DROP TRIGGER workspace_memberships_notify ON workspace_memberships;
DROP TRIGGER organization_memberships_notify ON organization_memberships;
DROP FUNCTION notify_role_change;
ALTER TABLE api_keys DROP COLUMN role;
