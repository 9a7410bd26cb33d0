"""Pinecone's metadata filter (https://docs.pinecone.io/guides/search/filter-by-metadata), validated and
evaluated for the stand-in. Stdlib only.

A filter is an object: `$and`/`$or` take a non-empty list of filters; any other key is a metadata field
whose value is a plain value (equality) or an object of operators, all required: `$eq`, `$ne` (a
string, number or boolean), `$gt`, `$gte`, `$lt`, `$lte` (a number), `$in`, `$nin` (a list of strings
or numbers), `$exists` (a boolean). Anything else is answered with a 400, as Pinecone does. On a list
field, `$eq`/`$in` hold when any element matches and `$ne`/`$nin` when none does.

Assumed where the documentation does not say: `$ne` and `$nin` match records that lack the field (as in
MongoDB, whose operators Pinecone's are modelled on). Sluice does not depend on it: its `!=` adds
`$exists: true`. Numbers compare by value (Pinecone keeps them as floats); a boolean is not a number.
"""
from store_standin import Rejected

COMPARISONS = {"$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b,
               "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}


def _error(message):
    return Rejected(400, f"Bad request: invalid filter: {message}")


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _scalar(value):
    return isinstance(value, (str, bool)) or _is_number(value)


def _equal(a, b):
    if _is_number(a) and _is_number(b):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


def _operator(name, operand, present, value):
    elements = value if isinstance(value, list) else ([value] if present else [])
    if name in ("$eq", "$ne"):
        if not _scalar(operand):
            raise _error(f"{name} takes a string, number or boolean, got {operand!r}")
        found = any(_equal(e, operand) for e in elements)
        return found if name == "$eq" else not found
    if name in COMPARISONS:
        if not _is_number(operand):
            raise _error(f"{name} takes a number, got {operand!r}")
        return any(_is_number(e) and COMPARISONS[name](e, operand) for e in elements)
    if name in ("$in", "$nin"):
        if not isinstance(operand, list) or not operand or not all(isinstance(x, str) or _is_number(x) for x in operand):
            raise _error(f"{name} takes a non-empty list of strings or numbers, got {operand!r}")
        found = any(_equal(e, x) for e in elements for x in operand)
        return found if name == "$in" else not found
    if name == "$exists":
        if not isinstance(operand, bool):
            raise _error(f"$exists takes a boolean, got {operand!r}")
        return present == operand
    raise _error(f"{name} is not a valid operator")


def matches(filter_, metadata):
    """Whether a record's metadata matches (None matches everything); raises Rejected for a malformed filter."""
    if filter_ is None:
        return True
    if not isinstance(filter_, dict) or not filter_:
        raise _error(f"a filter must be a non-empty object, got {filter_!r}")
    results = []
    for key, condition in filter_.items():
        if key in ("$and", "$or"):
            if not isinstance(condition, list) or not condition:
                raise _error(f"{key} takes a non-empty list of filters")
            inner = [matches(part, metadata) for part in condition]
            results.append(all(inner) if key == "$and" else any(inner))
            continue
        if key.startswith("$"):
            raise _error(f"{key} is not a valid operator at the top level")
        present = key in metadata
        value = metadata.get(key)
        if isinstance(condition, dict):
            if not condition:
                raise _error(f"an empty condition for {key}")
            results.append(all([_operator(name, operand, present, value) for name, operand in condition.items()]))
        else:
            results.append(_operator("$eq", condition, present, value))
    return all(results)
