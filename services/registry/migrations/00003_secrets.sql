-- +goose Up
-- The project vault: provider keys and custom providers. What is shown
-- (name, description, the provider kind, a custom provider's URL, version
-- and models) is in the clear in data; the key and extra headers are in
-- sealed, AES-256-GCM under the registry's vault key with the project id
-- and the secret id as additional data, so a sealed value copied to another
-- row does not open. project_id leads every key.
CREATE TABLE secrets (
    project_id    uuid        NOT NULL,
    id            uuid        NOT NULL,
    slug          text        NOT NULL,
    kind          text        NOT NULL,
    name          text,
    description   text,
    data          jsonb       NOT NULL,
    sealed        bytea       NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz,
    created_by_id uuid,
    updated_by_id uuid,
    PRIMARY KEY (project_id, id),
    UNIQUE (project_id, slug)
);

-- +goose Down
DROP TABLE secrets;
