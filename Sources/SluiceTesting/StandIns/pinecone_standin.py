#!/usr/bin/env python3
"""A validating stand-in for Pinecone's control plane and data plane REST APIs (the subset Sluice uses),
on loopback. Stdlib only.

Not Pinecone: it implements and checks the documented request shapes and limits — `Api-Key` must match
`--api-key`, `X-Pinecone-Api-Version` must be 2025-04; an upsert holds at most 1,000 records and 2 MB;
ids are at most 512 bytes; an index's name is 1 to 45 characters of a-z, 0-9 and '-' (not starting or ending
with '-') and a namespace at most 512 ASCII characters other than NUL (400 otherwise); values have the index's dimension; a record's metadata is at most 40 KB of
JSON and holds no null; 100 requests per second per namespace, over which it answers 429. An index's
host is `127.0.0.1:<port>/index/<name>` (a path, so one stand-in serves many indexes). Search is exact; the
metadata filter is validated and applied while ranking (pinecone_filter.py).
Namespaces behave as Pinecone documents them: one is created by the first upsert into it (there is no other
way in this API version); reads (query, fetch, list) of a namespace that does not exist answer as for an empty
one; a delete in a namespace that does not exist answers 404 ("Namespace not found"); a namespace whose last
record is deleted no longer exists (it leaves `describe_index_stats` and `GET /namespaces`);
`DELETE /namespaces/{namespace}` deletes one (404 when it does not exist), `GET /namespaces` lists them.
Index tags as documented (API 2025-04): `tags` when an index is created, `PATCH /indexes/{name}` with `tags`
merges them (an empty value unsets a key), the description returns them; a key is 1–80 letters, digits,
`_` or `-`, a value at most 120 letters, digits or `;@_-.+ ` (others are refused with 400).
Freshness as Pinecone documents it for serverless indexes ("Check data freshness"): every write (upsert,
delete) to a namespace gets the next of that namespace's log sequence numbers (LSNs: 1, 2, …; writes to one
namespace do not move another's), answered in `x-pinecone-request-lsn`; a query answers
`x-pinecone-max-indexed-lsn`, the highest LSN it reflects, and reflects every write up to it. Reads (query,
fetch, list, `describe_index_stats`, `GET /namespaces`) see only indexed writes; a write is indexed once
`--index-lag` later writes were made to its namespace (0, the default: at once). Fetch and list answer no
LSN header: Pinecone documents the barrier for queries only, so the stand-in gives them nothing to rely on.
`POST /_standin/indexing` (no key needed) steers it during a test, deterministically: `{"lag": N}` sets the
lag (a large one holds indexing; 0 indexes every pending write), `{"advance": {"index": I, "namespace": NS,
"writes": K}}` indexes the next K pending writes of one namespace whatever the lag; the answer lists each
namespace's `lsn` (the last assigned) and `indexed` (the highest reflected).
Prints "PORT <n>". `GET /_standin/stats` returns request statistics (`control_describes` counts index
descriptions, i.e. host look-ups).
"""
import json, os, re, sys, time
from urllib.parse import urlparse, parse_qs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from store_standin import JSONHandler, Rejected, Store, arguments, score, serve  # noqa: E402
from pinecone_filter import matches as filter_matches  # noqa: E402

API_VERSION = "2025-04"
MAX_RECORDS = 1000
MAX_BODY = 2 * 1024 * 1024
MAX_METADATA = 40 * 1024
MAX_ID = 512
# Identifier limits (docs.pinecone.io): an index's name 1-45 of a-z, 0-9 and '-', not starting or ending with
# '-'; a namespace at most 512 characters of ASCII except NUL.
MAX_INDEX_NAME = 45
INDEX_NAME = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,43}[a-z0-9])?")
MAX_NAMESPACE = 512
RATE_PER_SECOND = 100
METRICS = {"cosine": "cosine", "euclidean": "l2", "dotproduct": "dot"}


class PineconeStore(Store):
    def __init__(self, options):
        super().__init__(options)
        # name -> {"dimension", "metric", "tags",
        #          "namespaces": {ns: {id: {"values", "metadata"}}}  every write applied: what writes check,
        #          "indexed": {ns: {id: …}}                         the indexed writes only: what reads see,
        #          "lsn": {ns: n}, "indexed_lsn": {ns: n}, "pending": {ns: [(lsn, op)]}}
        self.indexes = {}
        self.windows = {}  # (index, namespace) -> (second, count)
        self.lag = options.index_lag

    def write(self, index, namespace, op):
        """Applies `op` to the namespace, gives it the namespace's next LSN and indexes what the lag lets
        through. Returns the LSN."""
        lsn = index["lsn"].get(namespace, 0) + 1
        index["lsn"][namespace] = lsn
        apply_op(index["namespaces"], namespace, op)
        index["pending"].setdefault(namespace, []).append((lsn, op))
        self.advance(index, namespace)
        return lsn

    def advance(self, index, namespace, writes=None):
        """Indexes the namespace's pending writes the lag lets through, or the next `writes` of them."""
        pending = index["pending"].get(namespace, [])
        target = index["lsn"].get(namespace, 0) - self.lag
        while pending and (pending[0][0] <= target if writes is None else writes > 0):
            lsn, op = pending.pop(0)
            apply_op(index["indexed"], namespace, op)
            index["indexed_lsn"][namespace] = lsn
            if writes is not None:
                writes -= 1

    def indexing(self, body):
        """`POST /_standin/indexing`: sets the lag or indexes pending writes of one namespace."""
        with self.lock:
            if "lag" in body:
                if not isinstance(body["lag"], int) or body["lag"] < 0:
                    raise Rejected(400, "lag: a count of writes, 0 or more")
                self.lag = body["lag"]
                for index in self.indexes.values():
                    for namespace in list(index["pending"]):
                        self.advance(index, namespace)
            step = body.get("advance")
            if step is not None:
                index = self.indexes.get(step.get("index"))
                if index is None or not isinstance(step.get("writes"), int):
                    raise Rejected(400, "advance: an existing index, a namespace and a count of writes")
                self.advance(index, step.get("namespace", ""), writes=step["writes"])
            return {name: {ns: {"lsn": lsn, "indexed": index["indexed_lsn"].get(ns, 0)}
                           for ns, lsn in index["lsn"].items()} for name, index in self.indexes.items()}


def apply_op(namespaces, namespace, op):
    """One write, applied to a state of the index's namespaces (the latest one, or the indexed one)."""
    kind, payload = op
    if kind == "upsert":
        namespaces.setdefault(namespace, {}).update(payload)
    elif kind == "delete":
        records = namespaces.get(namespace, {})
        for vid in payload:
            records.pop(vid, None)
        if not records:
            namespaces.pop(namespace, None)  # its last record deleted: the namespace is gone
    else:  # "deleteAll", or the namespace deleted
        namespaces.pop(namespace, None)


TAG_KEY = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
TAG_VALUE = re.compile(r"^[A-Za-z0-9;@_.+ -]{0,120}$")


def check_tags(tags):
    if not isinstance(tags, dict):
        raise Rejected(400, "tags must be an object of strings")
    for key, value in tags.items():
        if not TAG_KEY.match(key):
            raise Rejected(400, f"Invalid tag key '{key}': keys must be 80 characters or less, alphanumeric, '_' or '-'")
        if not isinstance(value, str) or not TAG_VALUE.match(value):
            raise Rejected(400, f"Invalid value for tag '{key}': values must be 120 characters or less, alphanumeric, ';', '@', '_', '-', '.', '+' or ' '")


def check_metadata(metadata):
    if not isinstance(metadata, dict):
        raise Rejected(400, "metadata must be an object")
    for key, value in metadata.items():
        if value is None:
            raise Rejected(400, f"metadata value for '{key}' is null: null values are not allowed")
        if isinstance(value, list):
            if not all(isinstance(v, str) for v in value):
                raise Rejected(400, f"metadata list '{key}' must hold strings")
        elif not isinstance(value, (str, int, float, bool)):
            raise Rejected(400, f"metadata value for '{key}' has an unsupported type")
    size = len(json.dumps(metadata, separators=(",", ":")).encode())
    if size > MAX_METADATA:
        raise Rejected(400, f"Metadata size is {size} bytes, which exceeds the limit of {MAX_METADATA} bytes per vector")


def check_namespace(namespace):
    if not isinstance(namespace, str) or len(namespace) > MAX_NAMESPACE or any(c == "\0" or ord(c) > 127 for c in namespace):
        raise Rejected(400, f"Namespace must be at most {MAX_NAMESPACE} ASCII characters other than NUL")


class Handler(JSONHandler):
    max_body = MAX_BODY

    def reject(self, rejection):
        self.send_json(rejection.status, {"error": {"code": rejection.status, "message": rejection.message}})

    def rate_limit(self, index, namespace):
        second = int(time.time())
        with self.store.lock:
            start, count = self.store.windows.get((index, namespace), (second, 0))
            if start != second:
                start, count = second, 0
            count += 1
            self.store.windows[(index, namespace)] = (start, count)
        if count > RATE_PER_SECOND:
            raise Rejected(429, f"request rate over {RATE_PER_SECOND}/s for namespace '{namespace}'")

    def dispatch(self):
        store = self.store
        if self.path == "/_standin/indexing" and self.command == "POST":
            return self.send_json(200, store.indexing(self.read_json()))
        if self.headers.get("Api-Key") != store.options.api_key:
            raise Rejected(401, "Invalid API Key")
        if self.headers.get("X-Pinecone-Api-Version") != API_VERSION:
            raise Rejected(400, f"stand-in: X-Pinecone-Api-Version must be pinned to {API_VERSION}")
        url = urlparse(self.path)
        query = parse_qs(url.query)
        parts = [p for p in url.path.split("/") if p]
        body = self.read_json() if self.command in ("POST", "PATCH") else {}
        if parts and parts[0] == "indexes":
            return self.control(parts[1:], body)
        if len(parts) >= 3 and parts[0] == "index" and parts[2] == "namespaces":
            return self.namespaces(parts[1], parts[3:])
        if len(parts) >= 3 and parts[0] == "index":
            return self.data(parts[1], parts[2:], body, query)
        raise Rejected(404, f"no route {self.command} {url.path}")

    def lsn_headers(self, index, namespace, lsn=None):
        """`x-pinecone-request-lsn` (a write's) and `x-pinecone-max-indexed-lsn`; none for a namespace never
        written."""
        if namespace not in index["lsn"]:
            return []
        headers = [("x-pinecone-max-indexed-lsn", str(index["indexed_lsn"].get(namespace, 0)))]
        return headers + ([("x-pinecone-request-lsn", str(lsn))] if lsn is not None else [])

    def control(self, rest, body):
        store = self.store
        with store.lock:
            if not rest and self.command == "POST":
                name, dimension, metric = body.get("name"), body.get("dimension"), body.get("metric", "cosine")
                if not isinstance(name, str) or not isinstance(dimension, int) or dimension < 1 or metric not in METRICS:
                    raise Rejected(400, "name, dimension and metric (cosine|euclidean|dotproduct) required")
                if not INDEX_NAME.fullmatch(name):
                    raise Rejected(400, f"Name must consist of 1 to {MAX_INDEX_NAME} lower case alphanumeric characters or '-', and must start and end with an alphanumeric character")
                if "serverless" not in (body.get("spec") or {}) and "pod" not in (body.get("spec") or {}):
                    raise Rejected(400, "spec.serverless or spec.pod required")
                if name in store.indexes:
                    raise Rejected(409, f"Resource {name} already exists")
                tags = body.get("tags") or {}
                check_tags(tags)
                store.indexes[name] = {"dimension": dimension, "metric": metric, "namespaces": {},
                                       "tags": {k: v for k, v in tags.items() if v},
                                       "indexed": {}, "lsn": {}, "indexed_lsn": {}, "pending": {}}
                return self.send_json(201, self.describe(name))
            if len(rest) == 1 and self.command == "GET":
                store.stats["control_describes"] += 1
                if rest[0] not in store.indexes:
                    raise Rejected(404, f"Resource {rest[0]} not found")
                return self.send_json(200, self.describe(rest[0]))
            if len(rest) == 1 and self.command == "PATCH":
                if rest[0] not in store.indexes:
                    raise Rejected(404, f"Resource {rest[0]} not found")
                unknown = set(body) - {"spec", "deletion_protection", "tags", "embed"}
                if unknown:
                    raise Rejected(400, f"Bad request: unknown field(s) {sorted(unknown)}")
                tags = body.get("tags") or {}
                check_tags(tags)
                index = store.indexes[rest[0]]
                for key, value in tags.items():
                    if value:
                        index["tags"][key] = value
                    else:
                        index["tags"].pop(key, None)
                return self.send_json(200, self.describe(rest[0]))
            if len(rest) == 1 and self.command == "DELETE":
                store.indexes.pop(rest[0], None)
                return self.send_json(202, {})
        raise Rejected(404, "no such control-plane route")

    def describe(self, name):
        index = self.store.indexes[name]
        port = self.server.server_address[1]
        return {"name": name, "dimension": index["dimension"], "metric": index["metric"],
                "host": f"127.0.0.1:{port}/index/{name}", "status": {"ready": True, "state": "Ready"},
                "spec": {"serverless": {"cloud": "aws", "region": "us-east-1"}}, "tags": dict(index["tags"]) or None}

    def namespaces(self, name, rest):
        """`GET /namespaces` and `DELETE /namespaces/{namespace}` (API 2025-04; the default namespace is
        `__default__` in the path)."""
        store = self.store
        with store.lock:
            index = store.indexes.get(name)
            if index is None:
                raise Rejected(404, f"index {name} not found")
            live = index["namespaces"]
            if not rest and self.command == "GET":
                listed = [{"name": ns or "__default__", "record_count": len(v)}
                          for ns, v in sorted(index["indexed"].items())]
                return self.send_json(200, {"namespaces": listed, "pagination": None})
            if len(rest) == 1 and self.command == "DELETE":
                namespace = "" if rest[0] == "__default__" else rest[0]
                if namespace not in live:
                    raise Rejected(404, "Namespace not found")
                store.write(index, namespace, ("drop", None))
                return self.send_json(202, {})
        raise Rejected(404, "no such namespaces route")

    def data(self, name, rest, body, query):
        store = self.store
        route = "/".join(rest)
        namespace = body.get("namespace", query.get("namespace", [""])[0]) if isinstance(body, dict) else ""
        check_namespace(namespace)
        is_write = route in ("vectors/upsert", "vectors/delete")
        self.rate_limit(name, namespace)
        fault = store.fault() if is_write else None
        if fault == "before-503":
            raise Rejected(503, "injected: service unavailable")
        if fault == "before-429":
            raise Rejected(429, "injected: too many requests")
        with store.lock:
            index = store.indexes.get(name)
            if index is None:
                raise Rejected(404, f"index {name} not found")
            # A namespace that does not exist reads as an empty one; only an upsert creates it. Writes check
            # the latest state; reads see the indexed writes only.
            live = index["namespaces"]
            records = index["indexed"].get(namespace, {})
            if route == "vectors/upsert":
                vectors = body.get("vectors")
                if not isinstance(vectors, list) or not 1 <= len(vectors) <= MAX_RECORDS:
                    raise Rejected(400, f"vectors: 1 to {MAX_RECORDS} records per upsert")
                staged = {}
                for vector in vectors:
                    vid, values = vector.get("id"), vector.get("values")
                    if not isinstance(vid, str) or not vid or len(vid.encode()) > MAX_ID:
                        raise Rejected(400, f"id must be a string of 1 to {MAX_ID} bytes")
                    if not isinstance(values, list) or len(values) != index["dimension"]:
                        raise Rejected(400, f"Vector dimension {len(values) if isinstance(values, list) else 0} does not match the dimension of the index {index['dimension']}")
                    metadata = vector.get("metadata", {})
                    check_metadata(metadata)
                    staged[vid] = {"values": [float(x) for x in values], "metadata": metadata}
                store.batch(len(vectors), self.body_bytes)
                lsn = store.write(index, namespace, ("upsert", staged))
                if fault == "after-500":
                    raise Rejected(500, "injected: internal error after applying")
                return self.send_json(200, {"upsertedCount": len(staged)}, headers=self.lsn_headers(index, namespace, lsn))
            if route == "vectors/delete":
                if namespace not in live:
                    raise Rejected(404, "Namespace not found")
                if body.get("deleteAll"):
                    op = ("deleteAll", None)
                else:
                    ids = body.get("ids")
                    if not isinstance(ids, list) or len(ids) > 1000:
                        raise Rejected(400, "ids: a list of at most 1000 ids (or deleteAll)")
                    op = ("delete", list(ids))
                lsn = store.write(index, namespace, op)
                if fault == "after-500":
                    raise Rejected(500, "injected: internal error after applying")
                return self.send_json(200, {}, headers=self.lsn_headers(index, namespace, lsn))
            if route == "vectors/fetch":
                ids = query.get("ids", [])
                if len(ids) > 1000:
                    raise Rejected(400, "at most 1000 ids per fetch")
                return self.send_json(200, {"vectors": {vid: {"id": vid, **records[vid]} for vid in ids if vid in records}, "namespace": namespace})
            if route == "vectors/list":
                prefix = query.get("prefix", [""])[0]
                limit = int(query.get("limit", ["100"])[0])
                if not 1 <= limit <= 100:
                    raise Rejected(400, "limit must be 1 to 100")
                token = query.get("paginationToken", [None])[0]
                ordered = sorted(vid for vid in records if vid.startswith(prefix))
                start = int(token) if token else 0
                page = ordered[start:start + limit]
                answer = {"vectors": [{"id": vid} for vid in page], "namespace": namespace}
                if start + limit < len(ordered):
                    answer["pagination"] = {"next": str(start + limit)}
                return self.send_json(200, answer)
            if route == "query":
                vector, top_k = body.get("vector"), body.get("topK")
                if not isinstance(vector, list) or len(vector) != index["dimension"] or not isinstance(top_k, int) or not 1 <= top_k <= 10000:
                    raise Rejected(400, "query: vector of the index's dimension and topK 1..10000 required")
                metric = METRICS[index["metric"]]
                scored = []
                # The metadata filter applies while ranking: the top k among the matching records.
                unknown = set(body) - {"namespace", "vector", "topK", "filter", "includeValues", "includeMetadata", "sparseVector", "id"}
                if unknown:
                    raise Rejected(400, f"Bad request: unknown field(s) {sorted(unknown)}")
                filter_matches(body.get("filter"), {})  # validated even when no record is there to test it on
                for vid, record in records.items():
                    if not filter_matches(body.get("filter"), record["metadata"]):
                        continue
                    value = score(metric, vector, record["values"])
                    scored.append((value * value if metric == "l2" else value, vid, record))
                scored.sort(key=lambda t: t[0], reverse=(metric != "l2"))
                matches = []
                for value, vid, record in scored[:top_k]:
                    match = {"id": vid, "score": value}
                    if body.get("includeValues"):
                        match["values"] = record["values"]
                    if body.get("includeMetadata"):
                        match["metadata"] = record["metadata"]
                    matches.append(match)
                return self.send_json(200, {"matches": matches, "namespace": namespace},
                                      headers=self.lsn_headers(index, namespace))
            if route == "describe_index_stats":
                namespaces = {ns: {"vectorCount": len(v)} for ns, v in index["indexed"].items() if v}
                return self.send_json(200, {"namespaces": namespaces, "dimension": index["dimension"],
                                            "totalVectorCount": sum(n["vectorCount"] for n in namespaces.values())})
        raise Rejected(404, f"no data-plane route {route}")


if __name__ == "__main__":
    options = arguments("Pinecone stand-in")
    if options.api_key is None:
        print("ERROR --api-key is required (Pinecone always needs one)", flush=True)
        sys.exit(1)
    serve(Handler, PineconeStore(options))
