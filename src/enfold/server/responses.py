"""The response bodies of the node routes, as the OpenAPI document describes them.

A node's ``attrs`` depend on its kind: :data:`NodeOut` is one model per kind (``EventNode``,
``ConceptNode``, ...) chosen by ``kind``, each with its attrs typed by the kind's payload
model in :mod:`enfold.payloads` (``EventAttrs``, ``ConceptAttrs``, ...), so the schemas
clients see are generated from the models the executor validates with.

These models only document: the routes return :meth:`enfold.model.Node.to_dict` as it is
(``response_model=None``), so a response never passes through them and its body is exactly
what the library gives.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from enfold.model import EdgeType, NodeKind
from enfold.payloads import PAYLOADS

__all__ = ["NODES", "EdgeOut", "EventNode", "IntentNode", "NodeDetail", "NodeOut", "documented"]


class _NodeFields(BaseModel):
    """A node: its kind-specific attributes in ``attrs`` (see the kind's model)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    namespace: str
    kind: str
    text: str = Field(description="the verbatim event, or a derived node's label")
    attrs: dict[str, Any]
    grounded_in: list[str] = Field(description="the ids of the events it rests on")
    created_at: float = Field(description="epoch seconds, UTC")
    updated_at: float = Field(description="epoch seconds, UTC")
    last_access: float = Field(description="when recall last returned it (epoch seconds)")
    access_count: int = Field(description="how often recall returned it")
    plan_id: str | None = Field(description="the plan that last wrote it")


def _node_model(kind: NodeKind) -> type[BaseModel]:
    payload = PAYLOADS[kind]
    tag: Any = Literal[kind.value]  # a type made at runtime, one per kind
    made: type[BaseModel] = create_model(
        f"{kind.value.capitalize()}Node", __base__=_NodeFields,
        __doc__=f"A {kind.value} node; its attrs are {payload.__name__}.",
        kind=(tag, ...), attrs=(payload, ...))
    return made


#: The node model of each kind.
NODES: dict[NodeKind, type[BaseModel]] = {kind: _node_model(kind) for kind in NodeKind}

#: An event node (its attrs: EventAttrs).
EventNode = NODES[NodeKind.EVENT]
#: An intent node (its attrs: IntentAttrs).
IntentNode = NODES[NodeKind.INTENT]
#: A node of any kind, its attrs described by its kind's payload model.
NodeOut: Any = Annotated[Union[tuple(NODES.values())],  # noqa: UP007 (built at runtime)
                         Field(discriminator="kind")]


class EdgeOut(BaseModel):
    """A typed, weighted edge between two nodes."""

    namespace: str
    src: str
    dst: str
    type: EdgeType
    weight: float
    created_at: float
    updated_at: float
    plan_id: str | None


class NodeDetail(BaseModel):
    """A node with its edges and the events it rests on (those still stored)."""

    node: NodeOut
    edges: list[EdgeOut]
    provenance: list[EventNode]  # type: ignore[valid-type]


def documented(model: Any, description: str = "Successful Response") -> dict[str, Any]:
    """The route arguments that describe a 200 body by ``model`` in the OpenAPI document
    while the route returns its dict unvalidated and unchanged."""
    return {"response_model": None,
            "responses": {200: {"model": model, "description": description}}}
