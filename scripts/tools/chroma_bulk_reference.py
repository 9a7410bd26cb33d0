#!/usr/bin/env python3
"""Reference for the Chroma sink benchmark: the chromadb Python client's own batch add and upsert.

  chroma_bulk_reference.py PORT PREFIX ROWS.jsonl [METHOD ...]

Reads the rows (id, text, vector, metadata; as `sluice export` writes them) before timing. For each
METHOD (`add`, `upsert`; default both, in that order) it creates the collection PREFIX_METHOD (cosine
space), loads the rows into it in batches of the server's max batch size, and prints
"METHOD <method> SECONDS <s> BATCH <n>" for the calls alone. Run with the tools venv's python.
"""
import json, sys, time

import chromadb


def main():
    port, prefix, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    methods = sys.argv[4:] or ["add", "upsert"]
    ids, vectors, texts, metadatas = [], [], [], []
    with open(path) as rows:
        for line in rows:
            row = json.loads(line)
            ids.append(row["id"])
            vectors.append(row["vector"])
            texts.append(row["text"])
            metadata = dict(row["metadata"])
            metadata["document_key"] = row.get("document_key", row.get("documentKey"))
            metadata["ordinal"] = row["ordinal"]
            metadatas.append(metadata)
    client = chromadb.HttpClient(host="127.0.0.1", port=port)
    batch = client.get_max_batch_size()
    for method in methods:
        collection = client.create_collection(f"{prefix}_{method}", configuration={"hnsw": {"space": "cosine"}})
        call = {"add": collection.add, "upsert": collection.upsert}[method]
        start = time.perf_counter()
        for i in range(0, len(ids), batch):
            call(ids=ids[i:i + batch], embeddings=vectors[i:i + batch], documents=texts[i:i + batch], metadatas=metadatas[i:i + batch])
        print(f"METHOD {method} SECONDS {time.perf_counter() - start:.3f} BATCH {batch}", flush=True)
        if collection.count() != len(ids):
            sys.exit(f"{method}: the collection holds {collection.count()} records, not {len(ids)}")


if __name__ == "__main__":
    main()
