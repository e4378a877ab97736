-- Vectors and cached embeddings move to rowid tables. In a WITHOUT ROWID table a row is
-- kept in an index b-tree, whose pages hold at most ~1 KB of a row locally: every 1-1.5 KB
-- vector spilled into an overflow page of its own (4 KB written for each, and one more
-- page dirtied on every write). A rowid table keeps the row on its leaf page.
CREATE TABLE vectors_rows (
    namespace  TEXT NOT NULL,
    node_id    TEXT NOT NULL,
    dim        INTEGER NOT NULL,
    dtype      TEXT NOT NULL,
    data       BLOB NOT NULL,
    PRIMARY KEY (namespace, node_id)
);
INSERT INTO vectors_rows (namespace, node_id, dim, dtype, data)
    SELECT namespace, node_id, dim, dtype, data FROM vectors;
DROP TABLE vectors;
ALTER TABLE vectors_rows RENAME TO vectors;
CREATE TABLE embed_cache_rows (
    namespace  TEXT NOT NULL,
    model      TEXT NOT NULL,
    hash       TEXT NOT NULL,
    data       BLOB NOT NULL,
    PRIMARY KEY (namespace, model, hash)
);
INSERT INTO embed_cache_rows (namespace, model, hash, data)
    SELECT namespace, model, hash, data FROM embed_cache;
DROP TABLE embed_cache;
ALTER TABLE embed_cache_rows RENAME TO embed_cache;
