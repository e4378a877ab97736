-- enfold SQLite schema, first migration. Every key leads with the namespace.
CREATE TABLE nodes (
    namespace     TEXT NOT NULL,
    id            TEXT NOT NULL,
    kind          TEXT NOT NULL,
    text          TEXT NOT NULL,
    attrs         TEXT NOT NULL,
    grounded_in   TEXT NOT NULL,
    created_at    REAL NOT NULL,
    updated_at    REAL NOT NULL,
    last_access   REAL NOT NULL,
    access_count  INTEGER NOT NULL,
    plan_id       TEXT,
    PRIMARY KEY (namespace, id)
) WITHOUT ROWID;
CREATE INDEX nodes_by_kind ON nodes (namespace, kind);

-- The event log: the source of truth. seq orders events within a namespace.
CREATE TABLE events (
    namespace     TEXT NOT NULL,
    seq           INTEGER NOT NULL,
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
    weight      REAL NOT NULL,
    created_at  REAL NOT NULL,
    updated_at  REAL NOT NULL,
    plan_id     TEXT,
    PRIMARY KEY (namespace, src, type, dst)
) WITHOUT ROWID;
CREATE INDEX edges_by_dst ON edges (namespace, dst);

CREATE TABLE vectors (
    namespace  TEXT NOT NULL,
    node_id    TEXT NOT NULL,
    dim        INTEGER NOT NULL,
    dtype      TEXT NOT NULL,
    data       BLOB NOT NULL,
    PRIMARY KEY (namespace, node_id)
) WITHOUT ROWID;

CREATE TABLE aliases (
    namespace  TEXT NOT NULL,
    old_id     TEXT NOT NULL,
    new_id     TEXT NOT NULL,
    PRIMARY KEY (namespace, old_id)
) WITHOUT ROWID;

CREATE TABLE oplog (
    namespace  TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    plan_id    TEXT NOT NULL,
    op         TEXT NOT NULL,
    target     TEXT NOT NULL,
    before     TEXT,
    after      TEXT,
    reasoning  TEXT NOT NULL,
    at         REAL NOT NULL,
    PRIMARY KEY (namespace, seq)
);
CREATE INDEX oplog_by_target ON oplog (namespace, target);

CREATE TABLE cursors (
    namespace  TEXT NOT NULL PRIMARY KEY,
    seq        INTEGER NOT NULL
);

CREATE TABLE meta (
    namespace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;

CREATE TABLE embed_cache (
    namespace  TEXT NOT NULL,
    model      TEXT NOT NULL,
    hash       TEXT NOT NULL,
    data       BLOB NOT NULL,
    PRIMARY KEY (namespace, model, hash)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE node_fts USING fts5(
    text, namespace UNINDEXED, node_id UNINDEXED, kind UNINDEXED,
    tokenize = 'porter unicode61'
);
