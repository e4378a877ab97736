-- A derived node's provenance (the events it rests on) gets its own rows, one per event in
-- order, instead of a JSON list in the node's row: a concept reinforced by its 1,000th
-- event appends one row rather than rewriting a list of a thousand ids on every event.
CREATE TABLE provenance (
    namespace  TEXT NOT NULL,
    node_id    TEXT NOT NULL,
    pos        INTEGER NOT NULL,
    event_id   TEXT NOT NULL,
    PRIMARY KEY (namespace, node_id, pos)
) WITHOUT ROWID;
INSERT INTO provenance (namespace, node_id, pos, event_id)
    SELECT n.namespace, n.id, CAST(j.key AS INTEGER), j.value
    FROM nodes n, json_each(n.grounded_in) j;
ALTER TABLE nodes DROP COLUMN grounded_in;
