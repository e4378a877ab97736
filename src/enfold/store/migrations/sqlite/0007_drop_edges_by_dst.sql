-- Nothing reads edges by their destination from the store: the working graph keeps both
-- directions in memory, and a removed edge is deleted by its full key. The index cost a
-- write to a random page for every new edge, about one page in ten that folding wrote.
DROP INDEX IF EXISTS edges_by_dst;
