"""Qdrant's strict mode (`strict_mode_config`, Qdrant 1.13+) for the stand-in: the part that refuses filters on
payload fields without a payload index. Stdlib only.

With `enabled` and `unindexed_filtering_retrieve: false`, a read (scroll, count, search) whose filter holds a
field condition on a key with no payload index of a fitting type is refused; with
`unindexed_filtering_update: false`, so is a write's filter (a filter delete, an upsert's `update_filter`).
Qdrant answers 400 with `{"status": {"error": "Bad request: Index required but not found for \"<key>\" of one
of the following types: [<types>]. Help: Create an index for this key or use a different filter."}}` (the
message as reported in qdrant/qdrant#6749 and by Qdrant Cloud users). The stand-in checks `match` and `range`
conditions (nested filters included); `is_empty`, `is_null` and `has_id` are not checked.
"""
from store_standin import Rejected


def config(body, everywhere):
    """The strict mode of a new collection: its `strict_mode_config`, or everything refused with --strict-mode."""
    if everywhere:
        return {"retrieve": True, "update": True}
    spec = body.get("strict_mode_config") or {}
    enabled = spec.get("enabled") is True
    return {"retrieve": enabled and spec.get("unindexed_filtering_retrieve") is False,
            "update": enabled and spec.get("unindexed_filtering_update") is False}


def _fitting_types(condition):
    """The index types Qdrant accepts for a field condition."""
    if "match" in condition:
        match = condition["match"]
        operand = next(iter(match.values())) if isinstance(match, dict) and match else None
        if isinstance(operand, list):
            operand = operand[0] if operand else ""
        if "text" in match:
            return ["text"]
        if isinstance(operand, bool):
            return ["bool"]
        if isinstance(operand, int):
            return ["integer"]
        return ["keyword"]
    bounds = [v for v in (condition.get("range") or {}).values() if v is not None]
    if bounds and all(isinstance(v, str) for v in bounds):
        return ["datetime"]
    return ["integer", "float"]


def _conditions(filter_):
    if not isinstance(filter_, dict):
        return
    for name in ("must", "should", "must_not"):
        clause = filter_.get(name)
        for condition in (clause if isinstance(clause, list) else [clause] if clause is not None else []):
            if not isinstance(condition, dict):
                continue
            if set(condition) & {"must", "should", "must_not"}:
                yield from _conditions(condition)
            elif "key" in condition and ("match" in condition or "range" in condition):
                yield condition


def require_indexes(collection, filter_, operation):
    """Refuses `filter_` as Qdrant in strict mode does when `operation` ("retrieve" or "update") is restricted
    on the collection and a condition's key has no index of a fitting type."""
    if filter_ is None or not collection["strict"][operation]:
        return
    for condition in _conditions(filter_):
        types = _fitting_types(condition)
        if collection["indexes"].get(condition["key"]) not in types:
            raise Rejected(400, f"Bad request: Index required but not found for \"{condition['key']}\" of one of the "
                                f"following types: [{', '.join(types)}]. Help: Create an index for this key or use a "
                                "different filter.")
