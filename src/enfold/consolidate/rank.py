"""PageRank moved to :mod:`enfold.pagerank` (context assembly and consolidation both use it);
this name stays for the code and tests that import it from here."""

from enfold.pagerank import IncrementalPageRank, pagerank_reference

__all__ = ["IncrementalPageRank", "pagerank_reference"]
