#!/usr/bin/env python3
"""A validating stand-in for OpenAI's Files and Vector Stores REST APIs (the endpoints Sluice's
`openai-vector-store` sink uses, under /v1), on loopback. Stdlib only.

Not OpenAI: it implements and checks the documented request shapes, limits and errors —
- `Authorization: Bearer <--api-key>` on every request, else 401 `invalid_api_key`;
- `POST /v1/files` is multipart/form-data with `purpose` (one of the documented purposes) and `file`;
  an empty file or one over `--max-file-bytes` (OpenAI: 512 MB) is refused with 400;
- `POST /v1/vector_stores/{id}/files`: the file must exist (404), `attributes` hold at most 16 keys, keys
  of at most 64 characters, values that are strings of at most 512 characters, numbers or booleans
  (400 otherwise); `chunking_strategy` is `auto` or `static` with `max_chunk_size_tokens` 100–4096 and
  `chunk_overlap_tokens` at most half of it;
- a file attached is `in_progress` for `--processing-polls` reads of it, then `completed` (or `failed`
  with `last_error` when its text contains `--fail-marker`);
- unknown vector stores and files answer 404 with OpenAI's error object; list `limit` is 1–100 (default 20),
  `order` `asc` or `desc` (default), `after` an id of the list (else 400);
- `GET /v1/files` lists the account's files (`purpose` filter; `limit` 1–10,000, default 10,000);
- file batches (`POST /v1/vector_stores/{id}/file_batches`): exactly one of `file_ids` (with one
  `attributes` and `chunking_strategy` for all) or `files` (each with its own; the batch's are then
  ignored), 1–2,000 files, each existing (404) and named once, attributes and chunking checked as for one
  file; the batch is `in_progress` for `--processing-polls` reads of it (`GET .../file_batches/{batch}`),
  then its files settle as single files do; `POST .../cancel` cancels the files still in progress
  (`cancelling`, then `cancelled`); `GET .../file_batches/{batch}/files` lists them (`filter` by status,
  paged as any list);
- search (`POST /v1/vector_stores/{id}/search`): `query` a string, `max_num_results` 1–50, `filters` a
  comparison (`eq ne gt gte lt lte in nin`) or compound (`and or`) filter, validated; the completed files
  are cut into chunks of `max_chunk_size_tokens` words (auto: 800 with 400 overlap) and ranked by the
  cosine of word-count vectors, so results are meaningful; `ne` and `nin` match a file without the key;
- `--rate-limit-every N`: every Nth request answers 429 `rate_limit_exceeded` with `Retry-After: 0`.
Prints "PORT <n>". `GET /_standin/files` returns every file and attachment (for tests' end-state checks);
`GET /_standin/stats` returns counters (uploads, attaches, detaches, file_deletes,
searches, rate_limited, invalid, ...).
"""
import json, math, os, re, sys, threading, time
from urllib.parse import urlparse, parse_qs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from store_standin import JSONHandler, Rejected, Store, lifeline, serve  # noqa: E402
import argparse  # noqa: E402

PURPOSES = {"assistants", "batch", "fine-tune", "vision", "user_data", "evals"}
MAX_ATTRIBUTES = 16
MAX_KEY = 64
MAX_STRING = 512
MAX_BATCH_FILES = 2000
OPERATORS = {"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin"}


def options():
    lifeline()
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--max-file-bytes", type=int, default=512 * 1024 * 1024)
    parser.add_argument("--processing-polls", type=int, default=1)
    parser.add_argument("--fail-marker", default=None)
    parser.add_argument("--rate-limit-every", type=int, default=0)
    parser.add_argument("--fault-every", type=int, default=0)
    return parser.parse_args()


class OpenAIStore(Store):
    def __init__(self, options):
        super().__init__(options)
        self.files = {}  # file id -> {"filename", "purpose", "bytes", "text", "created_at"}
        self.stores = {}  # vs id -> {"name", "metadata", "created_at", "files": {file id -> entry}}
        self.batches = {}  # vsfb id -> {"store", "files": [file id], "polls", "cancelled", "created_at"}
        self.counter = 0
        for key in ("uploads", "attaches", "detaches", "file_deletes", "searches", "rate_limited", "polls",
                    "file_batches", "batched_files", "batch_polls", "batch_cancels"):
            self.stats[key] = 0

    def new_id(self, prefix):
        with self.lock:
            self.counter += 1
            return f"{prefix}{self.counter:08d}"


def words(text):
    return re.findall(r"\w+", text.lower())


def chunks(text, strategy):
    size, overlap = 800, 400
    if strategy and strategy.get("type") == "static":
        size = strategy["static"]["max_chunk_size_tokens"]
        overlap = strategy["static"]["chunk_overlap_tokens"]
    tokens = text.split()
    if not tokens:
        return []
    out, start = [], 0
    while True:
        out.append(" ".join(tokens[start:start + size]))
        if start + size >= len(tokens):
            return out
        start += max(1, size - overlap)


def similarity(query, text):
    a, b = {}, {}
    for word in words(query):
        a[word] = a.get(word, 0) + 1
    for word in words(text):
        b[word] = b.get(word, 0) + 1
    dot = sum(count * b.get(word, 0) for word, count in a.items())
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def check_attributes(attributes):
    if attributes is None:
        return {}
    if not isinstance(attributes, dict):
        raise Rejected(400, "Invalid type for 'attributes': expected an object")
    if len(attributes) > MAX_ATTRIBUTES:
        raise Rejected(400, f"Invalid 'attributes': too many properties ({len(attributes)}); at most {MAX_ATTRIBUTES}")
    for key, value in attributes.items():
        if len(key) > MAX_KEY:
            raise Rejected(400, f"Invalid 'attributes': key '{key[:20]}...' is longer than {MAX_KEY} characters")
        if isinstance(value, str):
            if len(value) > MAX_STRING:
                raise Rejected(400, f"Invalid 'attributes.{key}': string longer than {MAX_STRING} characters")
        elif not isinstance(value, (bool, int, float)):
            raise Rejected(400, f"Invalid type for 'attributes.{key}': expected a string, number or boolean")
    return attributes


def check_chunking(strategy):
    if strategy is None:
        return {"type": "static", "static": {"max_chunk_size_tokens": 800, "chunk_overlap_tokens": 400}}
    kind = strategy.get("type") if isinstance(strategy, dict) else None
    if kind == "auto":
        return {"type": "static", "static": {"max_chunk_size_tokens": 800, "chunk_overlap_tokens": 400}}
    if kind != "static" or not isinstance(strategy.get("static"), dict):
        raise Rejected(400, "Invalid 'chunking_strategy': expected type 'auto' or 'static' with a 'static' object")
    size = strategy["static"].get("max_chunk_size_tokens")
    overlap = strategy["static"].get("chunk_overlap_tokens")
    if not isinstance(size, int) or not 100 <= size <= 4096:
        raise Rejected(400, "Invalid 'chunking_strategy.static.max_chunk_size_tokens': must be between 100 and 4096")
    if not isinstance(overlap, int) or overlap < 0 or overlap > size // 2:
        raise Rejected(400, "Invalid 'chunking_strategy.static.chunk_overlap_tokens': must not exceed half of max_chunk_size_tokens")
    return strategy


def check_filter(node):
    if not isinstance(node, dict):
        raise Rejected(400, "Invalid 'filters': expected an object")
    kind = node.get("type")
    if kind in ("and", "or"):
        parts = node.get("filters")
        if not isinstance(parts, list) or not parts:
            raise Rejected(400, f"Invalid 'filters': compound filter '{kind}' needs a non-empty 'filters' array")
        for part in parts:
            check_filter(part)
        return
    if kind not in OPERATORS:
        raise Rejected(400, f"Invalid 'filters.type': '{kind}'")
    if not isinstance(node.get("key"), str):
        raise Rejected(400, "Invalid 'filters.key': expected a string")
    value = node.get("value")
    if kind in ("in", "nin"):
        if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
            raise Rejected(400, f"Invalid 'filters.value': '{kind}' takes an array of strings or numbers")
    elif not isinstance(value, (str, int, float, bool)):
        raise Rejected(400, "Invalid 'filters.value': expected a string, number or boolean")


def matches(node, attributes):
    kind = node["type"]
    if kind == "and":
        return all(matches(part, attributes) for part in node["filters"])
    if kind == "or":
        return any(matches(part, attributes) for part in node["filters"])
    key, value = node["key"], node["value"]
    if key not in attributes:
        return kind in ("ne", "nin")
    found = attributes[key]
    if kind == "eq":
        return found == value and isinstance(found, bool) == isinstance(value, bool)
    if kind == "ne":
        return found != value
    if kind == "in":
        return found in value
    if kind == "nin":
        return found not in value
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (found, value))
    if not numbers and not (isinstance(found, str) and isinstance(value, str)):
        return False
    return {"gt": found > value, "gte": found >= value, "lt": found < value, "lte": found <= value}[kind]


def parse_multipart(content_type, body):
    match = re.search(r'boundary="?([^";]+)"?', content_type or "")
    if not content_type or not content_type.startswith("multipart/form-data") or not match:
        raise Rejected(400, "Content-Type must be multipart/form-data with a boundary")
    boundary = b"--" + match.group(1).encode()
    fields, files = {}, {}
    for part in body.split(boundary)[1:]:
        if part.startswith(b"--"):
            break
        part = part[2:] if part.startswith(b"\r\n") else part
        head, _, data = part.partition(b"\r\n\r\n")
        data = data[:-2] if data.endswith(b"\r\n") else data
        disposition = re.search(rb'name="([^"]*)"(?:; filename="([^"]*)")?', head)
        if not disposition:
            raise Rejected(400, "multipart part without a name")
        name = disposition.group(1).decode()
        if disposition.group(2) is not None:
            files[name] = (disposition.group(2).decode(), data)
        else:
            fields[name] = data.decode()
    return fields, files


class Handler(JSONHandler):
    max_body = 600 * 1024 * 1024

    def reject(self, rejection):
        kinds = {401: "invalid_request_error", 404: "invalid_request_error", 429: "requests"}
        codes = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
        headers = [("Retry-After", "0")] if rejection.status == 429 else []
        self.send_json(rejection.status, {"error": {"message": rejection.message,
                                                    "type": kinds.get(rejection.status, "invalid_request_error"),
                                                    "param": None, "code": codes.get(rejection.status)}}, headers)

    def read_raw(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length > self.max_body:
            self.rfile.read(length)
            raise Rejected(413, f"request body of {length} bytes is over the limit")
        return self.rfile.read(length) if length else b""

    def page(self, items, query, default=20, maximum=100):
        try:
            limit = int(query.get("limit", [str(default)])[0])
        except ValueError:
            raise Rejected(400, "Invalid 'limit': expected an integer")
        if not 1 <= limit <= maximum:
            raise Rejected(400, f"Invalid 'limit': {limit}; must be between 1 and {maximum}")
        order = query.get("order", ["desc"])[0]
        if order not in ("asc", "desc"):
            raise Rejected(400, f"Invalid 'order': '{order}'; expected 'asc' or 'desc'")
        if order == "desc":
            items = list(reversed(items))
        after = query.get("after", [None])[0]
        if after is not None:
            ids = [item["id"] for item in items]
            if after not in ids:
                raise Rejected(400, f"Invalid 'after': no object with id '{after}' in this list")
            items = items[ids.index(after) + 1:]
        data = items[:limit]
        return {"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None, "has_more": len(items) > limit}

    def vector_store(self, store_id):
        entry = self.store.stores.get(store_id)
        if entry is None:
            raise Rejected(404, f"No vector store found with id '{store_id}'.")
        return entry

    def store_object(self, store_id, entry):
        files = entry["files"].values()
        counts = {status: sum(1 for f in files if f["status"] == status) for status in ("in_progress", "completed", "failed", "cancelled")}
        counts["total"] = len(entry["files"])
        return {"id": store_id, "object": "vector_store", "name": entry["name"], "metadata": entry["metadata"],
                "created_at": entry["created_at"], "status": "completed",
                "usage_bytes": sum(f["usage_bytes"] for f in files if f["status"] == "completed"),
                "file_counts": counts, "expires_after": None, "last_active_at": entry["created_at"]}

    def settle(self, file_id, entry):
        """Ends a file's processing: `completed`, or `failed` when its text holds the fail marker."""
        if entry["status"] != "in_progress":
            return
        marker = self.store.options.fail_marker
        if marker and marker in self.store.files.get(file_id, {}).get("text", ""):
            entry["status"] = "failed"
            entry["last_error"] = {"code": "unsupported_file", "message": "The file could not be parsed."}
        else:
            entry["status"] = "completed"

    def batch_object(self, batch_id):
        batch = self.store.batches[batch_id]
        attached = self.store.stores.get(batch["store"], {"files": {}})["files"]
        statuses = [attached[f]["status"] for f in batch["files"] if f in attached]
        counts = {s: statuses.count(s) for s in ("in_progress", "completed", "failed", "cancelled")}
        counts["total"] = len(batch["files"])
        if counts["in_progress"]:
            status = "cancelling" if batch["cancelled"] else "in_progress"
        elif batch["cancelled"]:
            status = "cancelled"
        elif counts["failed"] == counts["total"]:
            status = "failed"
        else:
            status = "completed"
        return {"id": batch_id, "object": "vector_store.files_batch", "created_at": batch["created_at"],
                "vector_store_id": batch["store"], "status": status, "file_counts": counts}

    def file_object(self, store_id, file_id, entry, poll=False):
        if poll and entry["status"] == "in_progress":
            self.store.stats["polls"] += 1
            entry["polls"] += 1
            if entry["polls"] >= self.store.options.processing_polls:
                self.settle(file_id, entry)
        return {"id": file_id, "object": "vector_store.file", "created_at": entry["created_at"],
                "vector_store_id": store_id, "status": entry["status"], "last_error": entry["last_error"],
                "usage_bytes": entry["usage_bytes"], "attributes": entry["attributes"],
                "chunking_strategy": entry["chunking_strategy"]}

    def drain(self):
        """Reads a request's body that is refused before it is read, so that the connection stays in step."""
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)

    def dump(self):
        """`GET /_standin/files`: every file of the account and every vector store's attachments (for tests)."""
        store = self.store
        with store.lock:
            files = [{"id": i, "filename": f["filename"], "purpose": f["purpose"], "bytes": f["bytes"]}
                     for i, f in store.files.items()]
            stores = {i: [{"file_id": f, "status": a["status"], "attributes": a["attributes"]}
                          for f, a in e["files"].items()] for i, e in store.stores.items()}
        self.send_json(200, {"files": files, "vector_stores": stores})

    def dispatch(self):
        store = self.store
        if self.path == "/_standin/files":
            return self.dump()
        every = store.options.rate_limit_every
        limited = every and self.sequence % every == 0
        if self.headers.get("Authorization") != f"Bearer {store.options.api_key}" or limited:
            self.drain()
        if self.headers.get("Authorization") != f"Bearer {store.options.api_key}":
            raise Rejected(401, "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.")
        if limited:
            with store.lock:
                store.stats["rate_limited"] += 1
            raise Rejected(429, "Rate limit reached for requests. Please try again in 0s.")
        url = urlparse(self.path)
        query = parse_qs(url.query)
        parts = [p for p in url.path.split("/") if p]
        if not parts or parts[0] != "v1":
            raise Rejected(404, f"Invalid URL ({self.command} {url.path})")
        parts = parts[1:]
        with store.lock:
            self.route(parts, query)

    def route(self, parts, query):
        store, method = self.store, self.command
        if parts == ["files"] and method == "POST":
            fields, files = parse_multipart(self.headers.get("Content-Type"), self.read_raw())
            purpose = fields.get("purpose")
            if purpose not in PURPOSES:
                raise Rejected(400, f"Invalid value for 'purpose': '{purpose}'")
            if "file" not in files:
                raise Rejected(400, "Missing required parameter: 'file'")
            filename, data = files["file"]
            if not data:
                raise Rejected(400, "File is empty.")
            if len(data) > store.options.max_file_bytes:
                raise Rejected(400, f"File is too large: {len(data)} bytes; the maximum is {store.options.max_file_bytes} bytes.")
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                raise Rejected(400, "Invalid file: the .txt file is not UTF-8 text.")
            file_id = store.new_id("file-")
            store.files[file_id] = {"filename": filename, "purpose": purpose, "bytes": len(data), "text": text,
                                    "created_at": int(time.time())}
            store.stats["uploads"] += 1
            return self.send_json(200, {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                                        "filename": filename, "purpose": purpose, "status": "processed"})
        if parts == ["files"] and method == "GET":
            purpose = query.get("purpose", [None])[0]
            items = [{"id": i, "object": "file", "bytes": f["bytes"], "created_at": f["created_at"],
                      "filename": f["filename"], "purpose": f["purpose"], "status": "processed", "expires_at": None}
                     for i, f in store.files.items() if purpose is None or f["purpose"] == purpose]
            # The Files API pages up to 10,000 objects, and that is its default.
            return self.send_json(200, self.page(items, query, default=10000, maximum=10000))
        if len(parts) == 2 and parts[0] == "files" and method == "DELETE":
            if parts[1] not in store.files:
                raise Rejected(404, f"No such File object: {parts[1]}")
            del store.files[parts[1]]
            store.stats["file_deletes"] += 1
            return self.send_json(200, {"id": parts[1], "object": "file", "deleted": True})
        if parts == ["vector_stores"] and method == "POST":
            body = self.read_json()
            name = body.get("name")
            if name is not None and not isinstance(name, str):
                raise Rejected(400, "Invalid type for 'name': expected a string")
            store_id = store.new_id("vs_")
            store.stores[store_id] = {"name": name, "metadata": body.get("metadata") or {}, "created_at": int(time.time()),
                                      "files": {}}
            return self.send_json(200, self.store_object(store_id, store.stores[store_id]))
        if parts == ["vector_stores"] and method == "GET":
            items = [self.store_object(i, e) for i, e in store.stores.items()]
            return self.send_json(200, self.page(items, query))
        if len(parts) < 2 or parts[0] != "vector_stores":
            raise Rejected(404, f"Invalid URL ({method} /v1/{'/'.join(parts)})")
        store_id = parts[1]
        entry = self.vector_store(store_id)
        rest = parts[2:]
        if rest == [] and method == "GET":
            return self.send_json(200, self.store_object(store_id, entry))
        if rest == [] and method == "DELETE":
            del store.stores[store_id]
            return self.send_json(200, {"id": store_id, "object": "vector_store.deleted", "deleted": True})
        if rest == ["files"] and method == "POST":
            body = self.read_json()
            file_id = body.get("file_id")
            if file_id not in store.files:
                raise Rejected(404, f"No file found with id '{file_id}'.")
            attributes = check_attributes(body.get("attributes"))
            strategy = check_chunking(body.get("chunking_strategy"))
            existing = entry["files"].get(file_id)
            if existing is None:
                entry["files"][file_id] = {"created_at": int(time.time()), "status": "in_progress", "last_error": None,
                                           "usage_bytes": store.files[file_id]["bytes"], "attributes": attributes,
                                           "chunking_strategy": strategy, "polls": 0}
                store.stats["attaches"] += 1
            return self.send_json(200, self.file_object(store_id, file_id, entry["files"][file_id]))
        if rest == ["files"] and method == "GET":
            items = [self.file_object(store_id, i, f) for i, f in entry["files"].items()]
            return self.send_json(200, self.page(items, query))
        if len(rest) >= 2 and rest[0] == "files":
            file_id = rest[1]
            attached = entry["files"].get(file_id)
            if attached is None:
                raise Rejected(404, f"No file found with id '{file_id}' in vector store '{store_id}'.")
            if len(rest) == 2 and method == "GET":
                return self.send_json(200, self.file_object(store_id, file_id, attached, poll=True))
            if len(rest) == 2 and method == "DELETE":
                del entry["files"][file_id]
                store.stats["detaches"] += 1
                return self.send_json(200, {"id": file_id, "object": "vector_store.file.deleted", "deleted": True})
            if rest[2:] == ["content"] and method == "GET":
                text = store.files.get(file_id, {}).get("text", "")
                return self.send_json(200, {"object": "vector_store.file_content.page",
                                            "data": [{"type": "text", "text": text}], "has_more": False, "next_page": None})
        if rest == ["file_batches"] and method == "POST":
            body = self.read_json()
            ids, entries = body.get("file_ids"), body.get("files")
            if (ids is None) == (entries is None):
                raise Rejected(400, "Exactly one of 'file_ids' and 'files' must be given (they are mutually exclusive).")
            if ids is not None:
                if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                    raise Rejected(400, "Invalid type for 'file_ids': expected an array of strings")
                shared_attributes = check_attributes(body.get("attributes"))
                shared_strategy = check_chunking(body.get("chunking_strategy"))
                entries = [{"file_id": i, "attributes": shared_attributes, "chunking_strategy": shared_strategy}
                           for i in ids]
            else:
                if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
                    raise Rejected(400, "Invalid type for 'files': expected an array of objects")
                # With 'files', the batch's own attributes and chunking strategy are ignored: each file's count.
                entries = [{"file_id": e.get("file_id"), "attributes": check_attributes(e.get("attributes")),
                            "chunking_strategy": check_chunking(e.get("chunking_strategy"))} for e in entries]
            if not 1 <= len(entries) <= MAX_BATCH_FILES:
                raise Rejected(400, f"Invalid batch: {len(entries)} files; a batch holds 1 to {MAX_BATCH_FILES}")
            for e in entries:
                if e["file_id"] not in store.files:
                    raise Rejected(404, f"No file found with id '{e['file_id']}'.")
            if len({e["file_id"] for e in entries}) != len(entries):
                raise Rejected(400, "Invalid batch: a file id appears more than once")
            batch_id = store.new_id("vsfb_")
            for e in entries:
                if e["file_id"] not in entry["files"]:
                    entry["files"][e["file_id"]] = {"created_at": int(time.time()), "status": "in_progress",
                                                   "last_error": None, "usage_bytes": store.files[e["file_id"]]["bytes"],
                                                   "attributes": e["attributes"], "chunking_strategy": e["chunking_strategy"],
                                                   "polls": 0}
                    store.stats["attaches"] += 1
            store.batches[batch_id] = {"store": store_id, "files": [e["file_id"] for e in entries], "polls": 0,
                                       "cancelled": False, "created_at": int(time.time())}
            store.stats["file_batches"] += 1
            store.stats["batched_files"] += len(entries)
            return self.send_json(200, self.batch_object(batch_id))
        if len(rest) >= 2 and rest[0] == "file_batches":
            batch = store.batches.get(rest[1])
            if batch is None or batch["store"] != store_id:
                raise Rejected(404, f"No file batch found with id '{rest[1]}' in vector store '{store_id}'.")
            if len(rest) == 2 and method == "GET":
                store.stats["batch_polls"] += 1
                batch["polls"] += 1
                if batch["polls"] >= store.options.processing_polls and not batch["cancelled"]:
                    for file_id in batch["files"]:
                        attached = entry["files"].get(file_id)
                        if attached is not None:
                            self.settle(file_id, attached)
                return self.send_json(200, self.batch_object(rest[1]))
            if rest[2:] == ["cancel"] and method == "POST":
                self.read_raw()
                batch["cancelled"] = True
                for file_id in batch["files"]:
                    attached = entry["files"].get(file_id)
                    if attached is not None and attached["status"] == "in_progress":
                        attached["status"] = "cancelled"
                store.stats["batch_cancels"] += 1
                return self.send_json(200, self.batch_object(rest[1]))
            if rest[2:] == ["files"] and method == "GET":
                wanted = query.get("filter", [None])[0]
                if wanted is not None and wanted not in ("in_progress", "completed", "failed", "cancelled"):
                    raise Rejected(400, f"Invalid 'filter': '{wanted}'")
                items = [self.file_object(store_id, f, entry["files"][f]) for f in batch["files"]
                         if f in entry["files"] and (wanted is None or entry["files"][f]["status"] == wanted)]
                return self.send_json(200, self.page(items, query))
        if rest == ["search"] and method == "POST":
            body = self.read_json()
            text = body.get("query")
            if not isinstance(text, str) or not text.strip():
                raise Rejected(400, "Invalid 'query': expected a non-empty string")
            limit = body.get("max_num_results", 10)
            if not isinstance(limit, int) or not 1 <= limit <= 50:
                raise Rejected(400, "Invalid 'max_num_results': must be between 1 and 50")
            filters = body.get("filters")
            if filters is not None:
                check_filter(filters)
            store.stats["searches"] += 1
            hits = []
            for file_id, attached in entry["files"].items():
                if attached["status"] != "completed":
                    continue
                if filters is not None and not matches(filters, attached["attributes"]):
                    continue
                source = store.files.get(file_id)
                if source is None:
                    continue
                for piece in chunks(source["text"], attached["chunking_strategy"]):
                    score = similarity(text, piece)
                    if score > 0:
                        hits.append({"file_id": file_id, "filename": source["filename"], "score": round(score, 6),
                                     "attributes": attached["attributes"], "content": [{"type": "text", "text": piece}]})
            hits.sort(key=lambda hit: -hit["score"])
            return self.send_json(200, {"object": "vector_store.search_results.page", "search_query": [text],
                                        "data": hits[:limit], "has_more": False, "next_page": None})
        raise Rejected(404, f"Invalid URL ({method} /v1/{'/'.join(parts)})")


if __name__ == "__main__":
    serve(Handler, OpenAIStore(options()))
