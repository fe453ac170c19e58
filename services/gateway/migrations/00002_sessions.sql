-- +goose Up
-- Console sign-in sessions. The cookie carries a random token; only its
-- SHA-256 (hex) is stored, so a copy of this table signs nobody in. The
-- CSRF token is not a credential on its own (the page reads it from a
-- cookie), so it is kept as is to be returned by GET /api/auth/session.
-- An expired row stays until a later sign-in purges it a day after its
-- expiry, so its cookie is answered "session expired" and not "signed out".
CREATE TABLE sessions (
    id         uuid PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX sessions_user ON sessions (user_id);
-- Sign-in finds a user's password identity by user.
CREATE INDEX user_identities_user ON user_identities (user_id);

-- +goose Down
DROP TABLE sessions;
DROP INDEX user_identities_user;
