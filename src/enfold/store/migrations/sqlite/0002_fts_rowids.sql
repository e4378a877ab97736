-- FTS5 cannot search its UNINDEXED columns, so deleting a node's row by node_id scanned the
-- whole index. This table maps each node to its FTS rowid: updates delete by rowid.
CREATE TABLE fts_rows (
    namespace  TEXT NOT NULL,
    node_id    TEXT NOT NULL,
    fts_rowid  INTEGER NOT NULL,
    PRIMARY KEY (namespace, node_id)
) WITHOUT ROWID;
INSERT OR REPLACE INTO fts_rows (namespace, node_id, fts_rowid)
    SELECT namespace, node_id, rowid FROM node_fts;
