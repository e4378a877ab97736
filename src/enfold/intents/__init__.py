"""Intents, the prefrontal layer: emergence, lifecycle and feedback calibration.

Everything here is a plain function (or an :class:`IntentEngine` method) over the working
graph, run inside an open graph transaction; changes go through the executor
(:func:`enfold.write.apply.execute`, planner ``"intents"``), so they are validated against the
ontology and written to the op log like any plan. What should be told to the user comes back
as :class:`~enfold.notify.Notification` values for the caller to publish *after* the commit.

**Emergence**, after each folded event (:meth:`IntentEngine.on_event`):

* *deadline* / *follow_up* — the planner turns explicit obligations into intents (with a due
  time: deadline; without: follow_up). Here each is admitted: linked by TRIGGERS from the
  concepts its events belong to and from its nearest concept, merged into an open intent for
  the same need instead of duplicating it, and gated by its category's threshold. A later event
  that mentions the due day (and is related to the intent) grounds it further.
* *habit* — a concept one person acts on (events by one source that state no obligation)
  on ≥ ``habit_min_events`` distinct days within ``habit_window_days`` ("Keep up:
  <concept>"), TRIGGERS from the concept, grounded in those events.
* *goal* — a connected group of ≥ 3 recently active concepts (PART_OF, RELATED_TO,
  DERIVED_FROM or shared grounding events) whose weighted density reaches ``intent_density``.

Every category is judged on one scale: an evidence *score* against a threshold of 1.0 scaled by
the category's calibration. Habit score = distinct days in the window / ``habit_min_events``;
goal score = weighted density / ``intent_density``; an explicit obligation scores
``intent_explicit_deadline`` or ``intent_explicit_follow_up`` (the defaults are
:data:`EXPLICIT_SCORE`). A score under the threshold does not emerge: a habit or goal is simply
not created; an explicit obligation the planner already wrote is kept as ``suppressed`` (not
listed, never notified) and emerges if later evidence reinforces it past the threshold.

**Lifecycle**: ``pending`` → ``resolved`` | ``rejected`` | ``deferred``; ``expired`` once the
stream clock (the newest event's ``ts``) passes the due time; ``suppressed`` before emergence.
An event with a completion cue ("Submitted the NSF proposal!", or the past tense of the
obligation's own verb: "Sent Omar the budget") resolves the open intent it is about (key terms
shared with the cue's clause, backed by embedding similarity), unless it names that intent's
due day as still ahead. Each change is appended to ``attrs["history"]``.

**Reactivation**: an event reinforcing a concept silent for ``dormant_days`` (a setting) is
reported with the open intents that concept triggers.

**Calibration** (Eq. 2): w_c ← (1 − α)·w_c + α·s_t per category, kept in the namespace's graph
meta (:data:`CALIBRATION_KEY`); θ_c = base / w_c clamped to [0.5, 3]·base.

The package: :mod:`~enfold.intents.core` (vocabulary, reading), :mod:`~enfold.intents.calibration`
(Eq. 2), :mod:`~enfold.intents.groups` (habit and goal evidence, peeling),
:mod:`~enfold.intents.resolution` (completion matching), :mod:`~enfold.intents.engine`
(the engine and its per-event transaction).
"""

from __future__ import annotations

from enfold.intents.calibration import (
    apply_weight,
    category_weights,
    feedback_score,
    threshold,
)
from enfold.intents.core import (
    CALIBRATION_KEY,
    CATEGORIES,
    EXPLICIT_SCORE,
    FEEDBACK_KINDS,
    LAPSE_DAYS,
    LATE_RESOLUTION_DAYS,
    OPEN,
    STATUSES,
    Labeler,
    concepts_of,
    due_end,
    grounding_connections,
    list_intents,
    proactivity,
)
from enfold.intents.engine import (
    IntentEngine,
    IntentReport,
    TriggerIndex,
)
from enfold.intents.groups import (
    GOAL_SLACK,
    Links,
    cached_links,
    concept_links,
    densest_group,
    density,
    goal_template,
    habit_days,
    habit_label,
    peeling,
    symmetric,
)
from enfold.intents.resolution import (
    cue_fragments,
    obligation_verb,
    past_forms,
)

__all__ = [
    "CALIBRATION_KEY",
    "CATEGORIES",
    "EXPLICIT_SCORE",
    "FEEDBACK_KINDS",
    "GOAL_SLACK",
    "LAPSE_DAYS",
    "LATE_RESOLUTION_DAYS",
    "OPEN",
    "STATUSES",
    "IntentEngine",
    "IntentReport",
    "Labeler",
    "Links",
    "TriggerIndex",
    "apply_weight",
    "cached_links",
    "category_weights",
    "concept_links",
    "concepts_of",
    "cue_fragments",
    "densest_group",
    "density",
    "due_end",
    "feedback_score",
    "goal_template",
    "grounding_connections",
    "habit_days",
    "habit_label",
    "list_intents",
    "obligation_verb",
    "past_forms",
    "peeling",
    "proactivity",
    "symmetric",
    "threshold",
]
