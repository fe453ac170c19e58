-- +goose Up
-- A password reset: a one-time link that sets a user's password, mailed to
-- the user's email or issued by the operator (the admin key). Only the
-- token's SHA-256 is stored; used_at makes it single use.
CREATE TABLE password_resets (
    id         uuid PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX password_resets_user ON password_resets (user_id);

-- +goose Down
DROP TABLE password_resets;
