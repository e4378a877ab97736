-- An edge operation is logged once, under its source node, with its other endpoint in
-- ``peer``: it was two records (one per endpoint), each with the whole edge, and edge
-- records were most of the op log. history() of a node reads both columns. Records written
-- before this migration stay as they are (two per edge, ``peer`` empty).
ALTER TABLE oplog ADD COLUMN peer TEXT;
CREATE INDEX oplog_by_peer ON oplog (namespace, peer) WHERE peer IS NOT NULL;
