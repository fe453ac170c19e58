-- +goose Up
-- One set of git tables serves every versioned family (testset, workflow,
-- environment, query): the family column keeps their slug namespaces apart,
-- exactly as the compatible platform's per-family tables do, without four copies of
-- the same schema. project_id leads every key and index.
CREATE TABLE artifacts (
    project_id    uuid        NOT NULL,
    family        text        NOT NULL,
    id            uuid        NOT NULL,
    slug          text        NOT NULL,
    name          text,
    description   text,
    flags         jsonb,
    tags          jsonb,
    meta          jsonb,
    folder_id     uuid,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz,
    deleted_at    timestamptz,
    created_by_id uuid,
    updated_by_id uuid,
    deleted_by_id uuid,
    PRIMARY KEY (project_id, id),
    UNIQUE (project_id, family, slug)
);

CREATE TABLE variants (
    project_id    uuid        NOT NULL,
    family        text        NOT NULL,
    id            uuid        NOT NULL,
    artifact_id   uuid        NOT NULL,
    slug          text        NOT NULL,
    name          text,
    description   text,
    flags         jsonb,
    tags          jsonb,
    meta          jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz,
    deleted_at    timestamptz,
    created_by_id uuid,
    updated_by_id uuid,
    deleted_by_id uuid,
    PRIMARY KEY (project_id, id),
    UNIQUE (project_id, family, slug),
    FOREIGN KEY (project_id, artifact_id) REFERENCES artifacts (project_id, id) ON DELETE CASCADE
);
CREATE INDEX variants_artifact ON variants (project_id, artifact_id, created_at, id);

-- A revision is immutable once written except for its header (name,
-- description, flags, tags, meta) and its archive marker. version is the
-- number of earlier revisions in the variant, fixed at commit under a lock
-- on the variant row. Testset revisions keep their ordered testcase ids
-- (duplicates included) in testcase_ids; other families use data.
CREATE TABLE revisions (
    project_id    uuid        NOT NULL,
    family        text        NOT NULL,
    id            uuid        NOT NULL,
    artifact_id   uuid        NOT NULL,
    variant_id    uuid        NOT NULL,
    slug          text        NOT NULL,
    version       integer     NOT NULL,
    name          text,
    description   text,
    flags         jsonb,
    tags          jsonb,
    meta          jsonb,
    message       text,
    author        uuid,
    date          timestamptz NOT NULL DEFAULT now(),
    data          jsonb,
    testcase_ids  uuid[],
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz,
    deleted_at    timestamptz,
    created_by_id uuid,
    updated_by_id uuid,
    deleted_by_id uuid,
    PRIMARY KEY (project_id, id),
    UNIQUE (project_id, family, slug),
    UNIQUE (project_id, variant_id, version),
    FOREIGN KEY (project_id, variant_id) REFERENCES variants (project_id, id) ON DELETE CASCADE
);
CREATE INDEX revisions_variant ON revisions (project_id, variant_id, id);
CREATE INDEX revisions_artifact ON revisions (project_id, artifact_id, id);

-- Testcases are immutable content-addressed blobs, stored once per project.
-- data is json, not jsonb: the row comes back exactly as it was committed
-- (member order and number literals), and reads hand it out unparsed.
CREATE TABLE testcases (
    project_id    uuid        NOT NULL,
    id            uuid        NOT NULL,
    set_id        uuid,
    data          json        NOT NULL,
    flags         jsonb,
    tags          jsonb,
    meta          jsonb,
    created_at    timestamptz NOT NULL DEFAULT now(),
    created_by_id uuid,
    PRIMARY KEY (project_id, id)
);
CREATE INDEX testcases_set ON testcases (project_id, set_id, created_at, id);

-- +goose Down
DROP TABLE testcases;
DROP TABLE revisions;
DROP TABLE variants;
DROP TABLE artifacts;
