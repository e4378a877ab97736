"""The exceptions enfold raises.

One base class, a shallow tree::

    EnfoldError
    ├── InputError          bad input from a caller: malformed event, oversized text, bad UTF-8
    │   └── NamespaceError  an unknown or invalid namespace
    ├── NotFound            a node, event or key that does not exist (in this namespace)
    ├── PlanError           an UpdatePlan that violates the ontology or the executor's rules
    ├── StoreError          the storage backend failed (driver errors are translated to this)
    │   └── StaleGraph      a commit from a working graph that another writer changed under it
    ├── EmbedderError       an embedder could not be loaded or failed
    ├── LLMError            an LLM endpoint failed
    │   ├── LLMTimeout
    │   ├── LLMRateLimited
    │   ├── LLMBadReply     the reply was not valid JSON or did not match the schema
    │   ├── LLMBudgetExceeded
    │   └── LLMUnavailable  the circuit breaker is open: the endpoint kept failing
    └── ConfigError         invalid settings or configuration files
        └── MissingExtra    a configured part needs an extra that is not installed

The CLI and the server translate these at their edge (one line on stderr / problem+json).
"""

from __future__ import annotations


class EnfoldError(Exception):
    """Base class of every error enfold raises on purpose."""


class InputError(EnfoldError, ValueError):
    """The caller gave input enfold cannot accept; nothing was stored."""


class NamespaceError(InputError):
    """A namespace name is invalid or unknown."""


class NotFound(EnfoldError, KeyError):
    """A node, event or key does not exist in this namespace."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "not found"


class PlanError(EnfoldError):
    """An UpdatePlan was rejected by the executor; nothing of it was applied."""

    def __init__(self, message: str, *, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or [message]


class StoreError(EnfoldError):
    """The storage backend failed."""


class StaleGraph(StoreError):
    """A commit was refused: another writer (a process, or another store object) changed the
    namespace after the working graph it came from was loaded. Nothing was written; reload
    the graph and redo the work (``Memory`` does this by itself)."""


class EmbedderError(EnfoldError):
    """An embedder could not be loaded or failed to embed."""


class LLMError(EnfoldError):
    """An OpenAI-compatible endpoint failed."""


class LLMTimeout(LLMError):
    """The LLM endpoint did not answer in time."""


class LLMRateLimited(LLMError):
    """The LLM endpoint kept answering 429 after the allowed retries."""


class LLMBadReply(LLMError):
    """The LLM replied with something that is not the JSON we asked for."""


class LLMBudgetExceeded(LLMError):
    """The namespace's token budget is spent."""


class LLMUnavailable(LLMError):
    """The endpoint failed repeatedly; calls are refused without a request until the
    circuit breaker's cool-down ends (the planner chain falls back at once)."""


class ConfigError(EnfoldError):
    """Invalid settings or configuration."""


class MissingExtra(ConfigError):
    """A configured part (the MiniLM embedder, the LLM planner, the server) needs an
    optional extra that is not installed; the message is the one line saying which."""

    def __init__(self, extra: str, what: str, modules: list[str]) -> None:
        super().__init__(f"{what} needs the {extra!r} extra: pip install 'enfold[{extra}]' "
                         f"(not installed: {', '.join(modules)})")
        self.extra = extra
        self.modules = modules
