-- The HTTP server's tables. API keys are stored as the SHA-256 of their secret, never the
-- secret; a revoked key keeps its row (revoked_at set) so `enfold keys list` can show it.
CREATE TABLE api_keys (
    id          TEXT NOT NULL PRIMARY KEY,
    namespace   TEXT NOT NULL,
    key_hash    TEXT NOT NULL,
    label       TEXT,
    created_at  REAL NOT NULL,
    revoked_at  REAL
);
CREATE INDEX api_keys_by_namespace ON api_keys (namespace);

-- Namespace leases: a fold worker folds a namespace only while it holds its lease.
CREATE TABLE leases (
    namespace   TEXT NOT NULL PRIMARY KEY,
    owner       TEXT NOT NULL,
    expires_at  REAL NOT NULL
);
