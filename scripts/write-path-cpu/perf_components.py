#!/usr/bin/env python3
"""Sluice's CPU by component from a `perf record -g` of `sluice run` (docs/BENCHMARKS.md, "Sluice's own CPU on
the latency-bound load (session 31)"):
    perf record -F 999 -g -o run.perf -- .build-rel/release/sluice run pipeline.yaml --quiet --log-level warning
    scripts/write-path-cpu/perf_components.py run.perf 999 [N]   # N: the top N frames of what is not attributed
Each sample goes to the first component (in the order of RULES) that any frame of its stack names; samples
whose stack names none (allocation and reference counting whose callers the unwinder lost, the scheduler,
block I/O) are "other". CPU-seconds are samples divided by the frequency."""
import sys, re, subprocess, collections

# Components by the first pattern (in this order) that matches any frame of a sample's stack.
RULES = [
 ("graph inserts (hnswlib)", r"hnswlib|sluice_hnsw|HNSW"),
 ("response decoding (JSONSerialization)", r"OpenAIDialect.*vectors|JSONSerialization|JSONParser|decodeBase64|OpenAIEmbeddingsScan|providerMessage|ProviderAnswer"),
 ("request encoding", r"JSONRequestBody|JSONString|OpenAIDialect.*request"),
 ("curl / HTTP", r"curl|Curl|HTTPClient|nghttp|libssl|libcrypto"),
 ("keyword index", r"Keyword"),
 ("local store encode/write", r"LocalSink|LocalWrite|LocalRecord|LocalANN|LocalIVF|LocalCommit"),
 ("JSONL sink", r"JSONLSink"),
 ("state LMDB (CheckpointStore)", r"CheckpointStore|CheckpointCommits|CommitStage|mdb_|liblmdb"),
 ("tokenizing in chunker", r"SectionChunker|RecursiveChunker|TokenCountIndex|SluiceChunk"),
 ("tokenizing for batches / embed stage", r"EmbedStage|EmbedBatcher|BPETokenizer|Cl100k"),
 ("chunk normalize / hashing", r"Chunk.*normalize|HashStep|XXH|ContentHash"),
 ("extraction / source scan", r"Extract|ScanStage|TextExtractor|Source"),
 ("upsert stage", r"UpsertStage"),
 ("stats / progress", r"Stats|Progress|StageMeter|RunTally|RunMetrics"),
 ("dynamic loading / startup", r"_dl_|dl_main|do_lookup|ld-linux"),
 ("memory release / trim", r"malloc_trim|madvise|Releaser|MemoryRelease"),
]
def main(path, hz):
    out = subprocess.run(["perf","script","-i",path,"-F","comm,tid,ip,sym,dso"],capture_output=True,text=True).stdout
    counts = collections.Counter(); threads=collections.Counter(); other=collections.Counter()
    total=0
    for block in out.split("\n\n"):
        lines=[l for l in block.strip().split("\n") if l.strip()]
        if not lines: continue
        head=lines[0]; frames=lines[1:]
        total+=1
        text="\n".join(frames)
        comm=head.split()[0]
        threads[comm]+=1
        for name,pat in RULES:
            if re.search(pat,text):
                counts[name]+=1; break
        else:
            counts["other"]+=1
            if frames: other[frames[0].split(None,1)[1][:110]]+=1
    print(f"samples {total}  = {total/hz:.2f} CPU-s at {hz} Hz")
    for k,v in counts.most_common(): print(f"{v/hz:6.3f} CPU-s {100*v/total:5.1f}%  {k}")
    print("threads:"); [print(f"  {v/hz:6.3f} {k}") for k,v in threads.most_common(12)]
    if len(sys.argv)>3:
        print("top of other:"); [print(f"  {v:5d} {k}") for k,v in other.most_common(int(sys.argv[3]))]
main(sys.argv[1], float(sys.argv[2]))
