-- The text index again, with each row's kind in the four low bits of its rowid (rowid =
-- n * 16 + the kind's code, n in the order the rows were written, as before): a search
-- keeps the scored rows of the kinds it asks for by their rowids, without reading any
-- row's stored columns. At 100k events a search for derived nodes that met few of them
-- among its best 1,024 rows read the columns of 4,000 rows (30-40 ms). The codes are
-- enfold.store.sqlite's KIND_CODES. The table has a new name, so that code from before
-- this change (which would give a new row the next rowid, and with it a wrong kind) cannot
-- write to it.
CREATE VIRTUAL TABLE node_text USING fts5(
    text, namespace UNINDEXED, node_id UNINDEXED, kind UNINDEXED,
    tokenize = 'porter unicode61'
);
INSERT INTO node_text (rowid, text, namespace, node_id, kind)
    SELECT rowid * 16 + CASE kind WHEN 'event' THEN 1 WHEN 'concept' THEN 2
                                  WHEN 'intent' THEN 3 WHEN 'time' THEN 4
                                  WHEN 'person' THEN 5 WHEN 'claim' THEN 6
                                  WHEN 'fact' THEN 7 ELSE 0 END,
           text, namespace, node_id, kind
    FROM node_fts ORDER BY rowid;
-- each node's row: the one new rowid in its old rowid's sixteen
UPDATE fts_rows SET fts_rowid = COALESCE((
    SELECT rowid FROM node_text
    WHERE rowid BETWEEN fts_rows.fts_rowid * 16 AND fts_rows.fts_rowid * 16 + 15),
    fts_rowid * 16);
DROP TABLE node_fts;
