"""Qdrant's filter (https://qdrant.tech/documentation/concepts/filtering/), validated and evaluated as
Qdrant does, for the stand-in. Stdlib only.

A filter is {must, should, must_not} (each a condition or a list of them; `should` needs one match,
`must_not` none). Conditions: a nested filter; {"key", "match": {"value"|"any"|"except"}}; {"key",
"range": {"gt"|"gte"|"lt"|"lte"}} with numbers, or with RFC 3339 strings (a datetime range); {"is_empty":
{"key"}} (missing, null or []); {"is_null": {"key"}}; {"has_id": [...]}. A key is a dotted path into the
payload (`metadata.page`); a condition on a list holds when any element satisfies it. Anything else is
answered with the 400 Qdrant gives to a body it cannot parse.
"""
from datetime import datetime, timezone

from store_standin import Rejected


def _error(message):
    return Rejected(400, f"Format error in JSON body: {message}")


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _values(payload, key):
    """The values at a dotted path; lists are flattened (a condition holds when any element does)."""
    current = [payload]
    for part in key.split("."):
        following = []
        for item in current:
            if isinstance(item, dict) and part in item:
                value = item[part]
                following.extend(value if isinstance(value, list) else [value])
        current = following
    return current


def _raw(payload, key):
    current = payload
    for part in key.split("."):
        if not isinstance(current, dict) or part not in current:
            return None, False
        current = current[part]
    return current, True


def _datetime(text):
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (AttributeError, TypeError, ValueError):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)  # Qdrant assumes UTC


def _check_match(match):
    if not isinstance(match, dict) or len(match) != 1:
        raise _error("match: exactly one of value, text, any, except")
    (kind, operand), = match.items()
    if kind == "value":
        if not isinstance(operand, (str, bool)) and not (isinstance(operand, int)):
            raise _error(f"match.value: {operand!r} is not a keyword, integer or boolean")
    elif kind in ("any", "except"):
        if not isinstance(operand, list) or not (all(isinstance(x, str) for x in operand)
                                                 or all(isinstance(x, int) and not isinstance(x, bool) for x in operand)):
            raise _error(f"match.{kind}: a list of keywords or a list of integers")
    elif kind == "text":
        if not isinstance(operand, str):
            raise _error("match.text: a string")
    else:
        raise _error(f"match: unknown variant `{kind}`")


def _check_range(bounds):
    if not isinstance(bounds, dict) or not bounds or not set(bounds) <= {"gt", "gte", "lt", "lte"}:
        raise _error(f"range: unknown field in {bounds!r}, expected gt, gte, lt, lte")
    values = [v for v in bounds.values() if v is not None]
    if all(_is_number(v) for v in values):
        return "number"
    if all(isinstance(v, str) and _datetime(v) is not None for v in values):
        return "datetime"
    raise _error(f"range: bounds must all be numbers or all RFC 3339 datetimes, got {bounds!r}")


def _compare(value, bounds, kind):
    convert = _datetime if kind == "datetime" else (lambda v: v if _is_number(v) else None)
    left = convert(value) if (kind == "number" or isinstance(value, str)) else None
    if left is None:
        return False
    for name, bound in bounds.items():
        if bound is None:
            continue
        right = convert(bound)
        if not {"gt": left > right, "gte": left >= right, "lt": left < right, "lte": left <= right}[name]:
            return False
    return True


def _condition(condition, point_id, payload):
    if not isinstance(condition, dict):
        raise _error(f"a condition must be an object, got {condition!r}")
    if set(condition) & {"must", "should", "must_not", "min_should"}:
        return matches(condition, point_id, payload)
    if "is_empty" in condition or "is_null" in condition:
        kind, inner = next(iter(condition.items())) if len(condition) == 1 else (None, None)
        if kind is None or not isinstance(inner, dict) or set(inner) != {"key"}:
            raise _error(f"{list(condition)}: expected {{\"is_empty\": {{\"key\": ...}}}}")
        value, present = _raw(payload, inner["key"])
        if kind == "is_null":
            return present and value is None
        return not present or value is None or value == []
    if "has_id" in condition:
        return point_id in condition["has_id"]
    extra = set(condition) - {"key", "match", "range"}
    if extra or "key" not in condition or not isinstance(condition["key"], str) \
            or len(set(condition) & {"match", "range"}) != 1:
        raise _error(f"unknown or incomplete condition {condition!r}")
    values = _values(payload, condition["key"])
    if "match" in condition:
        _check_match(condition["match"])
        (kind, operand), = condition["match"].items()

        def same(a, b):
            return type(a) is type(b) and a == b
        if kind == "value":
            return any(same(v, operand) for v in values)
        if kind == "any":
            return any(same(v, x) for v in values for x in operand)
        if kind == "except":
            return bool(values) and not any(same(v, x) for v in values for x in operand)
        return any(isinstance(v, str) and operand in v for v in values)
    kind = _check_range(condition["range"])
    return any(_compare(v, condition["range"], kind) for v in values)


def matches(filter_, point_id, payload):
    """Whether a point matches a filter (None matches everything); raises Rejected for a malformed one."""
    if filter_ is None:
        return True
    if not isinstance(filter_, dict) or not set(filter_) <= {"must", "should", "must_not", "min_should"}:
        raise _error(f"filter: unknown field in {filter_!r}, expected must, should, must_not")

    def clauses(name):
        value = filter_.get(name)
        if value is None:
            return None
        return value if isinstance(value, list) else [value]
    must, should, must_not = clauses("must"), clauses("should"), clauses("must_not")
    if must is not None and not all([_condition(c, point_id, payload) for c in must]):
        return False
    if should and not any([_condition(c, point_id, payload) for c in should]):
        return False
    if must_not is not None and any([_condition(c, point_id, payload) for c in must_not]):
        return False
    return True
