-- +goose Up
-- An organization's flags as the compatible clients edit and read them
-- (is_demo, is_personal, allow_email, allow_social, allow_sso, allow_root,
-- domains_only, auto_join): stored so a client reads back what it set;
-- the gateway does not act on them. Keys not set read as their defaults
-- (accounts.DefaultOrgFlags).
ALTER TABLE organizations ADD COLUMN flags jsonb NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE organizations DROP COLUMN flags;
