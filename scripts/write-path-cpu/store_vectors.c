// Every vector of a local store (`vectors` database; a record starts with its dimension, a little-endian
// UInt32, then that many floats), in the store's key order, written as raw float32 rows — the vectors a
// build from the store inserts, for `hnsw_insert N THREADS EFC Q FILE` (issue 33 goal 1, session 35):
//     cc -O2 -o store_vectors store_vectors.c -llmdb && store_vectors STORE/index OUT.f32
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: store_vectors STORE_DIR OUT.f32\n");
        return 2;
    }
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_cursor *cursor;
    MDB_val key, value;
    int rc = mdb_env_create(&env);
    if (rc == 0) rc = mdb_env_set_maxdbs(env, 64);
    if (rc == 0) rc = mdb_env_open(env, argv[1], MDB_RDONLY | MDB_NOLOCK, 0644);
    if (rc == 0) rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
    if (rc == 0) rc = mdb_dbi_open(txn, "vectors", 0, &dbi);
    if (rc == 0) rc = mdb_cursor_open(txn, dbi, &cursor);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", argv[1], mdb_strerror(rc));
        return 1;
    }
    FILE *out = fopen(argv[2], "wb");
    if (out == NULL) {
        perror(argv[2]);
        return 1;
    }
    size_t rows = 0;
    uint32_t dimensions = 0;
    while (mdb_cursor_get(cursor, &key, &value, MDB_NEXT) == 0) {
        if (value.mv_size < 4) continue;
        memcpy(&dimensions, value.mv_data, 4);
        if (value.mv_size < 4 + 4 * (size_t)dimensions) continue;
        fwrite((const char *)value.mv_data + 4, 4, dimensions, out);
        rows++;
    }
    fclose(out);
    printf("%zu vectors of %u dimensions\n", rows, dimensions);
    return 0;
}
