-- +goose Up
-- Runtimes poll "what does this environment deploy" on every request: the
-- lookup reads the newest revision of the environment's default variant,
-- so that read is one index probe instead of a sort of the variant's
-- revisions. Commits' head lookups use it too.
CREATE INDEX revisions_variant_newest ON revisions (project_id, variant_id, created_at DESC, id DESC);

-- +goose Down
DROP INDEX revisions_variant_newest;
