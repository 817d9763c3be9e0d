/* A one-process stand-in for the few MPI calls a peer's host driver makes (rank 0 of 1), so
 * that a fetched peer built for `mpirun -n 1` runs as a plain process on a machine without
 * MPI. Ours, not the peer's: scripts/triangle-peers.sh puts it on the include path. */
#ifndef WAYFARER_MPI_SHIM_H
#define WAYFARER_MPI_SHIM_H
#include <string.h>

typedef int MPI_Comm;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef struct { int MPI_SOURCE, MPI_TAG, MPI_ERROR; } MPI_Status;

#define MPI_COMM_WORLD 0
#define MPI_SUCCESS 0
#define MPI_INT 4
#define MPI_LONG 8
#define MPI_LONG_LONG_INT 8
#define MPI_LONG_LONG 8
#define MPI_UNSIGNED_LONG_LONG 8
#define MPI_FLOAT 4
#define MPI_DOUBLE 8
#define MPI_SUM 1
#define MPI_MAX 2
#define MPI_MIN 3

static inline int MPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; return MPI_SUCCESS; }
static inline int MPI_Finalize(void) { return MPI_SUCCESS; }
static inline int MPI_Comm_rank(MPI_Comm c, int *rank) { (void)c; *rank = 0; return MPI_SUCCESS; }
static inline int MPI_Comm_size(MPI_Comm c, int *size) { (void)c; *size = 1; return MPI_SUCCESS; }
static inline int MPI_Barrier(MPI_Comm c) { (void)c; return MPI_SUCCESS; }
/* One process: a reduction or gather is a copy. The datatype constants are element sizes. */
static inline int MPI_Reduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
    (void)op; (void)root; (void)c;
    memcpy(recv, send, (size_t)count * (size_t)t);
    return MPI_SUCCESS;
}
static inline int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
    return MPI_Reduce(send, recv, count, t, op, 0, c);
}
#endif
