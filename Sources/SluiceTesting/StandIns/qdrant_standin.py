#!/usr/bin/env python3
"""A validating stand-in for Qdrant's REST API (the subset Sluice uses), on loopback. Stdlib only.

Not Qdrant: it implements and checks the documented request shapes and limits — point ids must be
unsigned integers or UUIDs, vectors must have the collection's size, writes must ask `?wait=true`,
an upsert holds 1–256 points, bodies are at most 32 MB, the `api-key` header must match `--api-key`.
Collection aliases as documented: `POST /collections/aliases` applies its `actions` (create_alias,
delete_alias — "delete alias if exists" —, rename_alias) all or none; an alias cannot take a collection's
name nor a collection an alias's; creating an alias that exists is refused here (delete it in the same
request: Sluice does); reads and writes through an alias reach its collection; deleting a collection
deletes its aliases; `GET /aliases` and `GET /collections/{name}/aliases` list them.
Conditional upserts as Qdrant 1.16 documents them: with `update_filter`, a point that exists is updated only
when it matches the filter (else it keeps its state), a new point is inserted regardless; other upsert
fields are refused.
Collection metadata as Qdrant documents it (CreateCollection and UpdateCollection in its source): `metadata` (a JSON object) when a collection is created,
`PATCH /collections/{name}` with `metadata` merges into it (a null value removes its key), and `GET /collections/{name}` returns it in
`config.metadata`. `scroll` applies its `filter`.
Strict mode (qdrant_strict_mode.py): a collection created with `strict_mode_config` (or every collection, with
`--strict-mode`) refuses filters on payload fields without a payload index; `PUT /collections/{name}/index`
creates one (again with the same schema: 200, as Qdrant).
Search is exact (brute force), with Qdrant's filter validated and applied while ranking (qdrant_filter.py). Prints "PORT <n>". `GET /_standin/stats` returns request statistics.
"""
import os, sys, uuid
from urllib.parse import urlparse, parse_qs, unquote

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from store_standin import JSONHandler, Rejected, Store, arguments, score, serve  # noqa: E402
from qdrant_filter import matches  # noqa: E402
from qdrant_strict_mode import config as strict_config, require_indexes  # noqa: E402

DISTANCES = {"Cosine": "cosine", "Euclid": "l2", "Dot": "dot"}
MAX_POINTS_PER_UPSERT = 256


class QdrantStore(Store):
    def __init__(self, options):
        super().__init__(options)
        self.collections = {}  # name -> {"size", "distance", "points": {id: {"vector", "payload"}}, "indexes": set()}
        self.aliases = {}  # alias name -> collection name


FORBIDDEN_NAME_CHARACTERS = set('<>:"/\\|?*\0\x1f')


def check_name(name):
    """Qdrant's rule for collection and alias names: 1 to 255 characters, none of `<>:"/\\|?*`, NUL, U+001F."""
    if not 1 <= len(name) <= 255 or any(c in FORBIDDEN_NAME_CHARACTERS for c in name):
        raise Rejected(422, "Validation error in path parameters: [name: value "
                       + repr(name[:40]) + " is invalid: 1 to 255 characters, none of <>:\"/\\|?*]")


def change_aliases(store, body):
    """Applies every action of a `POST /collections/aliases` body to a copy, then all at once."""
    actions = body.get("actions")
    if not isinstance(actions, list) or not actions:
        raise Rejected(400, "Format error in JSON body: actions: a list of alias operations required")
    aliases = dict(store.aliases)
    for action in actions:
        if not isinstance(action, dict) or len(action) != 1:
            raise Rejected(400, "Format error in JSON body: each action is one of create_alias, delete_alias, rename_alias")
        (kind, spec), = action.items()
        if not isinstance(spec, dict):
            raise Rejected(400, f"Format error in JSON body: {kind} must be an object")
        if kind == "create_alias":
            alias, target = spec.get("alias_name"), spec.get("collection_name")
            if isinstance(alias, str):
                check_name(alias)
            if not isinstance(alias, str) or not alias or not isinstance(target, str):
                raise Rejected(400, "Format error in JSON body: create_alias needs alias_name and collection_name")
            if target not in store.collections:
                raise Rejected(404, f"Not found: Collection `{target}` doesn't exist!")
            if alias in store.collections:
                raise Rejected(400, f"Wrong input: Collection with name `{alias}` already exists!")
            if alias in aliases:
                raise Rejected(400, f"Wrong input: Alias `{alias}` already exists! (stand-in: delete it first, in the same request)")
            aliases[alias] = target
        elif kind == "delete_alias":
            alias = spec.get("alias_name")
            if not isinstance(alias, str):
                raise Rejected(400, "Format error in JSON body: delete_alias needs alias_name")
            aliases.pop(alias, None)
        elif kind == "rename_alias":
            old, new = spec.get("old_alias_name"), spec.get("new_alias_name")
            if old not in aliases:
                raise Rejected(404, f"Not found: Alias `{old}` doesn't exist!")
            if not isinstance(new, str) or not new or new in aliases or new in store.collections:
                raise Rejected(400, f"Wrong input: the new alias name `{new}` is taken or invalid")
            aliases[new] = aliases.pop(old)
        else:
            raise Rejected(400, f"Format error in JSON body: unknown alias operation {kind!r}")
    store.aliases = aliases


def alias_list(aliases):
    return {"aliases": [{"alias_name": a, "collection_name": c} for a, c in sorted(aliases.items())]}


def point_id(value):
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        try:
            return str(uuid.UUID(value))
        except ValueError:
            pass
    raise Rejected(400, f"Format error in JSON body: value {value!r} is not a valid point ID, valid values are either an unsigned integer or a UUID")


class Handler(JSONHandler):
    def ok(self, result):
        self.send_json(200, {"result": result, "status": "ok", "time": 0.0})

    def reject(self, rejection):
        self.send_json(rejection.status, {"status": {"error": rejection.message}, "time": 0.0})

    def view(self, pid, point, with_payload, with_vector, score_value=None):
        out = {"id": pid, "version": 0}
        if with_payload is True:
            out["payload"] = point["payload"]
        elif isinstance(with_payload, list):
            out["payload"] = {k: v for k, v in point["payload"].items() if k in with_payload}
        if with_vector:
            out["vector"] = point["vector"]
        if score_value is not None:
            out["score"] = score_value
        return out

    def dispatch(self):
        store = self.store
        key = store.options.api_key
        if key is not None and self.headers.get("api-key") != key:
            raise Rejected(401, "Must provide an API key or an Authorization bearer token")
        url = urlparse(self.path)
        query = parse_qs(url.query)
        parts = [p for p in url.path.split("/") if p]
        if parts == [] and self.command == "GET":
            # Qdrant's root answers its title and version (it is not wrapped in "result").
            version = store.options.server_version or "1.16.0"
            return self.send_json(200, {"title": "qdrant - vector search engine", "version": version})
        if parts == ["aliases"] and self.command == "GET":
            with store.lock:
                return self.ok(alias_list(store.aliases))
        if parts == ["collections", "aliases"] and self.command == "POST":
            body = self.read_json()
            with store.lock:
                change_aliases(store, body)
            return self.ok(True)
        if len(parts) < 2 or parts[0] != "collections":
            raise Rejected(404, f"no route {self.command} {url.path}")
        name = parts[1]
        rest = parts[2:]
        body = self.read_json() if self.command in ("POST", "PUT", "PATCH") else {}
        if rest == ["aliases"] and self.command == "GET":
            with store.lock:
                if name not in store.collections:
                    raise Rejected(404, f"Not found: Collection `{name}` doesn't exist!")
                return self.ok(alias_list({a: c for a, c in store.aliases.items() if c == name}))
        if rest or self.command == "GET":
            # Reads and writes of points (and the collection's info) reach the collection an alias names.
            with store.lock:
                name = store.aliases.get(name, name)
        is_write = (self.command == "PUT" and rest == ["points"]) or (self.command == "POST" and rest == ["points", "delete"])
        if is_write and query.get("wait") != ["true"]:
            raise Rejected(400, "stand-in: writes must pass ?wait=true (Sluice acknowledges only applied writes)")
        fault = store.fault() if is_write else None
        if fault == "before-503":
            raise Rejected(503, "injected: service unavailable")
        if fault == "before-429":
            self.send_json(429, {"status": {"error": "injected: too many requests"}}, [("Retry-After", "0")])
            return
        with store.lock:
            collection = store.collections.get(name)
            if not rest:
                if self.command == "GET":
                    if collection is None:
                        raise Rejected(404, f"Not found: Collection `{name}` doesn't exist!")
                    config = {"params": {"vectors": {"size": collection["size"], "distance": collection["distance"]}}}
                    if collection["metadata"]:
                        config["metadata"] = collection["metadata"]
                    return self.ok({"status": "green", "points_count": len(collection["points"]), "config": config})
                if self.command == "PATCH":
                    if collection is None:
                        raise Rejected(404, f"Not found: Collection `{name}` doesn't exist!")
                    unknown = set(body) - {"vectors", "optimizers_config", "params", "hnsw_config", "quantization_config",
                                           "sparse_vectors", "strict_mode_config", "metadata"}
                    if unknown:
                        raise Rejected(400, f"Format error in JSON body: unknown field(s) {sorted(unknown)}")
                    metadata = body.get("metadata")
                    if metadata is not None:
                        if not isinstance(metadata, dict):
                            raise Rejected(400, "Format error in JSON body: metadata must be an object")
                        for key, value in metadata.items():  # merged; a null removes the key
                            if value is None:
                                collection["metadata"].pop(key, None)
                            else:
                                collection["metadata"][key] = value
                    return self.ok(True)
                if self.command == "PUT":
                    check_name(unquote(name))
                    if collection is not None:
                        raise Rejected(409, f"Wrong input: Collection `{name}` already exists!")
                    if name in store.aliases:
                        raise Rejected(400, f"Wrong input: Alias with name `{name}` already exists!")
                    vectors = body.get("vectors")
                    if not isinstance(vectors, dict) or not isinstance(vectors.get("size"), int) or vectors["size"] < 1 \
                            or vectors.get("distance") not in DISTANCES:
                        raise Rejected(400, "vectors: {size: positive integer, distance: Cosine|Euclid|Dot} required")
                    metadata = body.get("metadata", {})
                    if not isinstance(metadata, dict):
                        raise Rejected(400, "Format error in JSON body: metadata must be an object")
                    store.collections[name] = {"size": vectors["size"], "distance": vectors["distance"], "points": {},
                                               "indexes": {}, "metadata": dict(metadata),
                                               "strict": strict_config(body, store.options.strict_mode)}
                    return self.ok(True)
                if self.command == "DELETE":
                    store.aliases = {a: c for a, c in store.aliases.items() if c != name}
                    return self.ok(store.collections.pop(name, None) is not None)
            if collection is None:
                raise Rejected(404, f"Not found: Collection `{name}` doesn't exist!")
            points = collection["points"]
            if rest == ["index"] and self.command == "PUT":
                if query.get("wait") != ["true"]:
                    raise Rejected(400, "stand-in: index creation must pass ?wait=true (a filter right after it needs it)")
                if body.get("field_schema") not in ("keyword", "integer", "float", "bool", "datetime"):
                    raise Rejected(400, "field_schema must be a known type")
                if not isinstance(body.get("field_name"), str) or not body["field_name"]:
                    raise Rejected(400, "Format error in JSON body: field_name required")
                collection["indexes"][body["field_name"]] = body["field_schema"]
                return self.ok({"operation_id": 0, "status": "completed"})
            if rest == ["points"] and self.command == "PUT":
                unknown = set(body) - {"points", "update_filter"}
                if unknown:
                    raise Rejected(400, f"Format error in JSON body: unknown field(s) {sorted(unknown)} (stand-in: points, update_filter)")
                batch = body.get("points")
                if not isinstance(batch, list) or not 1 <= len(batch) <= MAX_POINTS_PER_UPSERT:
                    raise Rejected(400, f"points: a list of 1 to {MAX_POINTS_PER_UPSERT} points")
                # Qdrant 1.16's conditional update: "only points matching this filter will be updated; points
                # that don't match will keep their current state; new points will be inserted regardless".
                update_filter = body.get("update_filter")
                if update_filter is not None:
                    matches(update_filter, None, {})  # validated even when no stored point is tested
                    require_indexes(collection, update_filter, "update")
                staged = {}
                for point in batch:
                    pid = point_id(point.get("id"))
                    vector = point.get("vector")
                    if not isinstance(vector, list) or len(vector) != collection["size"] or not all(isinstance(x, (int, float)) for x in vector):
                        raise Rejected(400, f"Wrong input: Vector dimension error: expected dim: {collection['size']}, got {len(vector) if isinstance(vector, list) else 'none'}")
                    payload = point.get("payload") or {}
                    if not isinstance(payload, dict):
                        raise Rejected(400, "payload must be an object")
                    if update_filter is not None and pid in points \
                            and not matches(update_filter, pid, points[pid]["payload"]):
                        continue
                    staged[pid] = {"vector": [float(x) for x in vector], "payload": payload}
                store.batch(len(batch), self.body_bytes)
                points.update(staged)
                if fault == "after-500":
                    raise Rejected(500, "injected: internal error after applying")
                return self.ok({"operation_id": 0, "status": "completed"})
            if rest == ["points", "delete"]:
                if "points" in body:
                    for pid in body["points"]:
                        points.pop(point_id(pid), None)
                elif "filter" in body:
                    if "document_key" not in collection["indexes"]:
                        raise Rejected(400, "stand-in: filter deletes need a payload index on the field")
                    require_indexes(collection, body["filter"], "update")
                    for pid in [pid for pid, p in points.items() if matches(body["filter"], pid, p["payload"])]:
                        del points[pid]
                else:
                    raise Rejected(400, "delete: points or filter required")
                if fault == "after-500":
                    raise Rejected(500, "injected: internal error after applying")
                return self.ok({"operation_id": 0, "status": "completed"})
            if rest == ["points", "count"]:
                require_indexes(collection, body.get("filter"), "retrieve")
                return self.ok({"count": sum(1 for pid, p in points.items() if matches(body.get("filter"), pid, p["payload"]))})
            if rest == ["points", "search"]:
                vector = body.get("vector")
                if not isinstance(vector, list) or len(vector) != collection["size"]:
                    raise Rejected(400, "search: vector of the collection's size required")
                metric = DISTANCES[collection["distance"]]
                # The filter applies while ranking (as Qdrant's filtered HNSW search): the top `limit` among
                # the matching points. Unknown search fields are refused, as Qdrant refuses them.
                unknown = set(body) - {"vector", "limit", "filter", "with_payload", "with_vector", "params", "offset", "score_threshold"}
                if unknown:
                    raise Rejected(400, f"Format error in JSON body: unknown field(s) {sorted(unknown)}")
                matches(body.get("filter"), None, {})  # validated even when no point is there to test it on
                require_indexes(collection, body.get("filter"), "retrieve")
                scored = [(score(metric, vector, p["vector"]), pid, p) for pid, p in points.items()
                          if matches(body.get("filter"), pid, p["payload"])]
                scored.sort(key=lambda t: t[0], reverse=(metric != "l2"))
                limit = int(body.get("limit", 10))
                return self.ok([self.view(pid, p, body.get("with_payload", False), body.get("with_vector", False), s) for s, pid, p in scored[:limit]])
            if rest == ["points", "scroll"]:
                unknown = set(body) - {"offset", "limit", "filter", "with_payload", "with_vector", "order_by", "shard_key"}
                if unknown:
                    raise Rejected(400, f"Format error in JSON body: unknown field(s) {sorted(unknown)}")
                matches(body.get("filter"), None, {})  # validated even when no point is there to test it on
                require_indexes(collection, body.get("filter"), "retrieve")
                ordered = sorted((pid for pid, p in points.items() if matches(body.get("filter"), pid, p["payload"])), key=str)
                offset = body.get("offset")
                start = 0 if offset is None else next((i for i, pid in enumerate(ordered) if str(pid) >= str(point_id(offset))), len(ordered))
                limit = int(body.get("limit", 10))
                page = ordered[start:start + limit]
                following = ordered[start + limit] if start + limit < len(ordered) else None
                return self.ok({"points": [self.view(pid, points[pid], body.get("with_payload", True), body.get("with_vector", False)) for pid in page],
                                "next_page_offset": following})
            if rest == ["points"] and self.command == "POST":
                found = [point_id(pid) for pid in body.get("ids", [])]
                return self.ok([self.view(pid, points[pid], body.get("with_payload", True), body.get("with_vector", False)) for pid in found if pid in points])
        raise Rejected(404, f"no route {self.command} {url.path}")


if __name__ == "__main__":
    options = arguments("Qdrant stand-in")
    serve(Handler, QdrantStore(options))
