-- +goose Up
CREATE TABLE things (id int PRIMARY KEY, name text UNIQUE);
-- +goose Down
DROP TABLE things;
