-- +goose Up
-- Saved views (domain/saved_view.go): a person's named filter of a desk
-- list page, owned by (issuer, subject) as people are keyed, and shared
-- with everyone signed in when shared is set. filter is a JSON object of
-- the page's filter fields only; owner_email and owner_name say whose it
-- is as they were when it was saved. A name is unique, in any case, among
-- one person's views of a page: name_key is the name lowercased by the
-- store, the same on both databases.
CREATE TABLE saved_views (
    id            text PRIMARY KEY,
    owner_issuer  text NOT NULL,
    owner_subject text NOT NULL,
    owner_email   text NOT NULL DEFAULT '',
    owner_name    text NOT NULL DEFAULT '',
    page          text NOT NULL,
    name          text NOT NULL,
    name_key      text NOT NULL,
    filter        text NOT NULL,
    shared        boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE UNIQUE INDEX saved_views_owner_name ON saved_views (owner_issuer, owner_subject, page, name_key);
CREATE INDEX saved_views_shared ON saved_views (page, name) WHERE shared;

-- +goose Down
DROP TABLE saved_views;
