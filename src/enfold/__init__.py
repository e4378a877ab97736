"""enfold: an always-on, proactive memory engine for AI assistants and agents.

Events stream in; enfold folds them into a typed graph of events, concepts, intents, time
anchors, people, claims and facts, and gives back evidence-grounded context.
"""

from enfold.aio import AsyncMemory
from enfold.errors import (
    ConfigError,
    EmbedderError,
    EnfoldError,
    InputError,
    LLMError,
    MissingExtra,
    NamespaceError,
    NotFound,
    PlanError,
    StoreError,
)
from enfold.memory import Memory
from enfold.model import ONTOLOGY, Edge, EdgeType, Node, NodeKind, OpRecord
from enfold.plan import (
    AddEdge,
    AddNode,
    MergeNodes,
    RemoveEdge,
    RemoveNode,
    UpdateNode,
    UpdatePlan,
)
from enfold.settings import Settings

__version__ = "0.1.0"

__all__ = [
    "ONTOLOGY",
    "AddEdge",
    "AddNode",
    "AsyncMemory",
    "ConfigError",
    "Edge",
    "EdgeType",
    "EmbedderError",
    "EnfoldError",
    "InputError",
    "LLMError",
    "Memory",
    "MergeNodes",
    "MissingExtra",
    "NamespaceError",
    "Node",
    "NodeKind",
    "NotFound",
    "OpRecord",
    "PlanError",
    "RemoveEdge",
    "RemoveNode",
    "Settings",
    "StoreError",
    "UpdateNode",
    "UpdatePlan",
    "__version__",
]
