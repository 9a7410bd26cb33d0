#!/usr/bin/env python3
"""Reference for the Chroma sink benchmark: the chromadb Python client's own batch add.

  chroma_bulk_reference.py PORT COLLECTION ROWS.jsonl

Reads the rows (id, text, vector, metadata; as `sluice export` writes them) before timing, creates the
collection (cosine space), then adds them in batches of the server's max batch size and prints
"SECONDS <s>" for the adds alone. Run with the tools venv's python.
"""
import json, sys, time

import chromadb


def main():
    port, name, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    ids, vectors, texts, metadatas = [], [], [], []
    with open(path) as rows:
        for line in rows:
            row = json.loads(line)
            ids.append(row["id"])
            vectors.append(row["vector"])
            texts.append(row["text"])
            metadata = dict(row["metadata"])
            metadata["document_key"] = row["documentKey"]
            metadata["ordinal"] = row["ordinal"]
            metadatas.append(metadata)
    client = chromadb.HttpClient(host="127.0.0.1", port=port)
    collection = client.create_collection(name, configuration={"hnsw": {"space": "cosine"}})
    batch = client.get_max_batch_size()
    start = time.perf_counter()
    for i in range(0, len(ids), batch):
        collection.add(ids=ids[i:i + batch], embeddings=vectors[i:i + batch], documents=texts[i:i + batch], metadatas=metadatas[i:i + batch])
    print(f"SECONDS {time.perf_counter() - start:.3f} BATCH {batch}", flush=True)


if __name__ == "__main__":
    main()
