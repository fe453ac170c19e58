-- +goose Up
-- a second file with two statements
CREATE TABLE IF NOT EXISTS a (x UInt8) ENGINE = MergeTree() ORDER BY x;
CREATE TABLE IF NOT EXISTS b (x UInt8) ENGINE = MergeTree() ORDER BY x;
