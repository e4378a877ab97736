-- enfold PostgreSQL schema, first migration. The same tables and columns as the SQLite
-- schema (so `enfold migrate` copies row for row); every namespaced table's key leads with
-- the namespace, so each can be distributed by namespace on Citus (docs/postgres.md).

-- Lexical search: an English snowball stemmer without a stop-word list (like SQLite's
-- FTS5 "porter unicode61", which drops no words); numbers and other tokens stay as they are.
CREATE TEXT SEARCH DICTIONARY enfold_stem (TEMPLATE = snowball, Language = english);
CREATE TEXT SEARCH CONFIGURATION enfold (COPY = pg_catalog.simple);
ALTER TEXT SEARCH CONFIGURATION enfold
    ALTER MAPPING FOR asciiword, word, asciihword, hword, hword_asciipart, hword_part
    WITH enfold_stem;

CREATE TABLE nodes (
    namespace     TEXT NOT NULL,
    id            TEXT NOT NULL,
    kind          TEXT NOT NULL,
    text          TEXT NOT NULL,
    attrs         TEXT NOT NULL,
    grounded_in   TEXT NOT NULL,
    created_at    DOUBLE PRECISION NOT NULL,
    updated_at    DOUBLE PRECISION NOT NULL,
    last_access   DOUBLE PRECISION NOT NULL,
    access_count  BIGINT NOT NULL,
    plan_id       TEXT,
    -- what lexical search sees of the node (text, aliases, keywords, summary), and its
    -- length in words (BM25's document length)
    tlen          INTEGER NOT NULL,
    tsv           TSVECTOR NOT NULL,
    PRIMARY KEY (namespace, id)
);
CREATE INDEX nodes_by_kind ON nodes (namespace, kind);
CREATE INDEX nodes_fts ON nodes USING GIN (tsv);
CREATE INDEX nodes_by_length ON nodes (namespace, tlen);

-- The event log: the source of truth. seq orders events within a namespace.
CREATE TABLE events (
    namespace     TEXT NOT NULL,
    seq           BIGINT NOT NULL,
    id            TEXT NOT NULL,
    content_hash  TEXT NOT NULL,
    external_id   TEXT,
    PRIMARY KEY (namespace, seq)
);
CREATE UNIQUE INDEX events_by_id ON events (namespace, id);
CREATE UNIQUE INDEX events_by_hash ON events (namespace, content_hash);
CREATE UNIQUE INDEX events_by_external ON events (namespace, external_id)
    WHERE external_id IS NOT NULL;

CREATE TABLE edges (
    namespace   TEXT NOT NULL,
    src         TEXT NOT NULL,
    type        TEXT NOT NULL,
    dst         TEXT NOT NULL,
    weight      DOUBLE PRECISION NOT NULL,
    created_at  DOUBLE PRECISION NOT NULL,
    updated_at  DOUBLE PRECISION NOT NULL,
    plan_id     TEXT,
    PRIMARY KEY (namespace, src, type, dst)
);
CREATE INDEX edges_by_dst ON edges (namespace, dst);

CREATE TABLE vectors (
    namespace  TEXT NOT NULL,
    node_id    TEXT NOT NULL,
    dim        INTEGER NOT NULL,
    dtype      TEXT NOT NULL,
    data       BYTEA NOT NULL,
    PRIMARY KEY (namespace, node_id)
);

CREATE TABLE aliases (
    namespace  TEXT NOT NULL,
    old_id     TEXT NOT NULL,
    new_id     TEXT NOT NULL,
    PRIMARY KEY (namespace, old_id)
);

CREATE TABLE oplog (
    namespace  TEXT NOT NULL,
    seq        BIGINT NOT NULL,
    plan_id    TEXT NOT NULL,
    op         TEXT NOT NULL,
    target     TEXT NOT NULL,
    before     TEXT,
    after      TEXT,
    reasoning  TEXT NOT NULL,
    at         DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (namespace, seq)
);
CREATE INDEX oplog_by_target ON oplog (namespace, target);

CREATE TABLE cursors (
    namespace  TEXT NOT NULL PRIMARY KEY,
    seq        BIGINT NOT NULL
);

CREATE TABLE meta (
    namespace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (namespace, key)
);

CREATE TABLE embed_cache (
    namespace  TEXT NOT NULL,
    model      TEXT NOT NULL,
    hash       TEXT NOT NULL,
    data       BYTEA NOT NULL,
    PRIMARY KEY (namespace, model, hash)
);

-- Namespace leases: a fold worker folds a namespace only while it holds its lease.
-- expires_at is in the database server's clock (epoch seconds), so hosts need not agree.
CREATE TABLE leases (
    namespace   TEXT NOT NULL PRIMARY KEY,
    owner       TEXT NOT NULL,
    expires_at  DOUBLE PRECISION NOT NULL
);

-- API keys are looked up by id before the namespace is known: on Citus this small table is
-- a reference table (replicated), not distributed. Only the SHA-256 of a secret is stored.
CREATE TABLE api_keys (
    id          TEXT NOT NULL PRIMARY KEY,
    namespace   TEXT NOT NULL,
    key_hash    TEXT NOT NULL,
    label       TEXT,
    created_at  DOUBLE PRECISION NOT NULL,
    revoked_at  DOUBLE PRECISION
);
CREATE INDEX api_keys_by_namespace ON api_keys (namespace);
