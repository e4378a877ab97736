"""The UpdatePlan: what a planner (local rules or an LLM) proposes to do with an event.

Plans are untrusted data at a trust boundary, so they are pydantic models: a plan from an
LLM reply is parsed into these, and the executor (:mod:`enfold.write.apply`) validates it
against the ontology and the graph before anything is applied.

Within a plan, an ADD_NODE names its new node by a ``ref`` (any string not an existing id,
e.g. ``"new1"``); later operations of the same plan may refer to that ref, and the executor
maps it to a fresh id.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from enfold.model import EdgeType, NodeKind


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    reasoning: str = ""
    grounded_in: list[str] = Field(default_factory=list)


class AddNode(_Op):
    op: Literal["ADD_NODE"] = "ADD_NODE"
    ref: str
    kind: NodeKind
    text: str
    attrs: dict[str, Any] = Field(default_factory=dict)


class AddEdge(_Op):
    op: Literal["ADD_EDGE"] = "ADD_EDGE"
    src: str
    dst: str
    type: EdgeType
    weight: float | None = None  # None: the ontology's prior


class UpdateNode(_Op):
    op: Literal["UPDATE_NODE"] = "UPDATE_NODE"
    id: str
    text: str | None = None
    attrs: dict[str, Any] = Field(default_factory=dict)  # merged; a None value deletes


class MergeNodes(_Op):
    op: Literal["MERGE_NODES"] = "MERGE_NODES"
    keep: str
    absorb: str


class RemoveNode(_Op):
    op: Literal["REMOVE_NODE"] = "REMOVE_NODE"
    id: str


class RemoveEdge(_Op):
    op: Literal["REMOVE_EDGE"] = "REMOVE_EDGE"
    src: str
    dst: str
    type: EdgeType


Operation = Annotated[
    AddNode | AddEdge | UpdateNode | MergeNodes | RemoveNode | RemoveEdge,
    Field(discriminator="op"),
]


def new_plan_id() -> str:
    return f"pl_{uuid.uuid4().hex[:20]}"


class UpdatePlan(BaseModel):
    """A sequence of operations, applied atomically or not at all."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    plan_id: str = Field(default_factory=new_plan_id)
    event_id: str | None = None
    namespace: str | None = None  # if given, must equal the executor's namespace
    planner: str = "local"
    reasoning: str = ""
    operations: list[Operation] = Field(default_factory=list)
