-- A namespace's graph version: one more with every commit that writes something. With the
-- folding cursor it makes the change token a working graph is fenced by (a commit from a
-- graph loaded at another version is refused: another writer changed the namespace).
-- Transient like leases: not copied by `enfold migrate`, not deleted by a wipe (so a
-- version is never reused).
CREATE TABLE graph_versions (
    namespace  TEXT NOT NULL PRIMARY KEY,
    version    INTEGER NOT NULL
);
