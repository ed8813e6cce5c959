/*
 * qccl: quantized collective communication library.
 *
 * Types and functions mirror NCCL's (same names with the "qccl" prefix, same numeric values),
 * so that a s/nccl/qccl/ port compiles. The header compiles without CUDA.
 */
#ifndef QCCL_QCCL_H_
#define QCCL_QCCL_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define QCCL_MAJOR 0
#define QCCL_MINOR 1
#define QCCL_PATCH 0
#define QCCL_VERSION(X, Y, Z) ((X)*10000 + (Y)*100 + (Z))
#define QCCL_VERSION_CODE QCCL_VERSION(QCCL_MAJOR, QCCL_MINOR, QCCL_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

/* Same declaration as CUDA's, so this header needs no CUDA. */
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

typedef struct qcclComm* qcclComm_t;

/* The enums are int-sized as in C; in C++ their base is spelled out so that any int a caller
 * passes (a C caller may pass any) is a value the library can check rather than undefined. */
#ifdef __cplusplus
#define QCCL_ENUM_INT : int
#else
#define QCCL_ENUM_INT
#endif

/* Values 0..7 are NCCL's; qccl's own codes follow. */
typedef enum QCCL_ENUM_INT {
  qcclSuccess = 0,
  qcclUnhandledCudaError = 1,
  qcclSystemError = 2,
  qcclInternalError = 3,
  qcclInvalidArgument = 4,
  qcclInvalidUsage = 5,
  qcclRemoteError = 6,
  qcclInProgress = 7,
  qcclTimeout = 8,
  qcclNumResults = 9
} qcclResult_t;

typedef enum QCCL_ENUM_INT {
  qcclInt8 = 0,
  qcclChar = 0,
  qcclUint8 = 1,
  qcclInt32 = 2,
  qcclInt = 2,
  qcclUint32 = 3,
  qcclInt64 = 4,
  qcclUint64 = 5,
  qcclFloat16 = 6,
  qcclHalf = 6,
  qcclFloat32 = 7,
  qcclFloat = 7,
  qcclFloat64 = 8,
  qcclDouble = 8,
  qcclBfloat16 = 9,
  qcclFloat8e4m3 = 10,
  qcclFloat8e5m2 = 11,
  qcclNumTypes = 12
} qcclDataType_t;

typedef enum QCCL_ENUM_INT {
  qcclSum = 0,
  qcclProd = 1,
  qcclMax = 2,
  qcclMin = 3,
  qcclAvg = 4,
  qcclNumOps = 5,
  /* qccl extensions (gloo's BAND, BOR, BXOR): integer dtypes only, always exact, host transports */
  qcclBitwiseAnd = 16,
  qcclBitwiseOr = 17,
  qcclBitwiseXor = 18
} qcclRedOp_t;

/* Opaque bootstrap handle: the root's address and a 128-bit secret (docs/API.md). */
#define QCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[QCCL_UNIQUE_ID_BYTES];
} qcclUniqueId;

/* Communicator settings. Append-only: start from QCCL_CONFIG_INITIALIZER. Fields left undefined
 * (NULL, QCCL_CONFIG_UNDEF_INT, QCCL_CONFIG_UNDEF_SIZE, QCCL_CONFIG_UNDEF_FLOAT) take the QCCL_*
 * environment variable's value, else the default (docs/ENV.md). */
#define QCCL_CONFIG_UNDEF_INT INT_MIN
#define QCCL_CONFIG_UNDEF_SIZE SIZE_MAX
#define QCCL_CONFIG_UNDEF_FLOAT (-1.0f)
/* minBytes: the cost model chooses per call (QCCL_MIN_BYTES=auto, the default). */
#define QCCL_MIN_BYTES_AUTO (SIZE_MAX - 1)
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  const char* codec;     /* codec spec, e.g. "fp8e4m3", "nvfp4+rht"; "none" = exact */
  const char* transport; /* "auto", "ucx", "mpi", "local" (ranks as threads of one process) */
  const char* algorithm; /* allreduce: "sra" (scatter-reduce-allgather), "ring", "hier", "gather" */
  size_t minBytes;       /* messages smaller than this go exact; QCCL_MIN_BYTES_AUTO */
  int errorFeedback;     /* 1 on, 0 off */
  int efDtype;           /* residual storage: qcclFloat32 or qcclBfloat16 */
  int timeoutMs;         /* the longest any wait may last before the call fails */
  int groupSize;         /* "hier": ranks per group (exact inside, compressed across) */
  float efDecay;         /* error-feedback decay beta in [0, 1] (docs/ERROR_FEEDBACK.md) */
} qcclConfig_t;

#define QCCL_CONFIG_MAGIC 0x71636366u
#define QCCL_CONFIG_INITIALIZER                                                   \
  {                                                                               \
    sizeof(qcclConfig_t), QCCL_CONFIG_MAGIC, QCCL_VERSION_CODE, NULL, NULL, NULL, \
        QCCL_CONFIG_UNDEF_SIZE, QCCL_CONFIG_UNDEF_INT, QCCL_CONFIG_UNDEF_INT,     \
        QCCL_CONFIG_UNDEF_INT, QCCL_CONFIG_UNDEF_INT, QCCL_CONFIG_UNDEF_FLOAT     \
  }

/* Per-call settings for the ...Ex collectives. Append-only, like qcclConfig_t. */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  const char* codec; /* NULL: the communicator's codec */
  uint64_t efKey;    /* error-feedback state key; 0: derived from (sendbuff, count, dtype) */
  unsigned int flags;
  float efDecay; /* error-feedback decay; QCCL_CONFIG_UNDEF_FLOAT: the communicator's */
} qcclCallConfig_t;

#define QCCL_CALL_EXACT 0x1u          /* no compression for this call */
#define QCCL_CALL_NO_EF 0x2u          /* no error feedback for this call */
#define QCCL_CALL_KEEP_OWN_SHARD 0x4u /* allgather: keep the own shard exact (not replicated) */
#define QCCL_CALL_DELTA                                            \
  0x8u /* allgather: recvbuff holds the previous result; each rank \
          sends its shard's change (docs/ALGORITHMS.md) */
/* compressed whatever its size: QCCL_MIN_BYTES and the cost model do not decide (codec, dtype, op
 * and QCCL_OPS still do), for callers whose codec is part of their algorithm (an outer loop's
 * sparse pseudo-gradient, docs/API.md) */
#define QCCL_CALL_COMPRESS 0x10u

#define QCCL_CALL_CONFIG_MAGIC 0x71636363u
#define QCCL_CALL_CONFIG_INITIALIZER                                                 \
  {                                                                                  \
    sizeof(qcclCallConfig_t), QCCL_CALL_CONFIG_MAGIC, QCCL_VERSION_CODE, NULL, 0, 0, \
        QCCL_CONFIG_UNDEF_FLOAT                                                      \
  }

/* QCCL_VERSION_CODE of the library actually loaded. */
qcclResult_t qcclGetVersion(int* version);

/* A new unique id; the calling process hosts the bootstrap root until all ranks have joined. */
qcclResult_t qcclGetUniqueId(qcclUniqueId* uniqueId);

qcclResult_t qcclCommInitRank(qcclComm_t* comm, int nranks, qcclUniqueId commId, int rank);
qcclResult_t qcclCommInitRankConfig(qcclComm_t* comm, int nranks, qcclUniqueId commId, int rank,
                                    qcclConfig_t* config);
/* Rank, size and unique id from the launcher's environment: qcclrun (QCCL_RANK, QCCL_WORLD_SIZE,
 * QCCL_COMM_ID), torchrun (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), or Open MPI
 * (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE). config may be NULL. */
qcclResult_t qcclCommInitFromEnv(qcclComm_t* comm, qcclConfig_t* config);
/* A communicator over an application's NCCL communicator (an ncclComm_t), for device buffers:
 * qccl's collectives move their bytes through it, on the caller's stream. It stays the
 * application's: qcclCommDestroy leaves it alone, and it must outlive the qccl communicator.
 * Rank and size are NCCL's. config may be NULL (docs/API.md). */
struct ncclComm;
qcclResult_t qcclCommInitFromNccl(qcclComm_t* comm, struct ncclComm* ncclComm,
                                  qcclConfig_t* config);
/* Waits for the peers (a barrier), then releases nothing: call qcclCommDestroy after. */
qcclResult_t qcclCommFinalize(qcclComm_t comm);
qcclResult_t qcclCommDestroy(qcclComm_t comm);
/* Stops the communicator at once, also while another thread is inside a call on it. */
qcclResult_t qcclCommAbort(qcclComm_t comm);

/* Elastic communicators (docs/RELIABILITY.md, "Elastic communicators"), ncclCommShrink's meaning:
 * the ranks of comm not left out make a new communicator of themselves, renumbered in order;
 * each of them calls it, the ranks left out do not. It works on a communicator whose last call
 * failed because peers were lost (qcclRemoteError, qcclTimeout), and on a healthy one. The
 * survivors agree, without the lost ranks' help, on whom to leave out: every caller's
 * excludeRanksList, the ranks whose connections failed, and the ranks that did not join within
 * QCCL_TIMEOUT; so a survivor that does not know who is gone passes an empty list. config NULL:
 * the parent's settings. The parent stays (failed or not) until qcclCommDestroy. The new
 * communicator's error-feedback state starts empty. */
#define QCCL_SHRINK_DEFAULT 0x00
#define QCCL_SHRINK_ABORT 0x01 /* cancel the parent's point-to-point messages in flight first */
qcclResult_t qcclCommShrink(qcclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                            qcclComm_t* newcomm, qcclConfig_t* config, int shrinkFlags);
/* Growing, ncclCommGrow's meaning (NCCL 2.30): new ranks join a running communicator between
 * calls. One member gets a fresh id from qcclCommGetUniqueId (its process hosts the id's
 * bootstrap root) and the application hands it to the new processes (a store, a file); then each
 * member calls qcclCommGrow(comm, nRanks, &id on that member and NULL on the others, -1, ...) and
 * each new process qcclCommGrow(NULL, nRanks, &id, rank, ...) with rank in [old size, nRanks).
 * Members keep their ranks. The id carries a fresh secret: a process that does not prove it is
 * refused and logged, and the others go on. An id is consumed by the grow its member passes it
 * to, whatever the outcome, and a communicator gives no new one while its last is unconsumed.
 * config NULL: the parent's settings (a new rank's: the environment's). The parent stays until
 * qcclCommDestroy; the new communicator's error-feedback state starts empty. */
qcclResult_t qcclCommGetUniqueId(qcclComm_t comm, qcclUniqueId* uniqueId);
qcclResult_t qcclCommGrow(qcclComm_t comm, int nRanks, const qcclUniqueId* uniqueId, int rank,
                          qcclComm_t* newcomm, qcclConfig_t* config);
qcclResult_t qcclCommCount(const qcclComm_t comm, int* count);
qcclResult_t qcclCommUserRank(const qcclComm_t comm, int* rank);

/* Collectives, with NCCL's signatures. Host buffers take a NULL stream and the call returns when
 * it is complete; device buffers run on `stream` (NULL: the legacy default stream), and the call
 * returns once the work is enqueued, as NCCL's do (docs/API.md, "Device buffers"). */
qcclResult_t qcclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           qcclDataType_t datatype, qcclRedOp_t op, qcclComm_t comm,
                           cudaStream_t stream);
qcclResult_t qcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               qcclDataType_t datatype, qcclRedOp_t op, qcclComm_t comm,
                               cudaStream_t stream);
qcclResult_t qcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           qcclDataType_t datatype, qcclComm_t comm, cudaStream_t stream);
qcclResult_t qcclAllReduceEx(const void* sendbuff, void* recvbuff, size_t count,
                             qcclDataType_t datatype, qcclRedOp_t op, qcclComm_t comm,
                             cudaStream_t stream, const qcclCallConfig_t* config);
qcclResult_t qcclReduceScatterEx(const void* sendbuff, void* recvbuff, size_t recvcount,
                                 qcclDataType_t datatype, qcclRedOp_t op, qcclComm_t comm,
                                 cudaStream_t stream, const qcclCallConfig_t* config);
qcclResult_t qcclAllGatherEx(const void* sendbuff, void* recvbuff, size_t sendcount,
                             qcclDataType_t datatype, qcclComm_t comm, cudaStream_t stream,
                             const qcclCallConfig_t* config);

/* qccl extension: shared-mask collectives (docs/ALGORITHMS.md, "Shared-mask collectives"). mask is
 * a bitmap over the whole buffer's nranks * shard elements (element i: bit i % 8 of byte i / 8)
 * that every rank holds the same; only the values under it travel, no index, in the call's codec
 * with error feedback over the whole buffer's coordinates (config as for qcclReduceScatterEx /
 * qcclAllGatherEx; QCCL_CALL_DELTA and QCCL_CALL_KEEP_OWN_SHARD do not apply). recvbuff is written
 * at the mask's elements only. A mask that differs between ranks is refused on every rank
 * (qcclInvalidUsage), nothing written. Host buffers; fp32, bf16, fp16; reduce-scatter: qcclSum or
 * qcclAvg. */
qcclResult_t qcclMaskedReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                     qcclDataType_t datatype, qcclRedOp_t op, const uint8_t* mask,
                                     qcclComm_t comm, cudaStream_t stream,
                                     const qcclCallConfig_t* config);
qcclResult_t qcclMaskedAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                 qcclDataType_t datatype, const uint8_t* mask, qcclComm_t comm,
                                 cudaStream_t stream, const qcclCallConfig_t* config);

/* qccl extension: the shared-mask collectives' mask exchange: each rank's mask of its own shard
 * (shardcount bits) to every rank, assembled into mask (nranks * shardcount bits, rank r's from
 * bit r * shardcount), asynchronously, so that it overlaps a step. Start posts the messages and
 * returns (shardMask may be reused at once; mask is written by then for the own shard, by
 * completion for the others'); Test says whether it completed, Wait waits for it, at most
 * QCCL_TIMEOUT per message; both free the exchange once it completed or failed. Each shard's mask
 * travels as a bitmap or as its set positions (4 bytes each), whichever is smaller. tag: as
 * qcclIsend's, used by nothing else between Start and completion. Host buffers. */
typedef struct qcclMaskExchange* qcclMaskExchange_t;
qcclResult_t qcclMaskExchangeStart(const uint8_t* shardMask, uint8_t* mask, size_t shardcount,
                                   unsigned int tag, qcclComm_t comm, qcclMaskExchange_t* exchange);
qcclResult_t qcclMaskExchangeTest(qcclMaskExchange_t exchange, int* done);
qcclResult_t qcclMaskExchangeWait(qcclMaskExchange_t exchange);

/* NCCL's ncclReduce: the allreduce of the call (compressed as qcclAllReduce would be), written
 * into recvbuff at the root only. Host buffers (docs/API.md). */
qcclResult_t qcclReduce(const void* sendbuff, void* recvbuff, size_t count, qcclDataType_t datatype,
                        qcclRedOp_t op, int root, qcclComm_t comm, cudaStream_t stream);
qcclResult_t qcclReduceEx(const void* sendbuff, void* recvbuff, size_t count,
                          qcclDataType_t datatype, qcclRedOp_t op, int root, qcclComm_t comm,
                          cudaStream_t stream, const qcclCallConfig_t* config);

/* Exact (uncompressed) collectives. qcclGather and qcclScatter (NCCL's): count elements per rank;
 * the root's recvbuff (gather) or sendbuff (scatter) holds nranks blocks. */
qcclResult_t qcclGather(const void* sendbuff, void* recvbuff, size_t count, qcclDataType_t datatype,
                        int root, qcclComm_t comm, cudaStream_t stream);
qcclResult_t qcclScatter(const void* sendbuff, void* recvbuff, size_t count,
                         qcclDataType_t datatype, int root, qcclComm_t comm, cudaStream_t stream);
qcclResult_t qcclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           qcclDataType_t datatype, int root, qcclComm_t comm, cudaStream_t stream);
qcclResult_t qcclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                          qcclDataType_t datatype, qcclComm_t comm, cudaStream_t stream);
qcclResult_t qcclBarrier(qcclComm_t comm, cudaStream_t stream);

/* Point-to-point, NCCL's: host buffers over the host transport. Alone, each call returns when its
 * message is complete; between qcclGroupStart and qcclGroupEnd they are posted together at
 * qcclGroupEnd, which returns when all are complete (two ranks may send to each other in one
 * group). Collectives inside a group run when called. Messages between two ranks match in order. */
qcclResult_t qcclSend(const void* sendbuff, size_t count, qcclDataType_t datatype, int peer,
                      qcclComm_t comm, cudaStream_t stream);
qcclResult_t qcclRecv(void* recvbuff, size_t count, qcclDataType_t datatype, int peer,
                      qcclComm_t comm, cudaStream_t stream);
qcclResult_t qcclGroupStart(void);
qcclResult_t qcclGroupEnd(void);

/* qccl extension: non-blocking point-to-point with a tag (0 .. 2^24 - 1; qcclSend and qcclRecv use
 * 0), matched in order per (peer, tag) as MPI's and gloo's are. sendbuff is copied at once;
 * recvbuff is written when the request completes. qcclTest sets *done and, once done or failed,
 * frees the request; qcclWait waits for it, at most QCCL_TIMEOUT (then the communicator has
 * failed). A receive that meets another
 * dtype or count fails with qcclInvalidUsage, its buffer untouched. */
typedef struct qcclRequest* qcclRequest_t;
qcclResult_t qcclIsend(const void* sendbuff, size_t count, qcclDataType_t datatype, int peer,
                       unsigned int tag, qcclComm_t comm, qcclRequest_t* request);
qcclResult_t qcclIrecv(void* recvbuff, size_t count, qcclDataType_t datatype, int peer,
                       unsigned int tag, qcclComm_t comm, qcclRequest_t* request);
/* A receive from whichever rank sends under `tag` (MPI_ANY_SOURCE's meaning; gloo's
 * recvAnysource): it takes a message of its tag that no receive from a named source claims, when it
 * is tested or waited for, oldest such receive first. *source (if not NULL) is written with the
 * sender's rank when the request completes. Not inside groups (NCCL has no such receive). */
qcclResult_t qcclIrecvAnySource(void* recvbuff, size_t count, qcclDataType_t datatype,
                                unsigned int tag, qcclComm_t comm, int* source,
                                qcclRequest_t* request);
qcclResult_t qcclTest(qcclRequest_t request, int* done);
qcclResult_t qcclWait(qcclRequest_t request);
/* Abandons a pending request and frees it. As with MPI_Cancel, a message already on its way may
 * still arrive: it is then matched by the next receive from that peer under that tag. */
qcclResult_t qcclCancel(qcclRequest_t request);

/* Error-feedback state, per key (0 = all keys). Save/load carry it through a checkpoint. */
qcclResult_t qcclEfReset(qcclComm_t comm, uint64_t key);
qcclResult_t qcclEfStateSize(qcclComm_t comm, size_t* bytes);
qcclResult_t qcclEfStateSave(qcclComm_t comm, void* buffer, size_t bytes);
qcclResult_t qcclEfStateLoad(qcclComm_t comm, const void* buffer, size_t bytes);

/* Whether the communicator has failed, without waiting, as ncclCommGetAsyncError: qcclSuccess,
 * or the error that failed it. Device calls return before their kernels run: a received chunk
 * that does not match what the device decode expects (ranks that disagree on codec or count)
 * shows here as qcclInvalidUsage, and fails every later call on the communicator. */
qcclResult_t qcclCommGetAsyncError(qcclComm_t comm, qcclResult_t* asyncError);

/* qccl extension: the bytes this rank's collectives have sent and received so far (message
 * headers included), for bandwidth accounting. Either pointer may be NULL. */
qcclResult_t qcclCommWireBytes(const qcclComm_t comm, uint64_t* sent, uint64_t* received);

/* qccl extension: the cost model's prediction (docs/PERFORMANCE.md, "The cost model") for a
 * collective of this shape on this communicator's host transport, compressed with `codec` (NULL:
 * the communicator's) and exact, and the size of the larger buffer from which QCCL_MIN_BYTES=auto
 * compresses such calls. collective: "allreduce", "reducescatter" or "allgather"; count as that
 * collective takes it. The first prediction or auto-decided call for a codec on a communicator
 * measures the link and this host's codec throughput: like a collective, every rank calls it at
 * the same time, with the same arguments. */
typedef struct {
  double compressedSeconds;
  double exactSeconds;
  uint64_t compressedWireBytes; /* sent by the busiest rank, headers included */
  uint64_t exactWireBytes;
  size_t autoMinBytes; /* SIZE_MAX: the compressed call is never predicted faster */
} qcclPrediction_t;
qcclResult_t qcclCommPredict(qcclComm_t comm, const char* collective, size_t count,
                             qcclDataType_t datatype, const char* codec,
                             qcclPrediction_t* prediction);

/* A static string naming the result code. */
const char* qcclGetErrorString(qcclResult_t result);

/* The message of the last error raised by a qccl call on this thread ("" if none). As in NCCL,
 * comm may be NULL. */
const char* qcclGetLastError(qcclComm_t comm);

#ifdef __cplusplus
}
#endif

#endif /* QCCL_QCCL_H_ */
