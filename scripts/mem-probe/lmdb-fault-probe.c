// Diagnostic LD_PRELOAD probe (not run by bench-run-memory.sh): per LMDB function and environment, the calls, the
// minor faults of the calling thread inside them (getrusage RUSAGE_THREAD), the most of one call and the calls
// of 64 faults or more; written at exit into $FP_OUT.<pid>. Tells which operations map an LMDB file's pages.
//   cc -O2 -shared -fPIC -o lmdb-fault-probe.so lmdb-fault-probe.c -ldl -lpthread -llmdb
//   OMP_THREAD_LIMIT=1 FP_OUT=/tmp/fp LD_PRELOAD=$PWD/lmdb-fault-probe.so sluice run …
#define _GNU_SOURCE
#include <dlfcn.h>
#include <lmdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
enum { GET, PUT, CGET, CPUT, DEL, CDEL, COMMIT, NFN };
static const char *names[NFN] = {"get", "put", "cursor_get", "cursor_put", "del", "cursor_del", "commit"};
static struct { void *env; char path[256]; long calls[NFN], faults[NFN], maxf[NFN], big[NFN]; } envs[8];
static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static long faults(void) { struct rusage u; getrusage(RUSAGE_THREAD, &u); return u.ru_minflt; }
static void note(MDB_env *env, int fn, long f) {
    pthread_mutex_lock(&lk);
    int i; for (i = 0; i < 8 && envs[i].env && envs[i].env != env; i++) ;
    if (i < 8) {
        if (!envs[i].env) { envs[i].env = env; const char *p = 0; mdb_env_get_path(env, &p); if (p) snprintf(envs[i].path, 256, "%s", p); }
        envs[i].calls[fn]++; envs[i].faults[fn] += f; if (f > envs[i].maxf[fn]) envs[i].maxf[fn] = f; if (f >= 64) envs[i].big[fn]++;
    }
    pthread_mutex_unlock(&lk);
}
#define REAL(name, type) static __typeof__(type) *real; if (!real) real = dlsym(RTLD_NEXT, name)
int mdb_get(MDB_txn *t, MDB_dbi d, MDB_val *k, MDB_val *v) { REAL("mdb_get", int(MDB_txn*,MDB_dbi,MDB_val*,MDB_val*)); long a = faults(); int rc = real(t,d,k,v); note(mdb_txn_env(t), GET, faults()-a); return rc; }
int mdb_put(MDB_txn *t, MDB_dbi d, MDB_val *k, MDB_val *v, unsigned f) { REAL("mdb_put", int(MDB_txn*,MDB_dbi,MDB_val*,MDB_val*,unsigned)); long a = faults(); int rc = real(t,d,k,v,f); note(mdb_txn_env(t), PUT, faults()-a); return rc; }
int mdb_del(MDB_txn *t, MDB_dbi d, MDB_val *k, MDB_val *v) { REAL("mdb_del", int(MDB_txn*,MDB_dbi,MDB_val*,MDB_val*)); long a = faults(); int rc = real(t,d,k,v); note(mdb_txn_env(t), DEL, faults()-a); return rc; }
int mdb_cursor_get(MDB_cursor *c, MDB_val *k, MDB_val *v, MDB_cursor_op o) { REAL("mdb_cursor_get", int(MDB_cursor*,MDB_val*,MDB_val*,MDB_cursor_op)); long a = faults(); int rc = real(c,k,v,o); note(mdb_txn_env(mdb_cursor_txn(c)), CGET, faults()-a); return rc; }
int mdb_cursor_put(MDB_cursor *c, MDB_val *k, MDB_val *v, unsigned f) { REAL("mdb_cursor_put", int(MDB_cursor*,MDB_val*,MDB_val*,unsigned)); long a = faults(); int rc = real(c,k,v,f); note(mdb_txn_env(mdb_cursor_txn(c)), CPUT, faults()-a); return rc; }
int mdb_cursor_del(MDB_cursor *c, unsigned f) { REAL("mdb_cursor_del", int(MDB_cursor*,unsigned)); long a = faults(); int rc = real(c,f); note(mdb_txn_env(mdb_cursor_txn(c)), CDEL, faults()-a); return rc; }
int mdb_txn_commit(MDB_txn *t) { REAL("mdb_txn_commit", int(MDB_txn*)); MDB_env *e = mdb_txn_env(t); long a = faults(); int rc = real(t); note(e, COMMIT, faults()-a); return rc; }
__attribute__((destructor)) static void dump(void) {
    const char *p = getenv("FP_OUT"); if (!p) return;
    char name[4096]; snprintf(name, sizeof name, "%s.%d", p, (int)getpid());
    FILE *f = fopen(name, "w"); if (!f) return;
    for (int i = 0; i < 8 && envs[i].env; i++) for (int j = 0; j < NFN; j++) if (envs[i].calls[j])
        fprintf(f, "%s %s calls=%ld faults=%ld max=%ld over64=%ld\n", envs[i].path, names[j], envs[i].calls[j], envs[i].faults[j], envs[i].maxf[j], envs[i].big[j]);
    fclose(f);
}
